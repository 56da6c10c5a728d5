from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.account_view import AccountView


T = TypeVar("T", bound="AccountList")


@_attrs_define
class AccountList:
    """Every account, depth first from the root, siblings in the order the scheduler ranks
    them (best first).

        Attributes:
            accounts (list[AccountView]):
            half_life_s (int): Usage halves this often, seconds.
            policy (str): The server's policy: the standings order jobs only under `fairtree`.
    """

    accounts: list[AccountView]
    half_life_s: int
    policy: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accounts = []
        for accounts_item_data in self.accounts:
            accounts_item = accounts_item_data.to_dict()
            accounts.append(accounts_item)

        half_life_s = self.half_life_s

        policy = self.policy

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accounts": accounts,
                "half_life_s": half_life_s,
                "policy": policy,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_view import AccountView

        d = dict(src_dict)
        accounts = []
        _accounts = d.pop("accounts")
        for accounts_item_data in _accounts:
            accounts_item = AccountView.from_dict(accounts_item_data)

            accounts.append(accounts_item)

        half_life_s = d.pop("half_life_s")

        policy = d.pop("policy")

        account_list = cls(
            accounts=accounts,
            half_life_s=half_life_s,
            policy=policy,
        )

        account_list.additional_properties = d
        return account_list

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
