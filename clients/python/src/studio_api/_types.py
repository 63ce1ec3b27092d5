"""The API's schemas (the served OpenAPI document's ``components.schemas``) as Python types.

Requests are TypedDicts (what a caller writes); results are frozen dataclasses, each with ``_request_id``, the
``x-request-id`` of the response it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict


class Message(TypedDict):
    role: Literal["user", "assistant"]
    content: str


class Utm(TypedDict, total=False):
    source: str
    medium: str
    campaign: str


Model = Literal["primary", "fast"]
Plan = Literal["FREE", "STARTER", "PRO", "ENTERPRISE"]


@dataclass(frozen=True)
class User:
    id: str
    email: str
    name: str | None
    role: str


@dataclass(frozen=True)
class Quota:
    limit: int | None
    """Completions per calendar month (UTC); None when unlimited."""
    used: int
    remaining: int | None
    resets_at: str
    """Start of the next calendar month, UTC (ISO 8601)."""


@dataclass(frozen=True)
class Caller:
    user: User | None
    plan: str
    quota: Quota
    _request_id: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], request_id: str | None = None) -> Caller:
        user, quota = data.get("user"), data["quota"]
        return cls(
            user=User(id=user["id"], email=user["email"], name=user.get("name"), role=user["role"]) if user else None,
            plan=data["plan"],
            quota=Quota(
                limit=quota.get("limit"),
                used=quota["used"],
                remaining=quota.get("remaining"),
                resets_at=quota["resets_at"],
            ),
            _request_id=request_id,
        )


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass(frozen=True)
class Completion:
    model: str
    content: str
    stop_reason: str | None
    usage: Usage
    _request_id: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], request_id: str | None = None) -> Completion:
        return cls(
            model=data["model"],
            content=data["content"],
            stop_reason=data.get("stop_reason"),
            usage=Usage(**{k: int(data["usage"].get(k, 0)) for k in _USAGE}),
            _request_id=request_id,
        )


@dataclass(frozen=True)
class LeadCreated:
    id: str
    created_at: str
    """ISO 8601 (the API's ``createdAt``)."""
    _request_id: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], request_id: str | None = None) -> LeadCreated:
        return cls(id=data["id"], created_at=data["createdAt"], _request_id=request_id)


class OpenApiDocument(dict[str, Any]):
    """The OpenAPI 3.1 document, a dict, with ``_request_id``."""

    _request_id: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any], request_id: str | None = None) -> OpenApiDocument:
        doc = cls(data)
        doc._request_id = request_id
        return doc
