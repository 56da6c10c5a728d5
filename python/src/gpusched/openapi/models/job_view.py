from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_state import JobState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.array_counts import ArrayCounts
    from ..models.array_spec import ArraySpec
    from ..models.array_task import ArrayTask
    from ..models.job_deadline import JobDeadline
    from ..models.job_elastic import JobElastic
    from ..models.job_part import JobPart
    from ..models.job_rules import JobRules
    from ..models.job_speed import JobSpeed
    from ..models.job_view_resources import JobViewResources
    from ..models.replica_of import ReplicaOf
    from ..models.slice_ask_type_0 import SliceAskType0
    from ..models.slice_ask_type_1 import SliceAskType1
    from ..models.slice_ask_type_2 import SliceAskType2
    from ..models.slice_at import SliceAt
    from ..models.step_use import StepUse
    from ..models.step_view import StepView
    from ..models.usage import Usage


T = TypeVar("T", bound="JobView")


@_attrs_define
class JobView:
    """A job as the API shows it.

    Attributes:
        attempt (int): 1 for the first run; a job requeued after its node was lost runs again with the
            next attempt number.
        cancel_requested (bool): A cancel was asked for and the node is stopping the job.
        command (list[str]): The program and its arguments; empty in another user's job (a command line may
            hold secrets: only its owner and admins see it).
        cwd (str):
        gpu_indices (list[int]): The node-local GPU indices it holds (or last held).
        gpus (int): Whole GPUs (0 for a job on part of one GPU).
        id (int):
        max_retries (int):
        name (str):
        priority (int):
        reason (str): Why the job is in this state: why it waits, how it ended.
        state (JobState): Where a job is in its life.
        submit_ms (int): Unix times in milliseconds.
        user (str):
        account (None | str | Unset): The account it is charged to (docs/accounts.md); absent: the root (no accounts,
            or a user in none).
        after (list[int] | Unset): Jobs that must succeed before this one starts.
        after_any (list[int] | Unset): Jobs that must end (however they end) before this one starts.
        after_notok (list[int] | Unset): Jobs that must end without succeeding before this one starts.
        array (ArraySpec | None | Unset):
        array_counts (ArrayCounts | None | Unset):
        array_task (ArrayTask | None | Unset):
        cpu_milli (int | Unset): CPUs in thousandths and memory in MiB asked for (0: not said).
        deadline (JobDeadline | None | Unset):
        elastic (JobElastic | None | Unset):
        end_ms (int | None | Unset):
        energy_j (int | None | Unset): Energy its GPUs drew while it held them, Joules, from NVML's energy counters
            (see docs/energy.md); `None` when no sample ever covered it.
        env_keys (list[str] | Unset): The names of the extra environment variables it was given; never their values.
        est_start_ms (int | None | Unset): For a pending job: when it should start (Unix ms) if running jobs end at
            their
            walltimes; absent when that depends on a job without a walltime.
        exit_code (int | None | Unset):
        gpu_model (None | str | Unset):
        gpus_per_node (int | Unset): Whole GPUs on each node (`gpus` / `nodes`; for `split`, 0 until placed).
        held (bool | Unset): Held: it waits until released, whatever its turn.
        idle_gpu_s (int | None | Unset): An interactive allocation's GPU time held idle (every sample of a GPU below its
            queue's idle threshold counts the time since the GPU's previous sample), in
            GPU-seconds; `None` for other jobs and before the first sample. Stored with the
            job's row as it changes state (docs/interactive-alloc.md).
        image (None | str | Unset): The container image its parts run in (`submit --image`); `None`: host processes.
        interactive (bool | Unset): An interactive allocation (`gpusched alloc`): its agents hold its GPUs with no
            process of its own; `command` is a label (docs/interactive-alloc.md).
        last_checkpoint_ms (int | None | Unset): When the current attempt last saved a checkpoint (Unix ms), as its node
            saw it.
        master_port (int | None | Unset): `MASTER_PORT` of the current (or last) attempt, once known.
        mem_mib (int | Unset):
        mixed_models (bool | Unset):
        node (None | str | Unset): The node it runs (or last ran) on.
        nodes (int | Unset): Nodes it runs on at once (1 unless it is a gang; for `split`, 0 until placed).
        parts (list[JobPart] | Unset): Every part of the current (or last) attempt, by `NODE_RANK`; empty while pending.
        pids_max (int | None | Unset): The most processes (and threads) each part may have at once (`None`: the node's
            default). Enforced where the node has a cgroup (`containment` of its node).
        preempt_requested (bool | Unset): A preemption was asked for and the node is stopping the job.
        preemptions (int | Unset): Times it was preempted (each preemption also took an attempt number).
        queue (str | Unset):
        resources (JobViewResources | Unset): Generic counted resources asked for (`fpga: 1`), held on its node while it
            runs.
        rules (JobRules | None | Unset):
        service (None | ReplicaOf | Unset):
        signal (int | None | Unset):
        slice_ (None | SliceAskType0 | SliceAskType1 | SliceAskType2 | Unset):
        slice_at (None | SliceAt | Unset):
        speed (JobSpeed | None | Unset):
        split (bool | Unset): The scheduler chose (or will choose) how to split `gpus` over nodes.
        start_ms (int | None | Unset):
        step_use (None | StepUse | Unset):
        steps (list[StepView] | None | Unset): Its steps (`gpusched run --jobid`), in order; only in the answer for one
            job
            (`GET /api/jobs/{id}`), absent in lists and for a job without steps. Boxed: the
            server keeps a view per live job, and most have none.
        tasks_per_node (int | None | Unset):
        usage (None | Unset | Usage):
        walltime_s (int | None | Unset):
    """

    attempt: int
    cancel_requested: bool
    command: list[str]
    cwd: str
    gpu_indices: list[int]
    gpus: int
    id: int
    max_retries: int
    name: str
    priority: int
    reason: str
    state: JobState
    submit_ms: int
    user: str
    account: None | str | Unset = UNSET
    after: list[int] | Unset = UNSET
    after_any: list[int] | Unset = UNSET
    after_notok: list[int] | Unset = UNSET
    array: ArraySpec | None | Unset = UNSET
    array_counts: ArrayCounts | None | Unset = UNSET
    array_task: ArrayTask | None | Unset = UNSET
    cpu_milli: int | Unset = UNSET
    deadline: JobDeadline | None | Unset = UNSET
    elastic: JobElastic | None | Unset = UNSET
    end_ms: int | None | Unset = UNSET
    energy_j: int | None | Unset = UNSET
    env_keys: list[str] | Unset = UNSET
    est_start_ms: int | None | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    gpu_model: None | str | Unset = UNSET
    gpus_per_node: int | Unset = UNSET
    held: bool | Unset = UNSET
    idle_gpu_s: int | None | Unset = UNSET
    image: None | str | Unset = UNSET
    interactive: bool | Unset = UNSET
    last_checkpoint_ms: int | None | Unset = UNSET
    master_port: int | None | Unset = UNSET
    mem_mib: int | Unset = UNSET
    mixed_models: bool | Unset = UNSET
    node: None | str | Unset = UNSET
    nodes: int | Unset = UNSET
    parts: list[JobPart] | Unset = UNSET
    pids_max: int | None | Unset = UNSET
    preempt_requested: bool | Unset = UNSET
    preemptions: int | Unset = UNSET
    queue: str | Unset = UNSET
    resources: JobViewResources | Unset = UNSET
    rules: JobRules | None | Unset = UNSET
    service: None | ReplicaOf | Unset = UNSET
    signal: int | None | Unset = UNSET
    slice_: None | SliceAskType0 | SliceAskType1 | SliceAskType2 | Unset = UNSET
    slice_at: None | SliceAt | Unset = UNSET
    speed: JobSpeed | None | Unset = UNSET
    split: bool | Unset = UNSET
    start_ms: int | None | Unset = UNSET
    step_use: None | StepUse | Unset = UNSET
    steps: list[StepView] | None | Unset = UNSET
    tasks_per_node: int | None | Unset = UNSET
    usage: None | Unset | Usage = UNSET
    walltime_s: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.array_counts import ArrayCounts
        from ..models.array_spec import ArraySpec
        from ..models.array_task import ArrayTask
        from ..models.job_deadline import JobDeadline
        from ..models.job_elastic import JobElastic
        from ..models.job_rules import JobRules
        from ..models.job_speed import JobSpeed
        from ..models.replica_of import ReplicaOf
        from ..models.slice_ask_type_0 import SliceAskType0
        from ..models.slice_ask_type_1 import SliceAskType1
        from ..models.slice_ask_type_2 import SliceAskType2
        from ..models.slice_at import SliceAt
        from ..models.step_use import StepUse
        from ..models.usage import Usage

        attempt = self.attempt

        cancel_requested = self.cancel_requested

        command = self.command

        cwd = self.cwd

        gpu_indices = self.gpu_indices

        gpus = self.gpus

        id = self.id

        max_retries = self.max_retries

        name = self.name

        priority = self.priority

        reason = self.reason

        state = self.state.value

        submit_ms = self.submit_ms

        user = self.user

        account: None | str | Unset
        if isinstance(self.account, Unset):
            account = UNSET
        else:
            account = self.account

        after: list[int] | Unset = UNSET
        if not isinstance(self.after, Unset):
            after = self.after

        after_any: list[int] | Unset = UNSET
        if not isinstance(self.after_any, Unset):
            after_any = self.after_any

        after_notok: list[int] | Unset = UNSET
        if not isinstance(self.after_notok, Unset):
            after_notok = self.after_notok

        array: dict[str, Any] | None | Unset
        if isinstance(self.array, Unset):
            array = UNSET
        elif isinstance(self.array, ArraySpec):
            array = self.array.to_dict()
        else:
            array = self.array

        array_counts: dict[str, Any] | None | Unset
        if isinstance(self.array_counts, Unset):
            array_counts = UNSET
        elif isinstance(self.array_counts, ArrayCounts):
            array_counts = self.array_counts.to_dict()
        else:
            array_counts = self.array_counts

        array_task: dict[str, Any] | None | Unset
        if isinstance(self.array_task, Unset):
            array_task = UNSET
        elif isinstance(self.array_task, ArrayTask):
            array_task = self.array_task.to_dict()
        else:
            array_task = self.array_task

        cpu_milli = self.cpu_milli

        deadline: dict[str, Any] | None | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, JobDeadline):
            deadline = self.deadline.to_dict()
        else:
            deadline = self.deadline

        elastic: dict[str, Any] | None | Unset
        if isinstance(self.elastic, Unset):
            elastic = UNSET
        elif isinstance(self.elastic, JobElastic):
            elastic = self.elastic.to_dict()
        else:
            elastic = self.elastic

        end_ms: int | None | Unset
        if isinstance(self.end_ms, Unset):
            end_ms = UNSET
        else:
            end_ms = self.end_ms

        energy_j: int | None | Unset
        if isinstance(self.energy_j, Unset):
            energy_j = UNSET
        else:
            energy_j = self.energy_j

        env_keys: list[str] | Unset = UNSET
        if not isinstance(self.env_keys, Unset):
            env_keys = self.env_keys

        est_start_ms: int | None | Unset
        if isinstance(self.est_start_ms, Unset):
            est_start_ms = UNSET
        else:
            est_start_ms = self.est_start_ms

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        gpus_per_node = self.gpus_per_node

        held = self.held

        idle_gpu_s: int | None | Unset
        if isinstance(self.idle_gpu_s, Unset):
            idle_gpu_s = UNSET
        else:
            idle_gpu_s = self.idle_gpu_s

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        interactive = self.interactive

        last_checkpoint_ms: int | None | Unset
        if isinstance(self.last_checkpoint_ms, Unset):
            last_checkpoint_ms = UNSET
        else:
            last_checkpoint_ms = self.last_checkpoint_ms

        master_port: int | None | Unset
        if isinstance(self.master_port, Unset):
            master_port = UNSET
        else:
            master_port = self.master_port

        mem_mib = self.mem_mib

        mixed_models = self.mixed_models

        node: None | str | Unset
        if isinstance(self.node, Unset):
            node = UNSET
        else:
            node = self.node

        nodes = self.nodes

        parts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.parts, Unset):
            parts = []
            for parts_item_data in self.parts:
                parts_item = parts_item_data.to_dict()
                parts.append(parts_item)

        pids_max: int | None | Unset
        if isinstance(self.pids_max, Unset):
            pids_max = UNSET
        else:
            pids_max = self.pids_max

        preempt_requested = self.preempt_requested

        preemptions = self.preemptions

        queue = self.queue

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        rules: dict[str, Any] | None | Unset
        if isinstance(self.rules, Unset):
            rules = UNSET
        elif isinstance(self.rules, JobRules):
            rules = self.rules.to_dict()
        else:
            rules = self.rules

        service: dict[str, Any] | None | Unset
        if isinstance(self.service, Unset):
            service = UNSET
        elif isinstance(self.service, ReplicaOf):
            service = self.service.to_dict()
        else:
            service = self.service

        signal: int | None | Unset
        if isinstance(self.signal, Unset):
            signal = UNSET
        else:
            signal = self.signal

        slice_: dict[str, Any] | None | Unset
        if isinstance(self.slice_, Unset):
            slice_ = UNSET
        elif (
            isinstance(self.slice_, SliceAskType0)
            or isinstance(self.slice_, SliceAskType1)
            or isinstance(self.slice_, SliceAskType2)
        ):
            slice_ = self.slice_.to_dict()
        else:
            slice_ = self.slice_

        slice_at: dict[str, Any] | None | Unset
        if isinstance(self.slice_at, Unset):
            slice_at = UNSET
        elif isinstance(self.slice_at, SliceAt):
            slice_at = self.slice_at.to_dict()
        else:
            slice_at = self.slice_at

        speed: dict[str, Any] | None | Unset
        if isinstance(self.speed, Unset):
            speed = UNSET
        elif isinstance(self.speed, JobSpeed):
            speed = self.speed.to_dict()
        else:
            speed = self.speed

        split = self.split

        start_ms: int | None | Unset
        if isinstance(self.start_ms, Unset):
            start_ms = UNSET
        else:
            start_ms = self.start_ms

        step_use: dict[str, Any] | None | Unset
        if isinstance(self.step_use, Unset):
            step_use = UNSET
        elif isinstance(self.step_use, StepUse):
            step_use = self.step_use.to_dict()
        else:
            step_use = self.step_use

        steps: list[dict[str, Any]] | None | Unset
        if isinstance(self.steps, Unset):
            steps = UNSET
        elif isinstance(self.steps, list):
            steps = []
            for steps_type_0_item_data in self.steps:
                steps_type_0_item = steps_type_0_item_data.to_dict()
                steps.append(steps_type_0_item)

        else:
            steps = self.steps

        tasks_per_node: int | None | Unset
        if isinstance(self.tasks_per_node, Unset):
            tasks_per_node = UNSET
        else:
            tasks_per_node = self.tasks_per_node

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, Usage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        walltime_s: int | None | Unset
        if isinstance(self.walltime_s, Unset):
            walltime_s = UNSET
        else:
            walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "cancel_requested": cancel_requested,
                "command": command,
                "cwd": cwd,
                "gpu_indices": gpu_indices,
                "gpus": gpus,
                "id": id,
                "max_retries": max_retries,
                "name": name,
                "priority": priority,
                "reason": reason,
                "state": state,
                "submit_ms": submit_ms,
                "user": user,
            }
        )
        if account is not UNSET:
            field_dict["account"] = account
        if after is not UNSET:
            field_dict["after"] = after
        if after_any is not UNSET:
            field_dict["after_any"] = after_any
        if after_notok is not UNSET:
            field_dict["after_notok"] = after_notok
        if array is not UNSET:
            field_dict["array"] = array
        if array_counts is not UNSET:
            field_dict["array_counts"] = array_counts
        if array_task is not UNSET:
            field_dict["array_task"] = array_task
        if cpu_milli is not UNSET:
            field_dict["cpu_milli"] = cpu_milli
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if elastic is not UNSET:
            field_dict["elastic"] = elastic
        if end_ms is not UNSET:
            field_dict["end_ms"] = end_ms
        if energy_j is not UNSET:
            field_dict["energy_j"] = energy_j
        if env_keys is not UNSET:
            field_dict["env_keys"] = env_keys
        if est_start_ms is not UNSET:
            field_dict["est_start_ms"] = est_start_ms
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if gpus_per_node is not UNSET:
            field_dict["gpus_per_node"] = gpus_per_node
        if held is not UNSET:
            field_dict["held"] = held
        if idle_gpu_s is not UNSET:
            field_dict["idle_gpu_s"] = idle_gpu_s
        if image is not UNSET:
            field_dict["image"] = image
        if interactive is not UNSET:
            field_dict["interactive"] = interactive
        if last_checkpoint_ms is not UNSET:
            field_dict["last_checkpoint_ms"] = last_checkpoint_ms
        if master_port is not UNSET:
            field_dict["master_port"] = master_port
        if mem_mib is not UNSET:
            field_dict["mem_mib"] = mem_mib
        if mixed_models is not UNSET:
            field_dict["mixed_models"] = mixed_models
        if node is not UNSET:
            field_dict["node"] = node
        if nodes is not UNSET:
            field_dict["nodes"] = nodes
        if parts is not UNSET:
            field_dict["parts"] = parts
        if pids_max is not UNSET:
            field_dict["pids_max"] = pids_max
        if preempt_requested is not UNSET:
            field_dict["preempt_requested"] = preempt_requested
        if preemptions is not UNSET:
            field_dict["preemptions"] = preemptions
        if queue is not UNSET:
            field_dict["queue"] = queue
        if resources is not UNSET:
            field_dict["resources"] = resources
        if rules is not UNSET:
            field_dict["rules"] = rules
        if service is not UNSET:
            field_dict["service"] = service
        if signal is not UNSET:
            field_dict["signal"] = signal
        if slice_ is not UNSET:
            field_dict["slice"] = slice_
        if slice_at is not UNSET:
            field_dict["slice_at"] = slice_at
        if speed is not UNSET:
            field_dict["speed"] = speed
        if split is not UNSET:
            field_dict["split"] = split
        if start_ms is not UNSET:
            field_dict["start_ms"] = start_ms
        if step_use is not UNSET:
            field_dict["step_use"] = step_use
        if steps is not UNSET:
            field_dict["steps"] = steps
        if tasks_per_node is not UNSET:
            field_dict["tasks_per_node"] = tasks_per_node
        if usage is not UNSET:
            field_dict["usage"] = usage
        if walltime_s is not UNSET:
            field_dict["walltime_s"] = walltime_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.array_counts import ArrayCounts
        from ..models.array_spec import ArraySpec
        from ..models.array_task import ArrayTask
        from ..models.job_deadline import JobDeadline
        from ..models.job_elastic import JobElastic
        from ..models.job_part import JobPart
        from ..models.job_rules import JobRules
        from ..models.job_speed import JobSpeed
        from ..models.job_view_resources import JobViewResources
        from ..models.replica_of import ReplicaOf
        from ..models.slice_ask_type_0 import SliceAskType0
        from ..models.slice_ask_type_1 import SliceAskType1
        from ..models.slice_ask_type_2 import SliceAskType2
        from ..models.slice_at import SliceAt
        from ..models.step_use import StepUse
        from ..models.step_view import StepView
        from ..models.usage import Usage

        d = dict(src_dict)
        attempt = d.pop("attempt")

        cancel_requested = d.pop("cancel_requested")

        command = cast(list[str], d.pop("command"))

        cwd = d.pop("cwd")

        gpu_indices = cast(list[int], d.pop("gpu_indices"))

        gpus = d.pop("gpus")

        id = d.pop("id")

        max_retries = d.pop("max_retries")

        name = d.pop("name")

        priority = d.pop("priority")

        reason = d.pop("reason")

        state = JobState(d.pop("state"))

        submit_ms = d.pop("submit_ms")

        user = d.pop("user")

        def _parse_account(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        account = _parse_account(d.pop("account", UNSET))

        after = cast(list[int], d.pop("after", UNSET))

        after_any = cast(list[int], d.pop("after_any", UNSET))

        after_notok = cast(list[int], d.pop("after_notok", UNSET))

        def _parse_array(data: object) -> ArraySpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                array_type_1 = ArraySpec.from_dict(data)

                return array_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("ArraySpec | None | Unset", data)

        array = _parse_array(d.pop("array", UNSET))

        def _parse_array_counts(data: object) -> ArrayCounts | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                array_counts_type_1 = ArrayCounts.from_dict(data)

                return array_counts_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("ArrayCounts | None | Unset", data)

        array_counts = _parse_array_counts(d.pop("array_counts", UNSET))

        def _parse_array_task(data: object) -> ArrayTask | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                array_task_type_1 = ArrayTask.from_dict(data)

                return array_task_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("ArrayTask | None | Unset", data)

        array_task = _parse_array_task(d.pop("array_task", UNSET))

        cpu_milli = d.pop("cpu_milli", UNSET)

        def _parse_deadline(data: object) -> JobDeadline | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                deadline_type_1 = JobDeadline.from_dict(data)

                return deadline_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobDeadline | None | Unset", data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_elastic(data: object) -> JobElastic | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                elastic_type_1 = JobElastic.from_dict(data)

                return elastic_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobElastic | None | Unset", data)

        elastic = _parse_elastic(d.pop("elastic", UNSET))

        def _parse_end_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        end_ms = _parse_end_ms(d.pop("end_ms", UNSET))

        def _parse_energy_j(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        energy_j = _parse_energy_j(d.pop("energy_j", UNSET))

        env_keys = cast(list[str], d.pop("env_keys", UNSET))

        def _parse_est_start_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        est_start_ms = _parse_est_start_ms(d.pop("est_start_ms", UNSET))

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))

        gpus_per_node = d.pop("gpus_per_node", UNSET)

        held = d.pop("held", UNSET)

        def _parse_idle_gpu_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        idle_gpu_s = _parse_idle_gpu_s(d.pop("idle_gpu_s", UNSET))

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        image = _parse_image(d.pop("image", UNSET))

        interactive = d.pop("interactive", UNSET)

        def _parse_last_checkpoint_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        last_checkpoint_ms = _parse_last_checkpoint_ms(
            d.pop("last_checkpoint_ms", UNSET)
        )

        def _parse_master_port(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        master_port = _parse_master_port(d.pop("master_port", UNSET))

        mem_mib = d.pop("mem_mib", UNSET)

        mixed_models = d.pop("mixed_models", UNSET)

        def _parse_node(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        node = _parse_node(d.pop("node", UNSET))

        nodes = d.pop("nodes", UNSET)

        _parts = d.pop("parts", UNSET)
        parts: list[JobPart] | Unset = UNSET
        if _parts is not UNSET:
            parts = []
            for parts_item_data in _parts:
                parts_item = JobPart.from_dict(parts_item_data)

                parts.append(parts_item)

        def _parse_pids_max(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        pids_max = _parse_pids_max(d.pop("pids_max", UNSET))

        preempt_requested = d.pop("preempt_requested", UNSET)

        preemptions = d.pop("preemptions", UNSET)

        queue = d.pop("queue", UNSET)

        _resources = d.pop("resources", UNSET)
        resources: JobViewResources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = JobViewResources.from_dict(_resources)

        def _parse_rules(data: object) -> JobRules | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rules_type_1 = JobRules.from_dict(data)

                return rules_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobRules | None | Unset", data)

        rules = _parse_rules(d.pop("rules", UNSET))

        def _parse_service(data: object) -> None | ReplicaOf | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                service_type_1 = ReplicaOf.from_dict(data)

                return service_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | ReplicaOf | Unset", data)

        service = _parse_service(d.pop("service", UNSET))

        def _parse_signal(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        signal = _parse_signal(d.pop("signal", UNSET))

        def _parse_slice_(
            data: object,
        ) -> None | SliceAskType0 | SliceAskType1 | SliceAskType2 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_slice_ask_type_0 = SliceAskType0.from_dict(data)

                return componentsschemas_slice_ask_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_slice_ask_type_1 = SliceAskType1.from_dict(data)

                return componentsschemas_slice_ask_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_slice_ask_type_2 = SliceAskType2.from_dict(data)

                return componentsschemas_slice_ask_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | SliceAskType0 | SliceAskType1 | SliceAskType2 | Unset, data
            )

        slice_ = _parse_slice_(d.pop("slice", UNSET))

        def _parse_slice_at(data: object) -> None | SliceAt | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slice_at_type_1 = SliceAt.from_dict(data)

                return slice_at_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | SliceAt | Unset", data)

        slice_at = _parse_slice_at(d.pop("slice_at", UNSET))

        def _parse_speed(data: object) -> JobSpeed | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                speed_type_1 = JobSpeed.from_dict(data)

                return speed_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobSpeed | None | Unset", data)

        speed = _parse_speed(d.pop("speed", UNSET))

        split = d.pop("split", UNSET)

        def _parse_start_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        start_ms = _parse_start_ms(d.pop("start_ms", UNSET))

        def _parse_step_use(data: object) -> None | StepUse | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                step_use_type_1 = StepUse.from_dict(data)

                return step_use_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | StepUse | Unset", data)

        step_use = _parse_step_use(d.pop("step_use", UNSET))

        def _parse_steps(data: object) -> list[StepView] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                steps_type_0 = []
                _steps_type_0 = data
                for steps_type_0_item_data in _steps_type_0:
                    steps_type_0_item = StepView.from_dict(steps_type_0_item_data)

                    steps_type_0.append(steps_type_0_item)

                return steps_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("list[StepView] | None | Unset", data)

        steps = _parse_steps(d.pop("steps", UNSET))

        def _parse_tasks_per_node(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        tasks_per_node = _parse_tasks_per_node(d.pop("tasks_per_node", UNSET))

        def _parse_usage(data: object) -> None | Unset | Usage:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_1 = Usage.from_dict(data)

                return usage_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Unset | Usage", data)

        usage = _parse_usage(d.pop("usage", UNSET))

        def _parse_walltime_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        walltime_s = _parse_walltime_s(d.pop("walltime_s", UNSET))

        job_view = cls(
            attempt=attempt,
            cancel_requested=cancel_requested,
            command=command,
            cwd=cwd,
            gpu_indices=gpu_indices,
            gpus=gpus,
            id=id,
            max_retries=max_retries,
            name=name,
            priority=priority,
            reason=reason,
            state=state,
            submit_ms=submit_ms,
            user=user,
            account=account,
            after=after,
            after_any=after_any,
            after_notok=after_notok,
            array=array,
            array_counts=array_counts,
            array_task=array_task,
            cpu_milli=cpu_milli,
            deadline=deadline,
            elastic=elastic,
            end_ms=end_ms,
            energy_j=energy_j,
            env_keys=env_keys,
            est_start_ms=est_start_ms,
            exit_code=exit_code,
            gpu_model=gpu_model,
            gpus_per_node=gpus_per_node,
            held=held,
            idle_gpu_s=idle_gpu_s,
            image=image,
            interactive=interactive,
            last_checkpoint_ms=last_checkpoint_ms,
            master_port=master_port,
            mem_mib=mem_mib,
            mixed_models=mixed_models,
            node=node,
            nodes=nodes,
            parts=parts,
            pids_max=pids_max,
            preempt_requested=preempt_requested,
            preemptions=preemptions,
            queue=queue,
            resources=resources,
            rules=rules,
            service=service,
            signal=signal,
            slice_=slice_,
            slice_at=slice_at,
            speed=speed,
            split=split,
            start_ms=start_ms,
            step_use=step_use,
            steps=steps,
            tasks_per_node=tasks_per_node,
            usage=usage,
            walltime_s=walltime_s,
        )

        job_view.additional_properties = d
        return job_view

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
