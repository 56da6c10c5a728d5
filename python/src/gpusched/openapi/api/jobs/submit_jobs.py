from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.batch_submit import BatchSubmit
from ...models.submitted import Submitted
from ...types import Response


def _get_kwargs(
    *,
    body: BatchSubmit,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/jobs/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | Submitted | None:
    if response.status_code == 201:
        response_201 = Submitted.from_dict(response.json())

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

    if response.status_code == 429:
        response_429 = ApiError.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | Submitted]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchSubmit,
) -> Response[ApiError | Submitted]:
    """Submit many jobs in one transaction: all are accepted or none. Over a limit of the
    server: 400 (batch, command or environment size), 403 (pending jobs per user), 413
    (body size), 429 (submit rate).

    Args:
        body (BatchSubmit): Many jobs in one call, accepted (or refused) together in one
            transaction.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Submitted]
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
    body: BatchSubmit,
) -> ApiError | Submitted | None:
    """Submit many jobs in one transaction: all are accepted or none. Over a limit of the
    server: 400 (batch, command or environment size), 403 (pending jobs per user), 413
    (body size), 429 (submit rate).

    Args:
        body (BatchSubmit): Many jobs in one call, accepted (or refused) together in one
            transaction.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Submitted
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchSubmit,
) -> Response[ApiError | Submitted]:
    """Submit many jobs in one transaction: all are accepted or none. Over a limit of the
    server: 400 (batch, command or environment size), 403 (pending jobs per user), 413
    (body size), 429 (submit rate).

    Args:
        body (BatchSubmit): Many jobs in one call, accepted (or refused) together in one
            transaction.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Submitted]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: BatchSubmit,
) -> ApiError | Submitted | None:
    """Submit many jobs in one transaction: all are accepted or none. Over a limit of the
    server: 400 (batch, command or environment size), 403 (pending jobs per user), 413
    (body size), 429 (submit rate).

    Args:
        body (BatchSubmit): Many jobs in one call, accepted (or refused) together in one
            transaction.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Submitted
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
