from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.usage_report import UsageReport
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    by: str | Unset = UNSET,
    user: str | Unset = UNSET,
    since_ms: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["by"] = by

    params["user"] = user

    params["since_ms"] = since_ms

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/usage",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | UsageReport | None:
    if response.status_code == 200:
        response_200 = UsageReport.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | UsageReport]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    by: str | Unset = UNSET,
    user: str | Unset = UNSET,
    since_ms: int | Unset = UNSET,
) -> Response[ApiError | UsageReport]:
    """GPU-hours, job counts and mean wait per user (or queue) since a time.

    Args:
        by (str | Unset):
        user (str | Unset):
        since_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | UsageReport]
    """

    kwargs = _get_kwargs(
        by=by,
        user=user,
        since_ms=since_ms,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    by: str | Unset = UNSET,
    user: str | Unset = UNSET,
    since_ms: int | Unset = UNSET,
) -> ApiError | UsageReport | None:
    """GPU-hours, job counts and mean wait per user (or queue) since a time.

    Args:
        by (str | Unset):
        user (str | Unset):
        since_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | UsageReport
    """

    return sync_detailed(
        client=client,
        by=by,
        user=user,
        since_ms=since_ms,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    by: str | Unset = UNSET,
    user: str | Unset = UNSET,
    since_ms: int | Unset = UNSET,
) -> Response[ApiError | UsageReport]:
    """GPU-hours, job counts and mean wait per user (or queue) since a time.

    Args:
        by (str | Unset):
        user (str | Unset):
        since_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | UsageReport]
    """

    kwargs = _get_kwargs(
        by=by,
        user=user,
        since_ms=since_ms,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    by: str | Unset = UNSET,
    user: str | Unset = UNSET,
    since_ms: int | Unset = UNSET,
) -> ApiError | UsageReport | None:
    """GPU-hours, job counts and mean wait per user (or queue) since a time.

    Args:
        by (str | Unset):
        user (str | Unset):
        since_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | UsageReport
    """

    return (
        await asyncio_detailed(
            client=client,
            by=by,
            user=user,
            since_ms=since_ms,
        )
    ).parsed
