"""The one error type of the library and the kinds a caller can catch."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx


class StudioError(Exception):
    """Every error the library raises. ``status`` is None when no response came."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: dict[str, Any] = details or {}
        self.headers: httpx.Headers = headers if headers is not None else httpx.Headers()
        self.request_id: str | None = self.headers.get("x-request-id")

    def __str__(self) -> str:
        prefix = f"{self.status} {self.code}: " if self.status is not None and self.code else ""
        return f"{prefix}{self.message}"


class AuthenticationError(StudioError):
    """401: the API key is missing, malformed, unknown, revoked or expired."""


class PermissionDeniedError(StudioError):
    """403 ``forbidden``: the API key lacks the scope the operation needs, named by ``required_scope``.

    Or ``model_not_allowed``: the key may not call that model alias.
    """

    @property
    def required_scope(self) -> str | None:
        value = self.details.get("required_scope")
        return value if isinstance(value, str) else None


class InvalidRequestError(StudioError):
    """400 or 422: the request was refused as sent; ``issues`` lists what is wrong with which field."""

    @property
    def issues(self) -> list[dict[str, str]]:
        issues = self.details.get("issues")
        return issues if isinstance(issues, list) else []


class RateLimitError(StudioError):
    """429 ``rate_limited``: too many requests with this key; ``retry_after`` seconds until a slot frees."""

    @property
    def retry_after(self) -> float | None:
        return retry_after_of(self.headers)


class QuotaExceededError(StudioError):
    """429 ``quota_exceeded`` (the account's monthly AI quota) or ``key_quota_exceeded`` (the key's own monthly cap).

    Used up until ``resets_at`` (``code`` says which). Never retried.
    """

    @property
    def limit(self) -> int | None:
        value = self.details.get("limit")
        return value if isinstance(value, int) else None

    @property
    def used(self) -> int | None:
        value = self.details.get("used")
        return value if isinstance(value, int) else None

    @property
    def resets_at(self) -> str | None:
        value = self.details.get("resets_at")
        return value if isinstance(value, str) else None


class ServerError(StudioError):
    """5xx: the service or the model behind it failed (``upstream_unavailable``, ``service_unavailable``, ...)."""


class APIConnectionError(StudioError):
    """No response: the connection was refused, reset or could not be made."""


class APITimeoutError(APIConnectionError):
    """No response within the timeout."""


def retry_after_of(headers: httpx.Headers) -> float | None:
    """Seconds in Retry-After (a number or an HTTP date); None when absent or unreadable."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() - time.time())


def error_from_response(response: httpx.Response) -> StudioError:
    """The error for a non-2xx response, by status and code."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    code = error.get("code") if isinstance(error.get("code"), str) else None
    message = error.get("message") if isinstance(error.get("message"), str) else f"{response.status_code} status code"
    details = error.get("details") if isinstance(error.get("details"), dict) else None
    status = response.status_code
    kind: type[StudioError] = StudioError
    if status == 401:
        kind = AuthenticationError
    elif status == 403:
        kind = PermissionDeniedError
    elif status in (400, 422):
        kind = InvalidRequestError
    elif status == 429:
        kind = QuotaExceededError if code in ("quota_exceeded", "key_quota_exceeded") else RateLimitError
    elif status >= 500:
        kind = ServerError
    return kind(str(message), status=status, code=code, details=details, headers=response.headers)
