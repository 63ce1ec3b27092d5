"""The sync ``Studio`` and async ``AsyncStudio`` clients: the methods of ``Api`` (``_resources.py``), sent over httpx.

Each client has two transports on one connection pool: the plain one parses a success, the one behind
``with_raw_response`` hands back the ``RawResponse``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Optional

import httpx

from . import _core as core
from ._core import Call, RawResponse
from ._errors import APIConnectionError, APITimeoutError, StudioError, error_from_response
from ._resources import Api, Async, AsyncRaw, Sync, SyncRaw
from ._stream import AsyncCompletionStream, CompletionStream

Headers = Optional[dict[str, str]]


class _Config:
    def __init__(
        self, api_key: str | None, base_url: str | None, max_retries: int, timeout: float, headers: Headers
    ) -> None:
        self.api_key, self.base_url = core.settings(api_key, base_url)
        self.max_retries = max_retries
        self.timeout = timeout
        self.headers = core.headers_for(self.api_key, headers)

    def request(self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
        options = call.options or {}
        headers = {**self.headers, **(call.headers or {}), **(options.get("extra_headers") or {})}
        timeout = options.get("timeout")
        seconds = self.timeout if timeout is None else timeout
        url = self.base_url + call.path
        return http.build_request(
            call.method, url, params=call.query, json=call.body, headers=headers, timeout=httpx.Timeout(seconds)
        )

    def wait(self, error: StudioError, attempt: int, call: Call[Any]) -> float:
        """Seconds before the next attempt; raises ``error`` when there is none."""
        given = (call.options or {}).get("max_retries")
        retries = self.max_retries if given is None else given
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


class _SyncTransport:
    def __init__(self, config: _Config, http: httpx.Client, raw: bool) -> None:
        self._config, self._http, self._raw = config, http, raw

    def run(self, call: Call[Any]) -> Any:
        response = RawResponse(self._exchange(call, stream=False), call.parse)
        return response if self._raw else response.parse()

    def stream(self, call: Call[Any]) -> CompletionStream:
        return CompletionStream(lambda: self._exchange(call, stream=True))

    def _exchange(self, call: Call[Any], stream: bool) -> httpx.Response:
        """The response, with its retries; a streamed success's body is left unread."""
        request = self._config.request(self._http, call)
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
            time.sleep(self._config.wait(error, attempt, call))
        raise AssertionError("unreachable")


class _AsyncTransport:
    def __init__(self, config: _Config, http: httpx.AsyncClient, raw: bool) -> None:
        self._config, self._http, self._raw = config, http, raw

    async def run(self, call: Call[Any]) -> Any:
        response = RawResponse(await self._exchange(call, stream=False), call.parse)
        return response if self._raw else response.parse()

    def stream(self, call: Call[Any]) -> AsyncCompletionStream:
        return AsyncCompletionStream(lambda: self._exchange(call, stream=True))

    async def _exchange(self, call: Call[Any], stream: bool) -> httpx.Response:
        request = self._config.request(self._http, call)
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
            await asyncio.sleep(self._config.wait(error, attempt, call))
        raise AssertionError("unreachable")


class Studio(Api[Sync]):
    """A client of the Studio API; see the README for its behaviour."""

    with_raw_response: Api[SyncRaw]
    """The same methods, each returning the ``RawResponse``."""

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
        config = _Config(api_key, base_url, max_retries, timeout, default_headers)
        self._http = http_client or httpx.Client()
        super().__init__(_SyncTransport(config, self._http, raw=False))
        self.with_raw_response = Api(_SyncTransport(config, self._http, raw=True))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Studio:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncStudio(Api[Async]):
    """The asyncio client: the methods of ``Studio``, awaited."""

    with_raw_response: Api[AsyncRaw]
    """The same methods, each returning the ``RawResponse``."""

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
        config = _Config(api_key, base_url, max_retries, timeout, default_headers)
        self._http = http_client or httpx.AsyncClient()
        super().__init__(_AsyncTransport(config, self._http, raw=False))
        self.with_raw_response = Api(_AsyncTransport(config, self._http, raw=True))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStudio:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


StudioRaw = Api[SyncRaw]
"""The type of ``Studio().with_raw_response``."""
AsyncStudioRaw = Api[AsyncRaw]
"""The type of ``AsyncStudio().with_raw_response``."""
