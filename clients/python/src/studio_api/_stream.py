"""Streamed completions (``stream=True``): the events of an open response, sync and async."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from typing import Callable, Literal, Union

import httpx

from ._errors import ServerError, StudioError
from ._types import Completion


@dataclass(frozen=True)
class DeltaEvent:
    """The next piece of the generated text."""

    text: str
    type: Literal["delta"] = "delta"


@dataclass(frozen=True)
class DoneEvent:
    """The whole completion, once and last."""

    completion: Completion
    type: Literal["done"] = "done"


StreamEvent = Union[DeltaEvent, DoneEvent]


class _Decoder:
    """Server-sent events from their lines (comments skipped); ``event`` is what a completed event means."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._name = ""
        self._data: list[str] = []
        self.final: Completion | None = None
        self.error: StudioError | None = None

    def line(self, line: str) -> StreamEvent | None:
        if line == "":
            name, data = self._name, self._data
            self._name, self._data = "", []
            return self._event(name, "\n".join(data)) if data else None
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self._name = value
        elif field == "data":
            self._data.append(value)
        return None

    def _event(self, name: str, data: str) -> StreamEvent | None:
        body = json.loads(data)
        if name == "delta":
            return DeltaEvent(text=body["text"])
        if name == "done":
            self.final = Completion.from_json(body, self._response.headers.get("x-request-id"))
            return DoneEvent(completion=self.final)
        if name == "error":
            error = body.get("error") or {}
            message = str(error.get("message") or "The stream failed")
            headers = self._response.headers
            self.error = ServerError(message, code=error.get("code"), details=error.get("details"), headers=headers)
            raise self.error
        return None

    def ended(self) -> None:
        """The body ended: raises unless the last event came."""
        self.line("")
        if self.final is None:
            self.error = ServerError("The stream ended without its last event", headers=self._response.headers)
            raise self.error

    def result(self) -> Completion:
        if self.error is not None:
            raise self.error
        if self.final is None:
            raise StudioError(_CLOSED)
        return self.final


_CLOSED = "The stream was closed before its last event"


class CompletionStream:
    """A streamed completion: iterate it for its events, inside ``with`` (leaving the block closes the connection).

    An ``error`` event raises ``ServerError`` (its ``code`` from the Error body); ``final_completion()`` reads what is
    left and returns the ``done`` event's completion.
    """

    def __init__(self, open: Callable[[], httpx.Response]) -> None:
        self._open = open
        self._response: httpx.Response | None = None
        self._decoder: _Decoder | None = None
        self._closed = False
        self._events: Iterator[StreamEvent] | None = None

    @property
    def response(self) -> httpx.Response:
        """The HTTP response (status, headers), sent at the first event."""
        return self._start()[0]

    def _start(self) -> tuple[httpx.Response, _Decoder]:
        if self._response is None:
            self._response = self._open()
            self._decoder = _Decoder(self._response)
        assert self._decoder is not None
        return self._response, self._decoder

    def _read(self) -> Iterator[StreamEvent]:
        response, decoder = self._start()
        for line in response.iter_lines():
            event = decoder.line(line)
            if event is not None:
                yield event
        decoder.ended()

    def __iter__(self) -> Iterator[StreamEvent]:
        return self

    def __next__(self) -> StreamEvent:
        if self._events is None:
            self._events = self._read()
        return next(self._events)

    def final_completion(self) -> Completion:
        if not self._closed:
            for _ in self:
                pass
        return self._start()[1].result()

    def close(self) -> None:
        self._closed = True
        if self._response is not None:
            self._response.close()

    def __enter__(self) -> CompletionStream:
        self._start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncCompletionStream:
    """The asyncio ``CompletionStream``: ``async with`` and ``async for``, ``await final_completion()``."""

    def __init__(self, open: Callable[[], Awaitable[httpx.Response]]) -> None:
        self._open = open
        self._response: httpx.Response | None = None
        self._decoder: _Decoder | None = None
        self._closed = False
        self._events: AsyncIterator[StreamEvent] | None = None

    async def _start(self) -> tuple[httpx.Response, _Decoder]:
        if self._response is None:
            self._response = await self._open()
            self._decoder = _Decoder(self._response)
        assert self._decoder is not None
        return self._response, self._decoder

    async def response(self) -> httpx.Response:
        """The HTTP response (status, headers), sent at the first event."""
        return (await self._start())[0]

    async def _read(self) -> AsyncIterator[StreamEvent]:
        response, decoder = await self._start()
        async for line in response.aiter_lines():
            event = decoder.line(line)
            if event is not None:
                yield event
        decoder.ended()

    def __aiter__(self) -> AsyncCompletionStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._events is None:
            self._events = self._read()
        return await self._events.__anext__()

    async def final_completion(self) -> Completion:
        if not self._closed:
            async for _ in self:
                pass
        return (await self._start())[1].result()

    async def close(self) -> None:
        self._closed = True
        if self._response is not None:
            await self._response.aclose()

    async def __aenter__(self) -> AsyncCompletionStream:
        await self._start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()
