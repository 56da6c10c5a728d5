from __future__ import annotations
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.drain_request import DrainRequest
from ...models.node_view import NodeView
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: DrainRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/nodes/{name}/drain".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | NodeView | None:
    if response.status_code == 200:
        response_200 = NodeView.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = ApiError.from_dict(response.json())

        return response_404

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
) -> Response[ApiError | NodeView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainRequest,
) -> Response[ApiError | NodeView]:
    """Drain a node (admins only): nothing new starts there; running jobs finish, or with
    `now` are requeued through the preemption path (checkpoint signal, grace, no retry
    used). A drained node stays drained across restarts until resumed.

    Args:
        name (str):
        body (DrainRequest): `POST /api/nodes/{name}/drain` (admins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | NodeView]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainRequest,
) -> ApiError | NodeView | None:
    """Drain a node (admins only): nothing new starts there; running jobs finish, or with
    `now` are requeued through the preemption path (checkpoint signal, grace, no retry
    used). A drained node stays drained across restarts until resumed.

    Args:
        name (str):
        body (DrainRequest): `POST /api/nodes/{name}/drain` (admins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | NodeView
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainRequest,
) -> Response[ApiError | NodeView]:
    """Drain a node (admins only): nothing new starts there; running jobs finish, or with
    `now` are requeued through the preemption path (checkpoint signal, grace, no retry
    used). A drained node stays drained across restarts until resumed.

    Args:
        name (str):
        body (DrainRequest): `POST /api/nodes/{name}/drain` (admins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | NodeView]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: DrainRequest,
) -> ApiError | NodeView | None:
    """Drain a node (admins only): nothing new starts there; running jobs finish, or with
    `now` are requeued through the preemption path (checkpoint signal, grace, no retry
    used). A drained node stays drained across restarts until resumed.

    Args:
        name (str):
        body (DrainRequest): `POST /api/nodes/{name}/drain` (admins).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | NodeView
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
