"""The events the service delivers to webhook endpoints (the OpenAPI document's ``webhooks`` map) as TypedDicts.

Each is the parsed JSON body, so the keys are the API's (``createdAt``, ``keyPrefix``). A test holds them against
the document the server serves.
"""

from __future__ import annotations

from typing import Literal, TypedDict, Union

from ._types import Utm


class _LeadCreatedDataRequired(TypedDict):
    name: str
    email: str
    service: str
    message: str
    id: str
    createdAt: str
    keyPrefix: str
    """The prefix of the API key that created the lead."""


class LeadCreatedData(_LeadCreatedDataRequired, total=False):
    """The lead as the API took it, with its ``id``, ``createdAt`` and ``keyPrefix``."""

    phone: str
    company: str
    budget: str
    locale: str
    source: str
    utm: Utm


class KeyData(TypedDict):
    prefix: str
    """The public prefix of the key (never its secret)."""
    name: str | None
    who: str | None
    """Email of the user who made the change; None when it was made from the command line."""


class KeyRotatedData(KeyData):
    newPrefix: str
    """The prefix of the key that replaces it."""


class QuotaData(TypedDict):
    month: str
    """The calendar month (UTC), YYYY-MM."""
    plan: str
    limit: int
    used: int


class LeadCreatedEvent(TypedDict):
    """A lead was created through the API."""

    type: Literal["lead.created"]
    timestamp: str
    data: LeadCreatedData


class KeyCreatedEvent(TypedDict):
    """An API key was created."""

    type: Literal["key.created"]
    timestamp: str
    data: KeyData


class KeyRotatedEvent(TypedDict):
    """An API key was rotated (a new key replaces it; the old one expires after its grace period)."""

    type: Literal["key.rotated"]
    timestamp: str
    data: KeyRotatedData


class KeyRevokedEvent(TypedDict):
    """An API key was revoked."""

    type: Literal["key.revoked"]
    timestamp: str
    data: KeyData


class QuotaWarningEvent(TypedDict):
    """The account has used 80% of this month's AI quota (at most once per month)."""

    type: Literal["quota.warning"]
    timestamp: str
    data: QuotaData


class QuotaExhaustedEvent(TypedDict):
    """The account has used all of this month's AI quota (at most once per month)."""

    type: Literal["quota.exhausted"]
    timestamp: str
    data: QuotaData


class WebhookTestData(TypedDict):
    endpointId: str
    """The endpoint it was sent to."""
    who: str | None
    """Email of the user who sent it."""


class WebhookTestEvent(TypedDict):
    """A test event, sent by hand from the dashboard to one endpoint; nothing happened."""

    type: Literal["webhook.test"]
    timestamp: str
    data: WebhookTestData


WebhookEvent = Union[
    LeadCreatedEvent,
    KeyCreatedEvent,
    KeyRotatedEvent,
    KeyRevokedEvent,
    QuotaWarningEvent,
    QuotaExhaustedEvent,
    WebhookTestEvent,
]
"""Any event; narrow it on ``event["type"]``."""
