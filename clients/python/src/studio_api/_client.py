"""The sync ``Studio`` and async ``AsyncStudio`` clients: the same methods, the same behaviour.

The calls are written once per client in ``with_raw_response`` (each returns a ``RawResponse``: status, headers,
``parse()``); the plain methods are those, parsed.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, TypeVar

import httpx

from . import _core as core
from ._core import Call, RawResponse
from ._errors import APIConnectionError, APITimeoutError, StudioError, error_from_response
from ._stream import AsyncCompletionStream, CompletionStream
from ._types import Caller, Completion, LeadCreated, Message, Model, OpenApiDocument, Utm

if TYPE_CHECKING:
    from typing_extensions import ParamSpec

    P = ParamSpec("P")

T = TypeVar("T")
F = TypeVar("F")
S = TypeVar("S")
Headers = Optional[dict[str, str]]


def _parsed(f: Callable[P, RawResponse[T]]) -> Callable[P, T]:
    @functools.wraps(f)
    def parsed(*args: P.args, **kwargs: P.kwargs) -> T:
        return f(*args, **kwargs).parse()

    return parsed


def _aparsed(f: Callable[P, Awaitable[RawResponse[T]]]) -> Callable[P, Awaitable[T]]:
    @functools.wraps(f)
    async def parsed(*args: P.args, **kwargs: P.kwargs) -> T:
        return (await f(*args, **kwargs)).parse()

    return parsed


class _Config:
    def __init__(
        self, api_key: str | None, base_url: str | None, max_retries: int, timeout: float, headers: Headers
    ) -> None:
        self.api_key, self.base_url = core.settings(api_key, base_url)
        self.max_retries = max_retries
        self.timeout = timeout
        self.headers = core.headers_for(self.api_key, headers)

    def request(
        self, http: httpx.Client | httpx.AsyncClient, call: Call[Any], extra: Headers, timeout: float | None
    ) -> httpx.Request:
        headers = {**self.headers, **(call.headers or {}), **(extra or {})}
        seconds = self.timeout if timeout is None else timeout
        url = self.base_url + call.path
        return http.build_request(call.method, url, json=call.body, headers=headers, timeout=httpx.Timeout(seconds))

    def wait(self, error: StudioError, attempt: int, max_retries: int | None) -> float:
        """Seconds before the next attempt; raises ``error`` when there is none."""
        retries = self.max_retries if max_retries is None else max_retries
        wait = core.retry_delay(error, attempt) if attempt < retries else None
        if wait is None:
            raise error
        return wait


def _failure(e: httpx.TransportError) -> StudioError:
    error: StudioError
    if isinstance(e, httpx.TimeoutException):
        error = APITimeoutError(f"No response within the timeout ({e!r})")
    else:
        error = APIConnectionError(f"Connection error: {e!r}")
    error.__cause__ = e
    return error


class Studio:
    """A client of the Studio API; see the README for its behaviour."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = core.DEFAULT_MAX_RETRIES,
        timeout: float = core.DEFAULT_TIMEOUT,
        default_headers: Headers = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._config = _Config(api_key, base_url, max_retries, timeout, default_headers)
        self._http = http_client or httpx.Client()
        raw = self.with_raw_response = StudioRaw(self)
        self.me = _parsed(raw.me)
        self.openapi = _parsed(raw.openapi)
        self.completions = _Completions(create=_parsed(raw.completions.create), stream=self._stream)
        self.leads = _Resource(create=_parsed(raw.leads.create))

    def _send(self, call: Call[T], timeout: float | None, max_retries: int | None, extra: Headers) -> RawResponse[T]:
        return RawResponse(self._exchange(call, timeout, max_retries, extra, False), call.parse)

    def _exchange(
        self, call: Call[Any], timeout: float | None, max_retries: int | None, extra: Headers, stream: bool
    ) -> httpx.Response:
        """The response, with its retries; a streamed success's body is left unread."""
        request = self._config.request(self._http, call, extra, timeout)
        for attempt in range(1_000_000):
            try:
                response = self._http.send(request, stream=True)
                if not (stream and response.is_success):
                    response.read()
                if response.is_success:
                    return response
                error = error_from_response(response)
            except httpx.TransportError as e:
                error = _failure(e)
            time.sleep(self._config.wait(error, attempt, max_retries))
        raise AssertionError("unreachable")

    def _stream(
        self,
        *,
        messages: list[Message],
        model: Model | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> CompletionStream:
        call = core.completion_call(messages, model, system, max_tokens, temperature, stream=True)
        return CompletionStream(lambda: self._exchange(call, timeout, max_retries, extra_headers, True))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Studio:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncStudio:
    """The asyncio client: the methods of ``Studio``, awaited."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = core.DEFAULT_MAX_RETRIES,
        timeout: float = core.DEFAULT_TIMEOUT,
        default_headers: Headers = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._config = _Config(api_key, base_url, max_retries, timeout, default_headers)
        self._http = http_client or httpx.AsyncClient()
        raw = self.with_raw_response = AsyncStudioRaw(self)
        self.me = _aparsed(raw.me)
        self.openapi = _aparsed(raw.openapi)
        self.completions = _Completions(create=_aparsed(raw.completions.create), stream=self._stream)
        self.leads = _Resource(create=_aparsed(raw.leads.create))

    async def _send(
        self, call: Call[T], timeout: float | None, max_retries: int | None, extra: Headers
    ) -> RawResponse[T]:
        return RawResponse(await self._exchange(call, timeout, max_retries, extra, False), call.parse)

    async def _exchange(
        self, call: Call[Any], timeout: float | None, max_retries: int | None, extra: Headers, stream: bool
    ) -> httpx.Response:
        request = self._config.request(self._http, call, extra, timeout)
        for attempt in range(1_000_000):
            try:
                response = await self._http.send(request, stream=True)
                if not (stream and response.is_success):
                    await response.aread()
                if response.is_success:
                    return response
                error = error_from_response(response)
            except httpx.TransportError as e:
                error = _failure(e)
            await asyncio.sleep(self._config.wait(error, attempt, max_retries))
        raise AssertionError("unreachable")

    def _stream(
        self,
        *,
        messages: list[Message],
        model: Model | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> AsyncCompletionStream:
        call = core.completion_call(messages, model, system, max_tokens, temperature, stream=True)
        return AsyncCompletionStream(lambda: self._exchange(call, timeout, max_retries, extra_headers, True))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStudio:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


class _Resource(Generic[F]):
    def __init__(self, create: F) -> None:
        self.create = create


class _Completions(_Resource[F], Generic[F, S]):
    def __init__(self, create: F, stream: S) -> None:
        super().__init__(create)
        self.stream = stream


class StudioRaw:
    """``Studio``'s methods, each returning the ``RawResponse``."""

    def __init__(self, client: Studio) -> None:
        self._client = client
        self.completions = _Resource(create=self._completion)
        self.leads = _Resource(create=self._lead)

    def me(
        self, *, timeout: float | None = None, max_retries: int | None = None, extra_headers: Headers = None
    ) -> RawResponse[Caller]:
        return self._client._send(core.me_call(), timeout, max_retries, extra_headers)

    def openapi(
        self, *, timeout: float | None = None, max_retries: int | None = None, extra_headers: Headers = None
    ) -> RawResponse[OpenApiDocument]:
        return self._client._send(core.openapi_call(), timeout, max_retries, extra_headers)

    def _completion(
        self,
        *,
        messages: list[Message],
        model: Model | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> RawResponse[Completion]:
        call = core.completion_call(messages, model, system, max_tokens, temperature)
        return self._client._send(call, timeout, max_retries, extra_headers)

    def _lead(
        self,
        *,
        name: str,
        email: str,
        service: str,
        message: str,
        phone: str | None = None,
        company: str | None = None,
        budget: str | None = None,
        locale: str | None = None,
        source: str | None = None,
        utm: Utm | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> RawResponse[LeadCreated]:
        fields = dict(name=name, email=email, service=service, message=message, phone=phone, company=company)
        fields.update(budget=budget, locale=locale, source=source)
        call = core.lead_call(fields, utm, idempotency_key)
        return self._client._send(call, timeout, max_retries, extra_headers)


class AsyncStudioRaw:
    """``AsyncStudio``'s methods, each returning the ``RawResponse``."""

    def __init__(self, client: AsyncStudio) -> None:
        self._client = client
        self.completions = _Resource(create=self._completion)
        self.leads = _Resource(create=self._lead)

    async def me(
        self, *, timeout: float | None = None, max_retries: int | None = None, extra_headers: Headers = None
    ) -> RawResponse[Caller]:
        return await self._client._send(core.me_call(), timeout, max_retries, extra_headers)

    async def openapi(
        self, *, timeout: float | None = None, max_retries: int | None = None, extra_headers: Headers = None
    ) -> RawResponse[OpenApiDocument]:
        return await self._client._send(core.openapi_call(), timeout, max_retries, extra_headers)

    async def _completion(
        self,
        *,
        messages: list[Message],
        model: Model | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> RawResponse[Completion]:
        call = core.completion_call(messages, model, system, max_tokens, temperature)
        return await self._client._send(call, timeout, max_retries, extra_headers)

    async def _lead(
        self,
        *,
        name: str,
        email: str,
        service: str,
        message: str,
        phone: str | None = None,
        company: str | None = None,
        budget: str | None = None,
        locale: str | None = None,
        source: str | None = None,
        utm: Utm | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_headers: Headers = None,
    ) -> RawResponse[LeadCreated]:
        fields = dict(name=name, email=email, service=service, message=message, phone=phone, company=company)
        fields.update(budget=budget, locale=locale, source=source)
        call = core.lead_call(fields, utm, idempotency_key)
        return await self._client._send(call, timeout, max_retries, extra_headers)
