from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.cancel_many import CancelMany
from ...models.cancel_many_result import CancelManyResult
from ...types import Response


def _get_kwargs(
    *,
    body: CancelMany,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/jobs/cancel",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | CancelManyResult | None:
    if response.status_code == 200:
        response_200 = CancelManyResult.from_dict(response.json())

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
) -> Response[ApiError | CancelManyResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CancelMany,
) -> Response[ApiError | CancelManyResult]:
    """Cancel several jobs at once, in one transaction: GPUs freed by one of them never go to
    another of them. Each id gets its own result; one that cannot be cancelled (unknown,
    another user's) is `refused` with the reason while the others are still cancelled.

    Args:
        body (CancelMany): `POST /api/jobs/cancel`: several jobs cancelled in one request and one
            transaction,
            so GPUs freed by one of them never go to another before its cancel arrives.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | CancelManyResult]
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
    body: CancelMany,
) -> ApiError | CancelManyResult | None:
    """Cancel several jobs at once, in one transaction: GPUs freed by one of them never go to
    another of them. Each id gets its own result; one that cannot be cancelled (unknown,
    another user's) is `refused` with the reason while the others are still cancelled.

    Args:
        body (CancelMany): `POST /api/jobs/cancel`: several jobs cancelled in one request and one
            transaction,
            so GPUs freed by one of them never go to another before its cancel arrives.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | CancelManyResult
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CancelMany,
) -> Response[ApiError | CancelManyResult]:
    """Cancel several jobs at once, in one transaction: GPUs freed by one of them never go to
    another of them. Each id gets its own result; one that cannot be cancelled (unknown,
    another user's) is `refused` with the reason while the others are still cancelled.

    Args:
        body (CancelMany): `POST /api/jobs/cancel`: several jobs cancelled in one request and one
            transaction,
            so GPUs freed by one of them never go to another before its cancel arrives.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | CancelManyResult]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CancelMany,
) -> ApiError | CancelManyResult | None:
    """Cancel several jobs at once, in one transaction: GPUs freed by one of them never go to
    another of them. Each id gets its own result; one that cannot be cancelled (unknown,
    another user's) is `refused` with the reason while the others are still cancelled.

    Args:
        body (CancelMany): `POST /api/jobs/cancel`: several jobs cancelled in one request and one
            transaction,
            so GPUs freed by one of them never go to another before its cancel arrives.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | CancelManyResult
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
