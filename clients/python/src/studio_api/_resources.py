"""The API's resources and their methods, each written once: a method builds the ``Call`` and the client's transport
sends it, so the same method is sync or async, parsed or raw, as the client it is read from.

``Api[Sync]`` is ``Studio``, ``Api[Async]`` is ``AsyncStudio``, and ``Api[SyncRaw]`` / ``Api[AsyncRaw]`` their
``with_raw_response``. A new route is one method here; its types come from ``_types.py`` (generated).
"""

from __future__ import annotations

import dataclasses
import inspect
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Callable, Generic, Protocol, TypeVar, overload
from urllib.parse import quote

from ._core import Call, RawResponse, RequestOptions
from ._stream import AsyncCompletionStream, CompletionStream
from ._types import (
    Caller,
    Completion,
    CompletionRequest,
    Lead,
    LeadCreated,
    LeadInput,
    LeadNote,
    LeadPage,
    LeadUpdate,
    NoteInput,
    OpenApiDocument,
    Status,
)

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec, Unpack

    P = ParamSpec("P")
else:  # ParamSpec is in typing from 3.10 on; at run time any type variable serves
    P = TypeVar("P")

T = TypeVar("T")
M = TypeVar("M")


class Sync:
    """Methods return the result."""


class Async:
    """Methods return an awaitable of the result."""


class SyncRaw:
    """Methods return the ``RawResponse``."""


class AsyncRaw:
    """Methods return an awaitable of the ``RawResponse``."""


class Transport(Protocol):
    def run(self, call: Call[Any]) -> Any: ...

    def stream(self, call: Call[Any]) -> Any: ...


class Resource(Generic[M]):
    def __init__(self, transport: Transport) -> None:
        self._transport = transport


def _bound(build: Callable[..., Call[Any]], resource: Resource[Any], send: Callable[[Call[Any]], Any]) -> Any:
    def method(*args: Any, **kwargs: Any) -> Any:
        return send(build(resource, *args, **kwargs))

    method.__name__, method.__qualname__, method.__doc__ = build.__name__, build.__qualname__, build.__doc__
    return method


class operation(Generic[P, T]):
    """A method from the function that builds its ``Call``: what it returns depends on the client's mode ``M``."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, resource: None, owner: type) -> operation[P, T]: ...
    @overload
    def __get__(self, resource: Resource[Sync], owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, resource: Resource[Async], owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, resource: Resource[SyncRaw], owner: type) -> Callable[P, RawResponse[T]]: ...
    @overload
    def __get__(
        self, resource: Resource[AsyncRaw], owner: type
    ) -> Callable[P, Coroutine[Any, Any, RawResponse[T]]]: ...
    def __get__(self, resource: Resource[Any] | None, owner: type) -> Any:
        return self if resource is None else _bound(self._build, resource, resource._transport.run)


class streamed(Generic[P]):
    """A streamed completion's method: a ``CompletionStream`` (``AsyncCompletionStream`` from an async client)."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[Completion]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, resource: None, owner: type) -> streamed[P]: ...
    @overload
    def __get__(self, resource: Resource[Sync] | Resource[SyncRaw], owner: type) -> Callable[P, CompletionStream]: ...
    @overload
    def __get__(
        self, resource: Resource[Async] | Resource[AsyncRaw], owner: type
    ) -> Callable[P, AsyncCompletionStream]: ...
    def __get__(self, resource: Resource[Any] | None, owner: type) -> Any:
        return self if resource is None else _bound(self._build, resource, resource._transport.stream)


def _next(call: Call[LeadPage], page: LeadPage | RawResponse[LeadPage]) -> Call[LeadPage] | None:
    cursor = (page.parse() if isinstance(page, RawResponse) else page).next_cursor
    return None if cursor is None else dataclasses.replace(call, query={**(call.query or {}), "cursor": cursor})


def _pages(send: Callable[[Call[LeadPage]], Any], first: Call[LeadPage]) -> Iterator[Any]:
    call: Call[LeadPage] | None = first
    while call is not None:
        page = send(call)
        yield page
        call = _next(call, page)


async def _async_pages(send: Callable[[Call[LeadPage]], Any], first: Call[LeadPage]) -> AsyncIterator[Any]:
    call: Call[LeadPage] | None = first
    while call is not None:
        page = await send(call)
        yield page
        call = _next(call, page)


class paged(Generic[P]):
    """A listing's method: an iterator over its pages (an async iterator from an async client), following each
    page's ``next_cursor``; a page is fetched when the one before it has been taken."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[LeadPage]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, resource: None, owner: type) -> paged[P]: ...
    @overload
    def __get__(self, resource: Resource[Sync], owner: type) -> Callable[P, Iterator[LeadPage]]: ...
    @overload
    def __get__(self, resource: Resource[Async], owner: type) -> Callable[P, AsyncIterator[LeadPage]]: ...
    @overload
    def __get__(self, resource: Resource[SyncRaw], owner: type) -> Callable[P, Iterator[RawResponse[LeadPage]]]: ...
    @overload
    def __get__(
        self, resource: Resource[AsyncRaw], owner: type
    ) -> Callable[P, AsyncIterator[RawResponse[LeadPage]]]: ...
    def __get__(self, resource: Resource[Any] | None, owner: type) -> Any:
        if resource is None:
            return self
        run = resource._transport.run
        walk = _async_pages if inspect.iscoroutinefunction(run) else _pages

        def method(*args: Any, **kwargs: Any) -> Any:
            return walk(run, self._build(resource, *args, **kwargs))

        method.__name__, method.__qualname__, method.__doc__ = (
            self._build.__name__,
            self._build.__qualname__,
            self.__doc__,
        )
        return method


class CompletionArgs(CompletionRequest, RequestOptions, total=False):
    pass


class LeadArgs(LeadInput, RequestOptions, total=False):
    idempotency_key: str | None
    """Sent as ``Idempotency-Key`` on every attempt; a random UUID unless given."""


STREAM_HEADERS = {"accept": "text/event-stream"}


class Completions(Resource[M]):
    @operation
    def create(self, **args: Unpack[CompletionArgs]) -> Call[Completion]:
        """POST /ai/completions -> ``Completion``."""
        return Call.of("POST", "/ai/completions", Completion.from_json, {**args, "stream": None})

    @streamed
    def stream(self, **args: Unpack[CompletionArgs]) -> Call[Completion]:
        """POST /ai/completions with ``stream: true`` -> the server-sent events as they come."""
        return Call.of("POST", "/ai/completions", Completion.from_json, {**args, "stream": True}, STREAM_HEADERS)


class LeadListArgs(RequestOptions, total=False):
    limit: int
    """Leads a page, 1 to 100; default 50."""
    cursor: str
    """Start after this page's ``next_cursor`` instead of at the newest lead."""
    since: str
    """Only leads created at or after this time (ISO 8601)."""
    until: str
    """Only leads created before this time (ISO 8601)."""
    status: Status
    assignee: str
    """Only leads given to the user with this email."""
    spam: bool
    """The leads kept as spam instead of the others."""


class LeadUpdateArgs(LeadUpdate, RequestOptions, total=False):
    pass


class NoteArgs(NoteInput, RequestOptions, total=False):
    pass


class Leads(Resource[M]):
    @operation
    def create(self, **args: Unpack[LeadArgs]) -> Call[LeadCreated]:
        """POST /leads -> ``LeadCreated``; retried with the same ``Idempotency-Key``, so never two leads."""
        key = args.pop("idempotency_key", None) or str(uuid.uuid4())
        return Call.of("POST", "/leads", LeadCreated.from_json, args, {"idempotency-key": key})

    @paged
    def list(self, **args: Unpack[LeadListArgs]) -> Call[LeadPage]:
        """GET /leads -> an iterator over ``LeadPage``s, newest lead first."""
        return Call.get("/leads", LeadPage.from_json, args)

    @operation
    def update(self, id: str, **args: Unpack[LeadUpdateArgs]) -> Call[Lead]:
        """PATCH /leads/{id} -> ``Lead``: its ``status`` and/or ``assignee`` (an email; None gives it to nobody)."""
        return Call.patch(f"/leads/{quote(id, safe='')}", Lead.from_json, args)

    @operation
    def add_note(self, id: str, **args: Unpack[NoteArgs]) -> Call[LeadNote]:
        """POST /leads/{id}/notes -> ``LeadNote``: ``text`` appended to the lead's notes."""
        return Call.of("POST", f"/leads/{quote(id, safe='')}/notes", LeadNote.from_json, args)

    @operation
    def get(self, id: str, **options: Unpack[RequestOptions]) -> Call[Lead]:
        """GET /leads/{id} -> ``Lead``."""
        return Call.get(f"/leads/{quote(id, safe='')}", Lead.from_json, options)


class Api(Resource[M]):
    def __init__(self, transport: Transport) -> None:
        super().__init__(transport)
        self.completions: Completions[M] = Completions(transport)
        self.leads: Leads[M] = Leads(transport)

    @operation
    def me(self, **options: Unpack[RequestOptions]) -> Call[Caller]:
        """GET /me -> ``Caller``: the key's user, plan and quota."""
        return Call.of("GET", "/me", Caller.from_json, options)

    @operation
    def openapi(self, **options: Unpack[RequestOptions]) -> Call[OpenApiDocument]:
        """GET /openapi.json -> ``OpenApiDocument`` (a dict)."""
        return Call.of("GET", "/openapi.json", OpenApiDocument.from_json, options)
