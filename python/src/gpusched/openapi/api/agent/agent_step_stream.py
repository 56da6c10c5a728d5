from __future__ import annotations
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...types import UNSET, Response


def _get_kwargs(
    id: int,
    step: int,
    *,
    node: str,
    upgrade: str,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["Upgrade"] = upgrade

    params: dict[str, Any] = {}

    params["node"] = node

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/agent/steps/{id}/{step}".format(
            id=quote(str(id), safe=""),
            step=quote(str(step), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ApiError | None:
    if response.status_code == 101:
        response_101 = cast(Any, None)
        return response_101

    if response.status_code == 307:
        response_307 = ApiError.from_dict(response.json())

        return response_307

    if response.status_code == 400:
        response_400 = ApiError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ApiError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ApiError.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ApiError.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ApiError.from_dict(response.json())

        return response_409

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | ApiError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: int,
    step: int,
    *,
    client: AuthenticatedClient | Client,
    node: str,
    upgrade: str,
) -> Response[Any | ApiError]:
    """An agent opens the stream of a step its node runs (`Desired::steps`); the answer is
    `101`, then step frames both ways.

    Args:
        id (int):
        step (int):
        node (str):
        upgrade (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ApiError]
    """

    kwargs = _get_kwargs(
        id=id,
        step=step,
        node=node,
        upgrade=upgrade,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    step: int,
    *,
    client: AuthenticatedClient | Client,
    node: str,
    upgrade: str,
) -> Any | ApiError | None:
    """An agent opens the stream of a step its node runs (`Desired::steps`); the answer is
    `101`, then step frames both ways.

    Args:
        id (int):
        step (int):
        node (str):
        upgrade (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ApiError
    """

    return sync_detailed(
        id=id,
        step=step,
        client=client,
        node=node,
        upgrade=upgrade,
    ).parsed


async def asyncio_detailed(
    id: int,
    step: int,
    *,
    client: AuthenticatedClient | Client,
    node: str,
    upgrade: str,
) -> Response[Any | ApiError]:
    """An agent opens the stream of a step its node runs (`Desired::steps`); the answer is
    `101`, then step frames both ways.

    Args:
        id (int):
        step (int):
        node (str):
        upgrade (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ApiError]
    """

    kwargs = _get_kwargs(
        id=id,
        step=step,
        node=node,
        upgrade=upgrade,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    step: int,
    *,
    client: AuthenticatedClient | Client,
    node: str,
    upgrade: str,
) -> Any | ApiError | None:
    """An agent opens the stream of a step its node runs (`Desired::steps`); the answer is
    `101`, then step frames both ways.

    Args:
        id (int):
        step (int):
        node (str):
        upgrade (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ApiError
    """

    return (
        await asyncio_detailed(
            id=id,
            step=step,
            client=client,
            node=node,
            upgrade=upgrade,
        )
    ).parsed
