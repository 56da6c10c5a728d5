from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.batching import Batching


T = TypeVar("T", bound="ModelConfig")


@_attrs_define
class ModelConfig:
    """One model a service serves, and how the gateway batches its inference requests
    (Open Inference Protocol only).

        Attributes:
            name (str): The model's name in `/v2/models/{name}` (or the OpenAI `model` field).
            batching (Batching | None | Unset):
    """

    name: str
    batching: Batching | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.batching import Batching

        name = self.name

        batching: dict[str, Any] | None | Unset
        if isinstance(self.batching, Unset):
            batching = UNSET
        elif isinstance(self.batching, Batching):
            batching = self.batching.to_dict()
        else:
            batching = self.batching

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if batching is not UNSET:
            field_dict["batching"] = batching

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.batching import Batching

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_batching(data: object) -> Batching | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                batching_type_1 = Batching.from_dict(data)

                return batching_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("Batching | None | Unset", data)

        batching = _parse_batching(d.pop("batching", UNSET))

        model_config = cls(
            name=name,
            batching=batching,
        )

        return model_config
