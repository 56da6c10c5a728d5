from __future__ import annotations
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.job_list import JobList
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    state: str | Unset = UNSET,
    user: str | Unset = UNSET,
    node: str | Unset = UNSET,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    tasks: bool | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["state"] = state

    params["user"] = user

    params["node"] = node

    params["after"] = after

    params["before"] = before

    params["limit"] = limit

    params["tasks"] = tasks

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/jobs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | JobList | None:
    if response.status_code == 200:
        response_200 = JobList.from_dict(response.json())

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
) -> Response[ApiError | JobList]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    user: str | Unset = UNSET,
    node: str | Unset = UNSET,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    tasks: bool | Unset = UNSET,
) -> Response[ApiError | JobList]:
    """List jobs, newest first, a page at a time (`limit`, default 1000); `next_before` in
    the answer is the cursor for the next page.

    Args:
        state (str | Unset):
        user (str | Unset):
        node (str | Unset):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):
        tasks (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | JobList]
    """

    kwargs = _get_kwargs(
        state=state,
        user=user,
        node=node,
        after=after,
        before=before,
        limit=limit,
        tasks=tasks,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    user: str | Unset = UNSET,
    node: str | Unset = UNSET,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    tasks: bool | Unset = UNSET,
) -> ApiError | JobList | None:
    """List jobs, newest first, a page at a time (`limit`, default 1000); `next_before` in
    the answer is the cursor for the next page.

    Args:
        state (str | Unset):
        user (str | Unset):
        node (str | Unset):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):
        tasks (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | JobList
    """

    return sync_detailed(
        client=client,
        state=state,
        user=user,
        node=node,
        after=after,
        before=before,
        limit=limit,
        tasks=tasks,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    user: str | Unset = UNSET,
    node: str | Unset = UNSET,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    tasks: bool | Unset = UNSET,
) -> Response[ApiError | JobList]:
    """List jobs, newest first, a page at a time (`limit`, default 1000); `next_before` in
    the answer is the cursor for the next page.

    Args:
        state (str | Unset):
        user (str | Unset):
        node (str | Unset):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):
        tasks (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | JobList]
    """

    kwargs = _get_kwargs(
        state=state,
        user=user,
        node=node,
        after=after,
        before=before,
        limit=limit,
        tasks=tasks,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    state: str | Unset = UNSET,
    user: str | Unset = UNSET,
    node: str | Unset = UNSET,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    tasks: bool | Unset = UNSET,
) -> ApiError | JobList | None:
    """List jobs, newest first, a page at a time (`limit`, default 1000); `next_before` in
    the answer is the cursor for the next page.

    Args:
        state (str | Unset):
        user (str | Unset):
        node (str | Unset):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):
        tasks (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | JobList
    """

    return (
        await asyncio_detailed(
            client=client,
            state=state,
            user=user,
            node=node,
            after=after,
            before=before,
            limit=limit,
            tasks=tasks,
        )
    ).parsed
