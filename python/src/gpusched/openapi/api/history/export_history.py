from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.history_page import HistoryPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    before: int | Unset = UNSET,
    since_ms: int | Unset = UNSET,
    user: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["before"] = before

    params["since_ms"] = since_ms

    params["user"] = user

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/history/jobs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | HistoryPage | None:
    if response.status_code == 200:
        response_200 = HistoryPage.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | HistoryPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    before: int | Unset = UNSET,
    since_ms: int | Unset = UNSET,
    user: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | HistoryPage]:
    """The ended jobs that ran (succeeded, failed, cancelled or timed out after starting),
    newest first, a page at a time, with the run-time predictor's features: user, queue,
    name, command, GPUs, GPU model, walltime. Without `user`, a user's own jobs (an
    admin's: everyone's). Another user's jobs come as the job list shows them: without
    their commands (`command` empty; only their owner and admins see it), and none at all
    under `--private-jobs`.

    Args:
        before (int | Unset):
        since_ms (int | Unset):
        user (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | HistoryPage]
    """

    kwargs = _get_kwargs(
        before=before,
        since_ms=since_ms,
        user=user,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    before: int | Unset = UNSET,
    since_ms: int | Unset = UNSET,
    user: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | HistoryPage | None:
    """The ended jobs that ran (succeeded, failed, cancelled or timed out after starting),
    newest first, a page at a time, with the run-time predictor's features: user, queue,
    name, command, GPUs, GPU model, walltime. Without `user`, a user's own jobs (an
    admin's: everyone's). Another user's jobs come as the job list shows them: without
    their commands (`command` empty; only their owner and admins see it), and none at all
    under `--private-jobs`.

    Args:
        before (int | Unset):
        since_ms (int | Unset):
        user (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | HistoryPage
    """

    return sync_detailed(
        client=client,
        before=before,
        since_ms=since_ms,
        user=user,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    before: int | Unset = UNSET,
    since_ms: int | Unset = UNSET,
    user: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | HistoryPage]:
    """The ended jobs that ran (succeeded, failed, cancelled or timed out after starting),
    newest first, a page at a time, with the run-time predictor's features: user, queue,
    name, command, GPUs, GPU model, walltime. Without `user`, a user's own jobs (an
    admin's: everyone's). Another user's jobs come as the job list shows them: without
    their commands (`command` empty; only their owner and admins see it), and none at all
    under `--private-jobs`.

    Args:
        before (int | Unset):
        since_ms (int | Unset):
        user (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | HistoryPage]
    """

    kwargs = _get_kwargs(
        before=before,
        since_ms=since_ms,
        user=user,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    before: int | Unset = UNSET,
    since_ms: int | Unset = UNSET,
    user: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | HistoryPage | None:
    """The ended jobs that ran (succeeded, failed, cancelled or timed out after starting),
    newest first, a page at a time, with the run-time predictor's features: user, queue,
    name, command, GPUs, GPU model, walltime. Without `user`, a user's own jobs (an
    admin's: everyone's). Another user's jobs come as the job list shows them: without
    their commands (`command` empty; only their owner and admins see it), and none at all
    under `--private-jobs`.

    Args:
        before (int | Unset):
        since_ms (int | Unset):
        user (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | HistoryPage
    """

    return (
        await asyncio_detailed(
            client=client,
            before=before,
            since_ms=since_ms,
            user=user,
            limit=limit,
        )
    ).parsed
