from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.register import Register
from ...models.registered import Registered
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: Register,
    x_gpusched_agent_protocol: int | None | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(x_gpusched_agent_protocol, Unset):
        headers["x-gpusched-agent-protocol"] = x_gpusched_agent_protocol

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/agent/register",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | Registered | None:
    if response.status_code == 200:
        response_200 = Registered.from_dict(response.json())

        return response_200

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

    if response.status_code == 409:
        response_409 = ApiError.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ApiError.from_dict(response.json())

        return response_413

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | Registered]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Register,
    x_gpusched_agent_protocol: int | None | Unset = UNSET,
) -> Response[ApiError | Registered]:
    """An agent joins (or re-joins) and reconciles what it runs with what the server knows.
    An agent of a protocol the server cannot serve is refused (409) with both versions
    and what to upgrade.

    Args:
        x_gpusched_agent_protocol (int | None | Unset):
        body (Register): `POST /api/agent/register`: sent when the agent starts and whenever the
            server does
            not know it (the server restarted).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Registered]
    """

    kwargs = _get_kwargs(
        body=body,
        x_gpusched_agent_protocol=x_gpusched_agent_protocol,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: Register,
    x_gpusched_agent_protocol: int | None | Unset = UNSET,
) -> ApiError | Registered | None:
    """An agent joins (or re-joins) and reconciles what it runs with what the server knows.
    An agent of a protocol the server cannot serve is refused (409) with both versions
    and what to upgrade.

    Args:
        x_gpusched_agent_protocol (int | None | Unset):
        body (Register): `POST /api/agent/register`: sent when the agent starts and whenever the
            server does
            not know it (the server restarted).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Registered
    """

    return sync_detailed(
        client=client,
        body=body,
        x_gpusched_agent_protocol=x_gpusched_agent_protocol,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Register,
    x_gpusched_agent_protocol: int | None | Unset = UNSET,
) -> Response[ApiError | Registered]:
    """An agent joins (or re-joins) and reconciles what it runs with what the server knows.
    An agent of a protocol the server cannot serve is refused (409) with both versions
    and what to upgrade.

    Args:
        x_gpusched_agent_protocol (int | None | Unset):
        body (Register): `POST /api/agent/register`: sent when the agent starts and whenever the
            server does
            not know it (the server restarted).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Registered]
    """

    kwargs = _get_kwargs(
        body=body,
        x_gpusched_agent_protocol=x_gpusched_agent_protocol,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: Register,
    x_gpusched_agent_protocol: int | None | Unset = UNSET,
) -> ApiError | Registered | None:
    """An agent joins (or re-joins) and reconciles what it runs with what the server knows.
    An agent of a protocol the server cannot serve is refused (409) with both versions
    and what to upgrade.

    Args:
        x_gpusched_agent_protocol (int | None | Unset):
        body (Register): `POST /api/agent/register`: sent when the agent starts and whenever the
            server does
            not know it (the server restarted).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Registered
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            x_gpusched_agent_protocol=x_gpusched_agent_protocol,
        )
    ).parsed
