from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.service_spec import ServiceSpec
from ...models.service_view import ServiceView
from ...types import Response


def _get_kwargs(
    *,
    body: ServiceSpec,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/services",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | ServiceView | None:
    if response.status_code == 201:
        response_201 = ServiceView.from_dict(response.json())

        return response_201

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
) -> Response[ApiError | ServiceView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ServiceSpec,
) -> Response[ApiError | ServiceView]:
    """Create a service: its replicas (each a job made from `replica`, checked as a
    submission is) start, are probed, and take traffic through gateways once ready.
    409 when the name is taken or no node could ever hold a replica.

    Args:
        body (ServiceSpec): A service to run: `POST /api/services` creates it, `PUT
            /api/services/{name}` rolls
            out a new version of it (every field but `name` may change).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | ServiceView]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: ServiceSpec,
) -> ApiError | ServiceView | None:
    """Create a service: its replicas (each a job made from `replica`, checked as a
    submission is) start, are probed, and take traffic through gateways once ready.
    409 when the name is taken or no node could ever hold a replica.

    Args:
        body (ServiceSpec): A service to run: `POST /api/services` creates it, `PUT
            /api/services/{name}` rolls
            out a new version of it (every field but `name` may change).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | ServiceView
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: ServiceSpec,
) -> Response[ApiError | ServiceView]:
    """Create a service: its replicas (each a job made from `replica`, checked as a
    submission is) start, are probed, and take traffic through gateways once ready.
    409 when the name is taken or no node could ever hold a replica.

    Args:
        body (ServiceSpec): A service to run: `POST /api/services` creates it, `PUT
            /api/services/{name}` rolls
            out a new version of it (every field but `name` may change).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | ServiceView]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: ServiceSpec,
) -> ApiError | ServiceView | None:
    """Create a service: its replicas (each a job made from `replica`, checked as a
    submission is) start, are probed, and take traffic through gateways once ready.
    409 when the name is taken or no node could ever hold a replica.

    Args:
        body (ServiceSpec): A service to run: `POST /api/services` creates it, `PUT
            /api/services/{name}` rolls
            out a new version of it (every field but `name` may change).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | ServiceView
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
