"""``POST /org/{org}/-runtime/access``: may the caller use a permission on an item, and the
audit trail of what it does there (docs/api.md, "Runtime access").

A data plane (the runtime controller's, docs/runtime.md) trusts no token itself: it calls this
with the user's own credentials, so the key, its revocation and the org's policies are judged
exactly as any request's are (the same authentication, then :func:`~plinth.engine.access.require`
on the stored item). Kind-agnostic: the link names any item (an org for ``readLogs``, a workload
for ``connect``), and the permission must be one of that kind's. With ``audit`` the event is
appended to the item's event log (``-eventlog``) with the principal and the command, never any
input the command is given.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plinth.engine.access import Access, require, stamp_of
from plinth.engine.core import EngineCore
from plinth.engine.render import event_record
from plinth.engine.requestinfo import RequestInfo, parse_path
from plinth.engine.store_errors import storage_error
from plinth.errors import FieldError, NotFound, ValidationFailed, not_found
from plinth.kinds.validation import model_errors
from plinth.storage.base import AppendEvent, StorageError

MAX_NAME = 256
MAX_ARGS = 256


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Audit(_Closed):
    """What is done, recorded as an event of the item: ``type`` (``exec``, ``connect``, ``cp``,
    ``logs``...) and where (``command``, ``replica``, ``location``, ``container``)."""

    type: str = Field(min_length=1, max_length=64)
    command: list[str] = Field(default_factory=list, max_length=MAX_ARGS)
    replica: str | None = Field(default=None, max_length=MAX_NAME)
    location: str | None = Field(default=None, max_length=MAX_NAME)
    container: str | None = Field(default=None, max_length=MAX_NAME)


class AccessQuestion(_Closed):
    """The body: a permission on the item at ``link``, and the audit record to keep."""

    permission: str = Field(min_length=1, max_length=128)
    link: str = Field(min_length=1, max_length=1024)
    audit: Audit | None = None


def parse_question(body: object, org: str) -> tuple[AccessQuestion, RequestInfo]:
    """The question and the item its link names (in ``org``); 400 naming each bad field."""
    if not isinstance(body, dict):
        raise ValidationFailed([FieldError("", "must be an object with 'permission' and 'link'")], "access")
    try:
        question = AccessQuestion.model_validate(body)
    except ValidationError as exc:
        raise ValidationFailed(model_errors(exc), "access") from None
    try:
        info = parse_path(question.link)
    except NotFound:
        info = None
    if info is None or info.org != org or info.action is not None or not (info.is_item or info.kind == "org"):
        raise ValidationFailed([FieldError("link", f"must be the link of an item of org '{org}'")], "access")
    return question, info


def audit_event(href: str, principal: str, audit: Audit, when: str) -> tuple[str, bytes]:
    """The event an audited access leaves in the item's log."""
    context: dict[str, Any] = {"category": "audit", "link": href, "principalLink": principal, "type": audit.type}
    context["command"] = list(audit.command)
    for name in ("replica", "location", "container"):
        value = getattr(audit, name)
        if value is not None:
            context[name] = value
    return event_record(audit.type, context, when)


async def check_access(core: EngineCore, info: RequestInfo, question: AccessQuestion, access: Access, now: str) -> None:
    """Raise as a request would (403 naming the permission, 404 for an item the caller may not
    see or that does not exist) unless ``access`` allows it; then append the audit event."""
    kind = core.kind_of(info)
    if question.permission not in kind.access.permissions:
        known = ", ".join(sorted(kind.access.permissions))
        raise ValidationFailed(
            [FieldError("permission", f"'{question.permission}' is not a permission of {kind.name} ({known})")],
            "access",
        )
    t = core.target(info)
    try:
        record = await core.storage.get(t.key)
    except StorageError as exc:
        raise storage_error(exc, t.kind.name, t.name) from exc
    if record is None:
        raise not_found(t.kind.name, t.name)
    require(access, kind, question.permission, t.href, stamp_of(record), lambda: orjson.loads(record.doc))
    if question.audit is not None:
        event_id, event = audit_event(t.href, access.principal_link, question.audit, now)
        try:
            await core.storage.commit([AppendEvent(t.key, event_id, now, event)])
        except StorageError as exc:
            raise storage_error(exc, t.kind.name, t.name) from exc
