from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..models.serve_protocol import ServeProtocol
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.autoscale import Autoscale
    from ..models.job_submit import JobSubmit
    from ..models.model_config import ModelConfig
    from ..models.probe import Probe
    from ..models.rollout import Rollout


T = TypeVar("T", bound="ServiceSpec")


@_attrs_define
class ServiceSpec:
    """A service to run: `POST /api/services` creates it, `PUT /api/services/{name}` rolls
    out a new version of it (every field but `name` may change).

        Attributes:
            name (str): 1-63 lowercase letters, digits and `-`, starting with a letter (it names the
                service in URLs, metrics labels and the gateway's routes).
            replica (JobSubmit): One job to run.
            autoscale (Autoscale | None | Unset):
            liveness (None | Probe | Unset):
            models (list[ModelConfig] | Unset): The models the service serves (the gateway routes a request for a model to
                the
                service that lists it); default: one model named as the service, unbatched.
            protocol (ServeProtocol | Unset): The protocol replicas speak.
            readiness (None | Probe | Unset):
            replicas (int | None | Unset): Replicas to keep when the service does not autoscale (default 1). With
                `autoscale`, the number it starts with (clamped to its bounds).
            rollout (Rollout | Unset): How a new version rolls out (Kubernetes' rolling update, in replicas).
    """

    name: str
    replica: JobSubmit
    autoscale: Autoscale | None | Unset = UNSET
    liveness: None | Probe | Unset = UNSET
    models: list[ModelConfig] | Unset = UNSET
    protocol: ServeProtocol | Unset = UNSET
    readiness: None | Probe | Unset = UNSET
    replicas: int | None | Unset = UNSET
    rollout: Rollout | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.autoscale import Autoscale
        from ..models.probe import Probe

        name = self.name

        replica = self.replica.to_dict()

        autoscale: dict[str, Any] | None | Unset
        if isinstance(self.autoscale, Unset):
            autoscale = UNSET
        elif isinstance(self.autoscale, Autoscale):
            autoscale = self.autoscale.to_dict()
        else:
            autoscale = self.autoscale

        liveness: dict[str, Any] | None | Unset
        if isinstance(self.liveness, Unset):
            liveness = UNSET
        elif isinstance(self.liveness, Probe):
            liveness = self.liveness.to_dict()
        else:
            liveness = self.liveness

        models: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.models, Unset):
            models = []
            for models_item_data in self.models:
                models_item = models_item_data.to_dict()
                models.append(models_item)

        protocol: str | Unset = UNSET
        if not isinstance(self.protocol, Unset):
            protocol = self.protocol.value

        readiness: dict[str, Any] | None | Unset
        if isinstance(self.readiness, Unset):
            readiness = UNSET
        elif isinstance(self.readiness, Probe):
            readiness = self.readiness.to_dict()
        else:
            readiness = self.readiness

        replicas: int | None | Unset
        if isinstance(self.replicas, Unset):
            replicas = UNSET
        else:
            replicas = self.replicas

        rollout: dict[str, Any] | Unset = UNSET
        if not isinstance(self.rollout, Unset):
            rollout = self.rollout.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "replica": replica,
            }
        )
        if autoscale is not UNSET:
            field_dict["autoscale"] = autoscale
        if liveness is not UNSET:
            field_dict["liveness"] = liveness
        if models is not UNSET:
            field_dict["models"] = models
        if protocol is not UNSET:
            field_dict["protocol"] = protocol
        if readiness is not UNSET:
            field_dict["readiness"] = readiness
        if replicas is not UNSET:
            field_dict["replicas"] = replicas
        if rollout is not UNSET:
            field_dict["rollout"] = rollout

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.autoscale import Autoscale
        from ..models.job_submit import JobSubmit
        from ..models.model_config import ModelConfig
        from ..models.probe import Probe
        from ..models.rollout import Rollout

        d = dict(src_dict)
        name = d.pop("name")

        replica = JobSubmit.from_dict(d.pop("replica"))

        def _parse_autoscale(data: object) -> Autoscale | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                autoscale_type_1 = Autoscale.from_dict(data)

                return autoscale_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("Autoscale | None | Unset", data)

        autoscale = _parse_autoscale(d.pop("autoscale", UNSET))

        def _parse_liveness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                liveness_type_1 = Probe.from_dict(data)

                return liveness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Probe | Unset", data)

        liveness = _parse_liveness(d.pop("liveness", UNSET))

        _models = d.pop("models", UNSET)
        models: list[ModelConfig] | Unset = UNSET
        if _models is not UNSET:
            models = []
            for models_item_data in _models:
                models_item = ModelConfig.from_dict(models_item_data)

                models.append(models_item)

        _protocol = d.pop("protocol", UNSET)
        protocol: ServeProtocol | Unset
        if isinstance(_protocol, Unset):
            protocol = UNSET
        else:
            protocol = ServeProtocol(_protocol)

        def _parse_readiness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                readiness_type_1 = Probe.from_dict(data)

                return readiness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Probe | Unset", data)

        readiness = _parse_readiness(d.pop("readiness", UNSET))

        def _parse_replicas(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        replicas = _parse_replicas(d.pop("replicas", UNSET))

        _rollout = d.pop("rollout", UNSET)
        rollout: Rollout | Unset
        if isinstance(_rollout, Unset):
            rollout = UNSET
        else:
            rollout = Rollout.from_dict(_rollout)

        service_spec = cls(
            name=name,
            replica=replica,
            autoscale=autoscale,
            liveness=liveness,
            models=models,
            protocol=protocol,
            readiness=readiness,
            replicas=replicas,
            rollout=rollout,
        )

        return service_spec
