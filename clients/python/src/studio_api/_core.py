"""What the sync and async clients share: the requests they make, when to retry, and the raw response."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypedDict, TypeVar, cast

import httpx

from ._errors import StudioError, retry_after_of

__version__ = "1.0.0"
DEFAULT_BASE_URL = "http://127.0.0.1:8080/api/v1"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
RETRY_AFTER_CAP = 60.0

T = TypeVar("T")


class RequestOptions(TypedDict, total=False):
    """What every method also takes, for that call alone."""

    timeout: float | None
    """Seconds per attempt."""
    max_retries: int | None
    extra_headers: dict[str, str] | None


_OPTIONS = frozenset(RequestOptions.__annotations__)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call: what to send, how to read a success, and the caller's ``RequestOptions``."""

    method: str
    path: str
    parse: Callable[[dict[str, Any], str | None], T]
    body: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    options: RequestOptions | None = None
    query: dict[str, str] | None = None

    @classmethod
    def of(
        cls,
        method: str,
        path: str,
        parse: Callable[[dict[str, Any], str | None], T],
        args: Mapping[str, Any],
        headers: dict[str, str] | None = None,
    ) -> Call[T]:
        """The call whose body is ``args`` less the ``RequestOptions`` (and the keys given as None)."""
        options = cast(RequestOptions, {k: v for k, v in args.items() if k in _OPTIONS})
        body = {k: v for k, v in args.items() if v is not None and k not in _OPTIONS}
        return cls(method, path, parse, body if method != "GET" else None, headers, options)

    @classmethod
    def get(cls, path: str, parse: Callable[[dict[str, Any], str | None], T], args: Mapping[str, Any]) -> Call[T]:
        """A GET whose query is ``args`` less the ``RequestOptions`` (and the keys given as None)."""
        options = cast(RequestOptions, {k: v for k, v in args.items() if k in _OPTIONS})
        query = {k: _param(v) for k, v in args.items() if v is not None and k not in _OPTIONS}
        return cls("GET", path, parse, None, None, options, query)

    @classmethod
    def patch(cls, path: str, parse: Callable[[dict[str, Any], str | None], T], args: Mapping[str, Any]) -> Call[T]:
        """A PATCH whose body is ``args`` less the ``RequestOptions``: a key given as None is sent as null."""
        options = cast(RequestOptions, {k: v for k, v in args.items() if k in _OPTIONS})
        return cls("PATCH", path, parse, {k: v for k, v in args.items() if k not in _OPTIONS}, None, options)


def _param(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class RawResponse(Generic[T]):
    """A result with its HTTP response: ``status_code``, ``headers`` (RateLimit, Server-Timing, ...)."""

    http_response: httpx.Response
    _parse: Callable[[dict[str, Any], str | None], T]

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.http_response.headers

    @property
    def request_id(self) -> str | None:
        value: str | None = self.http_response.headers.get("x-request-id")
        return value

    def parse(self) -> T:
        return self._parse(self.http_response.json(), self.request_id)


def settings(api_key: str | None, base_url: str | None) -> tuple[str, str]:
    key = api_key if api_key is not None else os.environ.get("STUDIO_API_KEY")
    if not key:
        raise StudioError("No API key: pass api_key= or set STUDIO_API_KEY")
    url = base_url or os.environ.get("STUDIO_BASE_URL") or DEFAULT_BASE_URL
    return key, url.rstrip("/")


def headers_for(api_key: str, default_headers: dict[str, str] | None) -> dict[str, str]:
    return {
        "authorization": f"Bearer {api_key}",
        "accept": "application/json",
        "user-agent": f"studio-api-python/{__version__}",
        **(default_headers or {}),
    }


def retry_delay(error: StudioError, attempt: int) -> float | None:
    """Seconds to wait before retry ``attempt`` (0-based) after ``error``, or None when it must not be retried.

    Connection errors, 408, 409, 429 ``rate_limited`` and 5xx but 501 are retried; Retry-After is used as sent up to
    RETRY_AFTER_CAP (beyond it the error is raised), else 0.5 s doubling up to 8 s, less up to 25 % jitter.
    """
    if error.status is not None and not retryable(error.status, error.code):
        return None
    after = retry_after_of(error.headers)
    if after is None:
        return min(INITIAL_RETRY_DELAY * 2.0**attempt, MAX_RETRY_DELAY) * (1 - random.random() * 0.25)
    return None if after > RETRY_AFTER_CAP else after


def retryable(status: int, code: str | None) -> bool:
    return status in (408, 409) or (status == 429 and code == "rate_limited") or (status >= 500 and status != 501)
