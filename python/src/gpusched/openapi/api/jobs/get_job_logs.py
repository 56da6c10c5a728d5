from __future__ import annotations
from http import HTTPStatus
from io import BytesIO
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...types import UNSET, File, Response, Unset


def _get_kwargs(
    id: int,
    *,
    stream: str | Unset = UNSET,
    offset: int | Unset = UNSET,
    tail: int | Unset = UNSET,
    attempt: int | Unset = UNSET,
    node: str | Unset = UNSET,
    rank: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["stream"] = stream

    params["offset"] = offset

    params["tail"] = tail

    params["attempt"] = attempt

    params["node"] = node

    params["rank"] = rank

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/jobs/{id}/logs".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | File | None:
    if response.status_code == 200:
        response_200 = File(payload=BytesIO(response.content))

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

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | File]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: int,
    *,
    client: AuthenticatedClient | Client,
    stream: str | Unset = UNSET,
    offset: int | Unset = UNSET,
    tail: int | Unset = UNSET,
    attempt: int | Unset = UNSET,
    node: str | Unset = UNSET,
    rank: int | Unset = UNSET,
) -> Response[ApiError | File]:
    """Bytes of a job's stdout or stderr from `offset` (at most 1 MiB per call), fetched
    from the agent of the node it ran on. The `x-gpusched-job-state` header gives the
    job's state, so a follower knows when to stop. Only the job's owner and admins may
    read it (403 for others).

    Args:
        id (int):
        stream (str | Unset):
        offset (int | Unset):
        tail (int | Unset):
        attempt (int | Unset):
        node (str | Unset):
        rank (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | File]
    """

    kwargs = _get_kwargs(
        id=id,
        stream=stream,
        offset=offset,
        tail=tail,
        attempt=attempt,
        node=node,
        rank=rank,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: int,
    *,
    client: AuthenticatedClient | Client,
    stream: str | Unset = UNSET,
    offset: int | Unset = UNSET,
    tail: int | Unset = UNSET,
    attempt: int | Unset = UNSET,
    node: str | Unset = UNSET,
    rank: int | Unset = UNSET,
) -> ApiError | File | None:
    """Bytes of a job's stdout or stderr from `offset` (at most 1 MiB per call), fetched
    from the agent of the node it ran on. The `x-gpusched-job-state` header gives the
    job's state, so a follower knows when to stop. Only the job's owner and admins may
    read it (403 for others).

    Args:
        id (int):
        stream (str | Unset):
        offset (int | Unset):
        tail (int | Unset):
        attempt (int | Unset):
        node (str | Unset):
        rank (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | File
    """

    return sync_detailed(
        id=id,
        client=client,
        stream=stream,
        offset=offset,
        tail=tail,
        attempt=attempt,
        node=node,
        rank=rank,
    ).parsed


async def asyncio_detailed(
    id: int,
    *,
    client: AuthenticatedClient | Client,
    stream: str | Unset = UNSET,
    offset: int | Unset = UNSET,
    tail: int | Unset = UNSET,
    attempt: int | Unset = UNSET,
    node: str | Unset = UNSET,
    rank: int | Unset = UNSET,
) -> Response[ApiError | File]:
    """Bytes of a job's stdout or stderr from `offset` (at most 1 MiB per call), fetched
    from the agent of the node it ran on. The `x-gpusched-job-state` header gives the
    job's state, so a follower knows when to stop. Only the job's owner and admins may
    read it (403 for others).

    Args:
        id (int):
        stream (str | Unset):
        offset (int | Unset):
        tail (int | Unset):
        attempt (int | Unset):
        node (str | Unset):
        rank (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | File]
    """

    kwargs = _get_kwargs(
        id=id,
        stream=stream,
        offset=offset,
        tail=tail,
        attempt=attempt,
        node=node,
        rank=rank,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: int,
    *,
    client: AuthenticatedClient | Client,
    stream: str | Unset = UNSET,
    offset: int | Unset = UNSET,
    tail: int | Unset = UNSET,
    attempt: int | Unset = UNSET,
    node: str | Unset = UNSET,
    rank: int | Unset = UNSET,
) -> ApiError | File | None:
    """Bytes of a job's stdout or stderr from `offset` (at most 1 MiB per call), fetched
    from the agent of the node it ran on. The `x-gpusched-job-state` header gives the
    job's state, so a follower knows when to stop. Only the job's owner and admins may
    read it (403 for others).

    Args:
        id (int):
        stream (str | Unset):
        offset (int | Unset):
        tail (int | Unset):
        attempt (int | Unset):
        node (str | Unset):
        rank (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | File
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            stream=stream,
            offset=offset,
            tail=tail,
            attempt=attempt,
            node=node,
            rank=rank,
        )
    ).parsed
