from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt_ref import AttemptRef
    from ..models.desired_power_caps import DesiredPowerCaps
    from ..models.launch import Launch
    from ..models.preempt_order import PreemptOrder
    from ..models.queued_known import QueuedKnown
    from ..models.queued_launch import QueuedLaunch
    from ..models.step_launch import StepLaunch


T = TypeVar("T", bound="Desired")


@_attrs_define
class Desired:
    """What the server wants a node to be doing.

    Attributes:
        cancel (list[AttemptRef]): Attempts to stop (SIGTERM, grace, SIGKILL) and report as cancelled.
        gen (int):
        run (list[Launch]): Attempts that should run (start any not seen before). An attempt running on the
            node but absent here and from `cancel` is no longer wanted and is stopped.
        epoch (int | Unset): The leader's epoch when it said this (0: a server from before leader election).
            An agent refuses desired state of an epoch older than the highest it has seen: a
            deposed leader must not steer it.
        power_caps (DesiredPowerCaps | Unset): The power limit each GPU should have, milliwatts, by GPU index (`gpusched
            serve
            --gpu-power-cap`, docs/power.md); a GPU not listed keeps its default limit. An
            addition needing no new protocol: `Desired` is read without
            `deny_unknown_fields`, so an agent of an older release ignores it, and a server
            sends it only when a cap is set. Such an agent's GPUs keep their default limit,
            which the server cannot tell from the protocol: a power budget counts caps that
            only agents of this release apply (docs/power.md).
        preempt (list[PreemptOrder] | Unset): Attempts to preempt: the checkpoint signal, the grace to save, then stop;
            they
            end `preempted` and the server requeues them.
        queued (list[QueuedLaunch] | Unset): Attempts queued behind others on this node (protocol 3), each to start on
            the
            GPUs of `after` as soon as `after` ends by itself ([`Outcome::follows`]), with no
            round of the server in between; an attempt queued here is wanted like one in
            `run`. Chains are listed first follower first.
        queued_known (list[QueuedKnown] | Unset): Attempts queued as in `queued` whose launch the agent already holds,
            likewise.
        reserve_ports (list[AttemptRef] | Unset): Attempts whose first part runs here: reserve a free port for
            `MASTER_PORT`, hold
            it until the part starts, and report it ([`RunEventKind::PortReserved`]); the
            parts of the gang are launched once it is known.
        run_known (list[AttemptRef] | Unset): Attempts wanted as in `run` whose launch the agent already holds,
            unchanged, from
            the state of [`PollQuery::have`] or before (only in answers to a poll naming
            one). An agent that does not hold one asks again without `have`.
        steps (list[StepLaunch] | Unset): Job steps to run here (protocol 6): each is started once, and its tasks are
            killed as soon as it is no longer listed.
    """

    cancel: list[AttemptRef]
    gen: int
    run: list[Launch]
    epoch: int | Unset = UNSET
    power_caps: DesiredPowerCaps | Unset = UNSET
    preempt: list[PreemptOrder] | Unset = UNSET
    queued: list[QueuedLaunch] | Unset = UNSET
    queued_known: list[QueuedKnown] | Unset = UNSET
    reserve_ports: list[AttemptRef] | Unset = UNSET
    run_known: list[AttemptRef] | Unset = UNSET
    steps: list[StepLaunch] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancel = []
        for cancel_item_data in self.cancel:
            cancel_item = cancel_item_data.to_dict()
            cancel.append(cancel_item)

        gen = self.gen

        run = []
        for run_item_data in self.run:
            run_item = run_item_data.to_dict()
            run.append(run_item)

        epoch = self.epoch

        power_caps: dict[str, Any] | Unset = UNSET
        if not isinstance(self.power_caps, Unset):
            power_caps = self.power_caps.to_dict()

        preempt: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.preempt, Unset):
            preempt = []
            for preempt_item_data in self.preempt:
                preempt_item = preempt_item_data.to_dict()
                preempt.append(preempt_item)

        queued: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.queued, Unset):
            queued = []
            for queued_item_data in self.queued:
                queued_item = queued_item_data.to_dict()
                queued.append(queued_item)

        queued_known: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.queued_known, Unset):
            queued_known = []
            for queued_known_item_data in self.queued_known:
                queued_known_item = queued_known_item_data.to_dict()
                queued_known.append(queued_known_item)

        reserve_ports: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.reserve_ports, Unset):
            reserve_ports = []
            for reserve_ports_item_data in self.reserve_ports:
                reserve_ports_item = reserve_ports_item_data.to_dict()
                reserve_ports.append(reserve_ports_item)

        run_known: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.run_known, Unset):
            run_known = []
            for run_known_item_data in self.run_known:
                run_known_item = run_known_item_data.to_dict()
                run_known.append(run_known_item)

        steps: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.steps, Unset):
            steps = []
            for steps_item_data in self.steps:
                steps_item = steps_item_data.to_dict()
                steps.append(steps_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancel": cancel,
                "gen": gen,
                "run": run,
            }
        )
        if epoch is not UNSET:
            field_dict["epoch"] = epoch
        if power_caps is not UNSET:
            field_dict["power_caps"] = power_caps
        if preempt is not UNSET:
            field_dict["preempt"] = preempt
        if queued is not UNSET:
            field_dict["queued"] = queued
        if queued_known is not UNSET:
            field_dict["queued_known"] = queued_known
        if reserve_ports is not UNSET:
            field_dict["reserve_ports"] = reserve_ports
        if run_known is not UNSET:
            field_dict["run_known"] = run_known
        if steps is not UNSET:
            field_dict["steps"] = steps

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attempt_ref import AttemptRef
        from ..models.desired_power_caps import DesiredPowerCaps
        from ..models.launch import Launch
        from ..models.preempt_order import PreemptOrder
        from ..models.queued_known import QueuedKnown
        from ..models.queued_launch import QueuedLaunch
        from ..models.step_launch import StepLaunch

        d = dict(src_dict)
        cancel = []
        _cancel = d.pop("cancel")
        for cancel_item_data in _cancel:
            cancel_item = AttemptRef.from_dict(cancel_item_data)

            cancel.append(cancel_item)

        gen = d.pop("gen")

        run = []
        _run = d.pop("run")
        for run_item_data in _run:
            run_item = Launch.from_dict(run_item_data)

            run.append(run_item)

        epoch = d.pop("epoch", UNSET)

        _power_caps = d.pop("power_caps", UNSET)
        power_caps: DesiredPowerCaps | Unset
        if isinstance(_power_caps, Unset):
            power_caps = UNSET
        else:
            power_caps = DesiredPowerCaps.from_dict(_power_caps)

        _preempt = d.pop("preempt", UNSET)
        preempt: list[PreemptOrder] | Unset = UNSET
        if _preempt is not UNSET:
            preempt = []
            for preempt_item_data in _preempt:
                preempt_item = PreemptOrder.from_dict(preempt_item_data)

                preempt.append(preempt_item)

        _queued = d.pop("queued", UNSET)
        queued: list[QueuedLaunch] | Unset = UNSET
        if _queued is not UNSET:
            queued = []
            for queued_item_data in _queued:
                queued_item = QueuedLaunch.from_dict(queued_item_data)

                queued.append(queued_item)

        _queued_known = d.pop("queued_known", UNSET)
        queued_known: list[QueuedKnown] | Unset = UNSET
        if _queued_known is not UNSET:
            queued_known = []
            for queued_known_item_data in _queued_known:
                queued_known_item = QueuedKnown.from_dict(queued_known_item_data)

                queued_known.append(queued_known_item)

        _reserve_ports = d.pop("reserve_ports", UNSET)
        reserve_ports: list[AttemptRef] | Unset = UNSET
        if _reserve_ports is not UNSET:
            reserve_ports = []
            for reserve_ports_item_data in _reserve_ports:
                reserve_ports_item = AttemptRef.from_dict(reserve_ports_item_data)

                reserve_ports.append(reserve_ports_item)

        _run_known = d.pop("run_known", UNSET)
        run_known: list[AttemptRef] | Unset = UNSET
        if _run_known is not UNSET:
            run_known = []
            for run_known_item_data in _run_known:
                run_known_item = AttemptRef.from_dict(run_known_item_data)

                run_known.append(run_known_item)

        _steps = d.pop("steps", UNSET)
        steps: list[StepLaunch] | Unset = UNSET
        if _steps is not UNSET:
            steps = []
            for steps_item_data in _steps:
                steps_item = StepLaunch.from_dict(steps_item_data)

                steps.append(steps_item)

        desired = cls(
            cancel=cancel,
            gen=gen,
            run=run,
            epoch=epoch,
            power_caps=power_caps,
            preempt=preempt,
            queued=queued,
            queued_known=queued_known,
            reserve_ports=reserve_ports,
            run_known=run_known,
            steps=steps,
        )

        desired.additional_properties = d
        return desired

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
