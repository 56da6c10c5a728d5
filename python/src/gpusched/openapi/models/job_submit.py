from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..models.job_submit_mig_type_1 import JobSubmitMigType1
from ..models.job_submit_mig_type_2_type_1 import JobSubmitMigType2Type1
from ..models.job_submit_mig_type_3_type_1 import JobSubmitMigType3Type1
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.array_spec import ArraySpec
    from ..models.job_submit_env import JobSubmitEnv
    from ..models.job_submit_resources import JobSubmitResources


T = TypeVar("T", bound="JobSubmit")


@_attrs_define
class JobSubmit:
    """One job to run.

    Attributes:
        command (list[str]): Program and arguments, run directly (no shell). Use `["sh", "-c", "..."]` for a
            shell line. The program (first item) must not be empty; no item may hold a NUL.
        account (None | str | Unset): The account to charge (docs/accounts.md): one of the caller's; default: the
            caller's default account.
        after (list[int] | Unset): Start only after these jobs have succeeded (Slurm's `afterok`); if one of them
            fails, is cancelled or times out, this job fails too.
        after_any (list[int] | Unset): Start only after these jobs have ended, however they ended (Slurm's `afterany`).
        after_notok (list[int] | Unset): Start only after these jobs have ended without succeeding (Slurm's
            `afternotok`:
            failed, cancelled or timed out); if one of them succeeds, this job is cancelled.
        array (ArraySpec | None | Unset):
        client_token (None | str | Unset): A client-chosen key that makes a retried submission idempotent: a second
            submission with the same key returns the first job instead of a new one.
        constraint (None | str | Unset): Node features the job's nodes must have, Slurm's syntax: `a100&nvlink`,
            `a100|h100`, `!slow`, parentheses (docs/partitions.md).
        cpus (float | None | Unset): CPUs (may be fractional) and memory (MiB) the job needs: its node holds them for
            it while it runs (a node whose CPUs or memory are taken starts no job that needs
            them), and `drf` weighs them in its dominant share. Where the node's agent has
            cgroups they are also the job's CPU quota and memory limit (`NodeView`'s
            containment says what each node enforces). Absent: nothing reserved.
        cwd (None | str | Unset): Working directory on the node, an absolute path; the CLI sends the submitter's
            current directory, and the default is `/`.
        deadline_ms (int | None | Unset): When it must be finished, Unix milliseconds (`--deadline`; docs/deadlines.md):
            the
            answer to the submission says whether its estimate meets it, the `edf` policies
            order by it, and a queue with `refuse_late_deadlines` refuses one it cannot meet.
        env (JobSubmitEnv | Unset): Extra environment variables for the job (added to the agent's environment).
        exclude (list[str] | Unset): Never run on these nodes (Slurm's `--exclude`).
        gpu_mem (None | str | Unset): A share of one GPU by memory: MiB, or a size such as `20GiB` (see `parse_mib`).
        gpu_model (None | str | Unset): Accepted GPU model prefix, e.g. `A100` or `H100-80GB`.
        gpu_share (float | None | Unset): A share of one GPU's compute, above 0 and at most 1 (e.g. 0.25), in
            thousandths
            (rounded; anything above 0 gets at least 0.001; 1 is one whole GPU).
        gpus (int | None | Unset): Whole GPUs, all on one node (default 1 unless a share or MIG profile is asked);
            0 for a job without GPUs (a CPU-only step of a pipeline: it sees no GPU and runs
            on any node with room for its `cpus`, `mem_mib` and `resources`).
            At most one of `gpus`, `gpu_share`, `gpu_mem` and `mig` may be given.
        gpus_max (int | None | Unset): Makes it elastic (`--gpus MIN-MAX`; docs/elastic.md): it runs on `gpus` to
            `gpus_max` whole GPUs of one node. It waits for `gpus`, starts on more where its
            node has them idle, gives them back when a waiting job needs them and grows into
            GPUs that free up, each resize through the checkpoint contract (it restarts with
            the new `CUDA_VISIBLE_DEVICES`). At least `gpus`; not with a gang, a GPU share or
            MIG slice, or an interactive allocation.
        gpus_per_node (int | None | Unset): Whole GPUs on each node of a gang (with `nodes`); `gpus` is then their
            product.
        hold (bool | Unset): Submit held: the job waits, whatever its turn, until `release` (Slurm's `-H`).
        image (None | str | Unset): Run the command in this container image (`docker.io/library/python:3.12`, a
            SIF path for apptainer nodes), as the submitter, with its working directory,
            checkpoint directory and GPUs; only on nodes whose agent runs images
            (docs/containers.md). No whitespace or control characters; absent: a host
            process.
        interactive (bool | Unset): An interactive allocation (`gpusched alloc`): the agent holds the GPUs with no
            process of the job's own, steps run in it (`gpusched run --jobid`), and its
            idle GPUs are watched (docs/interactive.md). `command` is then a label only.
        max_retries (int | None | Unset): How many times a job whose node was lost is put back in the queue.
        mem_mib (int | None | Unset):
        mig (JobSubmitMigType1 | JobSubmitMigType2Type1 | JobSubmitMigType3Type1 | None | Unset): One MIG instance of
            this profile, e.g. `1g.10gb` or `3g.40gb`.
        mixed_models (bool | Unset): A gang's nodes may have different GPU models (default: all the same model).
        name (None | str | Unset): A name to recognise the job by; defaults to the program's file name. Not empty,
            without control characters (C0, DEL, C1, bidirectional marks and overrides,
            line separators): it is printed on terminals.
        nodelist (list[str] | Unset): Run only on these nodes (Slurm's `--nodelist`: a gang uses nodes of this list).
        nodes (int | None | Unset): Run on this many nodes at once (a gang), `gpus_per_node` whole GPUs on each; all
            parts start together or none does. Default 1.
        partitions (list[str] | Unset): Partitions the job may run in, in order of preference: it runs on the nodes of
            the first that can hold it, never outside them (docs/partitions.md). Absent: the
            queue's default partition, else any node.
        pids_max (int | None | Unset): The most processes and threads the job may have at once on each node (cgroup
            `pids.max`; default: the node's). At least 1.
        priority (int | None | Unset): Larger runs earlier under the `priority` policy (default: the queue's default).
        queue (None | str | Unset): The queue (default: `default`, or the first queue the user may use).
        reservation (None | str | Unset): Run inside this advance reservation, only in its window
            (docs/reservations.md).
        resources (JobSubmitResources | Unset): Generic counted resources the job needs on its node, by name (`{"fpga":
            1}`):
            it waits until a node that declares them (`gpusched agent --resource fpga=2`)
            has them free, and gets `GPUSCHED_RESOURCE_FPGA=1` in its environment. Names are
            1-32 lowercase letters, digits and `_`, starting with a letter; at most 16.
        scaling_serial (float | None | Unset): An elastic job's scaling: the share of its step that does not speed up
            with more
            GPUs (Amdahl's serial fraction), in [0, 1); default 0.05. Where idle GPUs go
            first, and whether a grow pays for its restart, follow from it.
        speedup (None | str | Unset): How much faster than a V100 it runs on GPU models: `H100=2.8,A100=1.6` (model
            prefixes as `gpu_model`; docs/heterogeneous.md). Where several models are free
            it goes to the one where it gains most.
        split (bool | Unset): Let the scheduler split `gpus` into equal parts on as few nodes as it can (16 may
            run as 2 x 8 or 4 x 4); without it, `gpus` must fit one node.
        tasks_per_node (int | None | Unset): Processes the agent starts on each node, each with its own rank and GPUs
            (must
            divide the GPUs per node); default one process per node (e.g. `torchrun`).
        user (None | str | Unset): Whose job it is (and the Unix user it runs as); default: the caller. Only an
            admin may name another user.
        walltime_s (int | None | Unset): Run-time limit in seconds; the job is stopped (SIGTERM, grace, SIGKILL) and
            ends
            `timed_out` when it passes it. At most 366 days.
    """

    command: list[str]
    account: None | str | Unset = UNSET
    after: list[int] | Unset = UNSET
    after_any: list[int] | Unset = UNSET
    after_notok: list[int] | Unset = UNSET
    array: ArraySpec | None | Unset = UNSET
    client_token: None | str | Unset = UNSET
    constraint: None | str | Unset = UNSET
    cpus: float | None | Unset = UNSET
    cwd: None | str | Unset = UNSET
    deadline_ms: int | None | Unset = UNSET
    env: JobSubmitEnv | Unset = UNSET
    exclude: list[str] | Unset = UNSET
    gpu_mem: None | str | Unset = UNSET
    gpu_model: None | str | Unset = UNSET
    gpu_share: float | None | Unset = UNSET
    gpus: int | None | Unset = UNSET
    gpus_max: int | None | Unset = UNSET
    gpus_per_node: int | None | Unset = UNSET
    hold: bool | Unset = UNSET
    image: None | str | Unset = UNSET
    interactive: bool | Unset = UNSET
    max_retries: int | None | Unset = UNSET
    mem_mib: int | None | Unset = UNSET
    mig: (
        JobSubmitMigType1
        | JobSubmitMigType2Type1
        | JobSubmitMigType3Type1
        | None
        | Unset
    ) = UNSET
    mixed_models: bool | Unset = UNSET
    name: None | str | Unset = UNSET
    nodelist: list[str] | Unset = UNSET
    nodes: int | None | Unset = UNSET
    partitions: list[str] | Unset = UNSET
    pids_max: int | None | Unset = UNSET
    priority: int | None | Unset = UNSET
    queue: None | str | Unset = UNSET
    reservation: None | str | Unset = UNSET
    resources: JobSubmitResources | Unset = UNSET
    scaling_serial: float | None | Unset = UNSET
    speedup: None | str | Unset = UNSET
    split: bool | Unset = UNSET
    tasks_per_node: int | None | Unset = UNSET
    user: None | str | Unset = UNSET
    walltime_s: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.array_spec import ArraySpec

        command = []
        for command_item_data in self.command:
            command_item: str
            command_item = command_item_data
            command.append(command_item)

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

        client_token: None | str | Unset
        if isinstance(self.client_token, Unset):
            client_token = UNSET
        else:
            client_token = self.client_token

        constraint: None | str | Unset
        if isinstance(self.constraint, Unset):
            constraint = UNSET
        else:
            constraint = self.constraint

        cpus: float | None | Unset
        if isinstance(self.cpus, Unset):
            cpus = UNSET
        else:
            cpus = self.cpus

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        deadline_ms: int | None | Unset
        if isinstance(self.deadline_ms, Unset):
            deadline_ms = UNSET
        else:
            deadline_ms = self.deadline_ms

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        exclude: list[str] | Unset = UNSET
        if not isinstance(self.exclude, Unset):
            exclude = self.exclude

        gpu_mem: None | str | Unset
        if isinstance(self.gpu_mem, Unset):
            gpu_mem = UNSET
        else:
            gpu_mem = self.gpu_mem

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        gpu_share: float | None | Unset
        if isinstance(self.gpu_share, Unset):
            gpu_share = UNSET
        else:
            gpu_share = self.gpu_share

        gpus: int | None | Unset
        if isinstance(self.gpus, Unset):
            gpus = UNSET
        else:
            gpus = self.gpus

        gpus_max: int | None | Unset
        if isinstance(self.gpus_max, Unset):
            gpus_max = UNSET
        else:
            gpus_max = self.gpus_max

        gpus_per_node: int | None | Unset
        if isinstance(self.gpus_per_node, Unset):
            gpus_per_node = UNSET
        else:
            gpus_per_node = self.gpus_per_node

        hold = self.hold

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        interactive = self.interactive

        max_retries: int | None | Unset
        if isinstance(self.max_retries, Unset):
            max_retries = UNSET
        else:
            max_retries = self.max_retries

        mem_mib: int | None | Unset
        if isinstance(self.mem_mib, Unset):
            mem_mib = UNSET
        else:
            mem_mib = self.mem_mib

        mig: None | str | Unset
        if isinstance(self.mig, Unset):
            mig = UNSET
        elif (
            isinstance(self.mig, JobSubmitMigType1)
            or isinstance(self.mig, JobSubmitMigType2Type1)
            or isinstance(self.mig, JobSubmitMigType3Type1)
        ):
            mig = self.mig.value
        else:
            mig = self.mig

        mixed_models = self.mixed_models

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        nodelist: list[str] | Unset = UNSET
        if not isinstance(self.nodelist, Unset):
            nodelist = self.nodelist

        nodes: int | None | Unset
        if isinstance(self.nodes, Unset):
            nodes = UNSET
        else:
            nodes = self.nodes

        partitions: list[str] | Unset = UNSET
        if not isinstance(self.partitions, Unset):
            partitions = self.partitions

        pids_max: int | None | Unset
        if isinstance(self.pids_max, Unset):
            pids_max = UNSET
        else:
            pids_max = self.pids_max

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        reservation: None | str | Unset
        if isinstance(self.reservation, Unset):
            reservation = UNSET
        else:
            reservation = self.reservation

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        scaling_serial: float | None | Unset
        if isinstance(self.scaling_serial, Unset):
            scaling_serial = UNSET
        else:
            scaling_serial = self.scaling_serial

        speedup: None | str | Unset
        if isinstance(self.speedup, Unset):
            speedup = UNSET
        else:
            speedup = self.speedup

        split = self.split

        tasks_per_node: int | None | Unset
        if isinstance(self.tasks_per_node, Unset):
            tasks_per_node = UNSET
        else:
            tasks_per_node = self.tasks_per_node

        user: None | str | Unset
        if isinstance(self.user, Unset):
            user = UNSET
        else:
            user = self.user

        walltime_s: int | None | Unset
        if isinstance(self.walltime_s, Unset):
            walltime_s = UNSET
        else:
            walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "command": command,
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
        if client_token is not UNSET:
            field_dict["client_token"] = client_token
        if constraint is not UNSET:
            field_dict["constraint"] = constraint
        if cpus is not UNSET:
            field_dict["cpus"] = cpus
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms
        if env is not UNSET:
            field_dict["env"] = env
        if exclude is not UNSET:
            field_dict["exclude"] = exclude
        if gpu_mem is not UNSET:
            field_dict["gpu_mem"] = gpu_mem
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if gpu_share is not UNSET:
            field_dict["gpu_share"] = gpu_share
        if gpus is not UNSET:
            field_dict["gpus"] = gpus
        if gpus_max is not UNSET:
            field_dict["gpus_max"] = gpus_max
        if gpus_per_node is not UNSET:
            field_dict["gpus_per_node"] = gpus_per_node
        if hold is not UNSET:
            field_dict["hold"] = hold
        if image is not UNSET:
            field_dict["image"] = image
        if interactive is not UNSET:
            field_dict["interactive"] = interactive
        if max_retries is not UNSET:
            field_dict["max_retries"] = max_retries
        if mem_mib is not UNSET:
            field_dict["mem_mib"] = mem_mib
        if mig is not UNSET:
            field_dict["mig"] = mig
        if mixed_models is not UNSET:
            field_dict["mixed_models"] = mixed_models
        if name is not UNSET:
            field_dict["name"] = name
        if nodelist is not UNSET:
            field_dict["nodelist"] = nodelist
        if nodes is not UNSET:
            field_dict["nodes"] = nodes
        if partitions is not UNSET:
            field_dict["partitions"] = partitions
        if pids_max is not UNSET:
            field_dict["pids_max"] = pids_max
        if priority is not UNSET:
            field_dict["priority"] = priority
        if queue is not UNSET:
            field_dict["queue"] = queue
        if reservation is not UNSET:
            field_dict["reservation"] = reservation
        if resources is not UNSET:
            field_dict["resources"] = resources
        if scaling_serial is not UNSET:
            field_dict["scaling_serial"] = scaling_serial
        if speedup is not UNSET:
            field_dict["speedup"] = speedup
        if split is not UNSET:
            field_dict["split"] = split
        if tasks_per_node is not UNSET:
            field_dict["tasks_per_node"] = tasks_per_node
        if user is not UNSET:
            field_dict["user"] = user
        if walltime_s is not UNSET:
            field_dict["walltime_s"] = walltime_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.array_spec import ArraySpec
        from ..models.job_submit_env import JobSubmitEnv
        from ..models.job_submit_resources import JobSubmitResources

        d = dict(src_dict)
        command = []
        _command = d.pop("command")
        for command_item_data in _command:

            def _parse_command_item(data: object) -> str:
                return cast(str, data)

            command_item = _parse_command_item(command_item_data)

            command.append(command_item)

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

        def _parse_client_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        client_token = _parse_client_token(d.pop("client_token", UNSET))

        def _parse_constraint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        constraint = _parse_constraint(d.pop("constraint", UNSET))

        def _parse_cpus(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        cpus = _parse_cpus(d.pop("cpus", UNSET))

        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))

        def _parse_deadline_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        deadline_ms = _parse_deadline_ms(d.pop("deadline_ms", UNSET))

        _env = d.pop("env", UNSET)
        env: JobSubmitEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = JobSubmitEnv.from_dict(_env)

        exclude = cast(list[str], d.pop("exclude", UNSET))

        def _parse_gpu_mem(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        gpu_mem = _parse_gpu_mem(d.pop("gpu_mem", UNSET))

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))

        def _parse_gpu_share(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        gpu_share = _parse_gpu_share(d.pop("gpu_share", UNSET))

        def _parse_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        gpus = _parse_gpus(d.pop("gpus", UNSET))

        def _parse_gpus_max(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        gpus_max = _parse_gpus_max(d.pop("gpus_max", UNSET))

        def _parse_gpus_per_node(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        gpus_per_node = _parse_gpus_per_node(d.pop("gpus_per_node", UNSET))

        hold = d.pop("hold", UNSET)

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        image = _parse_image(d.pop("image", UNSET))

        interactive = d.pop("interactive", UNSET)

        def _parse_max_retries(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        max_retries = _parse_max_retries(d.pop("max_retries", UNSET))

        def _parse_mem_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        mem_mib = _parse_mem_mib(d.pop("mem_mib", UNSET))

        def _parse_mig(
            data: object,
        ) -> (
            JobSubmitMigType1
            | JobSubmitMigType2Type1
            | JobSubmitMigType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mig_type_1 = JobSubmitMigType1(data)

                return mig_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mig_type_2_type_1 = JobSubmitMigType2Type1(data)

                return mig_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mig_type_3_type_1 = JobSubmitMigType3Type1(data)

                return mig_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                JobSubmitMigType1
                | JobSubmitMigType2Type1
                | JobSubmitMigType3Type1
                | None
                | Unset,
                data,
            )

        mig = _parse_mig(d.pop("mig", UNSET))

        mixed_models = d.pop("mixed_models", UNSET)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        name = _parse_name(d.pop("name", UNSET))

        nodelist = cast(list[str], d.pop("nodelist", UNSET))

        def _parse_nodes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        nodes = _parse_nodes(d.pop("nodes", UNSET))

        partitions = cast(list[str], d.pop("partitions", UNSET))

        def _parse_pids_max(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        pids_max = _parse_pids_max(d.pop("pids_max", UNSET))

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        queue = _parse_queue(d.pop("queue", UNSET))

        def _parse_reservation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        reservation = _parse_reservation(d.pop("reservation", UNSET))

        _resources = d.pop("resources", UNSET)
        resources: JobSubmitResources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = JobSubmitResources.from_dict(_resources)

        def _parse_scaling_serial(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        scaling_serial = _parse_scaling_serial(d.pop("scaling_serial", UNSET))

        def _parse_speedup(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        speedup = _parse_speedup(d.pop("speedup", UNSET))

        split = d.pop("split", UNSET)

        def _parse_tasks_per_node(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        tasks_per_node = _parse_tasks_per_node(d.pop("tasks_per_node", UNSET))

        def _parse_user(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        user = _parse_user(d.pop("user", UNSET))

        def _parse_walltime_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        walltime_s = _parse_walltime_s(d.pop("walltime_s", UNSET))

        job_submit = cls(
            command=command,
            account=account,
            after=after,
            after_any=after_any,
            after_notok=after_notok,
            array=array,
            client_token=client_token,
            constraint=constraint,
            cpus=cpus,
            cwd=cwd,
            deadline_ms=deadline_ms,
            env=env,
            exclude=exclude,
            gpu_mem=gpu_mem,
            gpu_model=gpu_model,
            gpu_share=gpu_share,
            gpus=gpus,
            gpus_max=gpus_max,
            gpus_per_node=gpus_per_node,
            hold=hold,
            image=image,
            interactive=interactive,
            max_retries=max_retries,
            mem_mib=mem_mib,
            mig=mig,
            mixed_models=mixed_models,
            name=name,
            nodelist=nodelist,
            nodes=nodes,
            partitions=partitions,
            pids_max=pids_max,
            priority=priority,
            queue=queue,
            reservation=reservation,
            resources=resources,
            scaling_serial=scaling_serial,
            speedup=speedup,
            split=split,
            tasks_per_node=tasks_per_node,
            user=user,
            walltime_s=walltime_s,
        )

        return job_submit
