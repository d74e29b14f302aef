"""Commands as the runtime controller takes them (``/org/{org}/-runtime/commands``).

With a runtime that leaves commands ``pending`` (``containers``), the controller lists the
org's commands still ``pending`` or ``running`` (``GET``), carries them out, and reports each
stage it reaches (``POST``, ``runtime/observations.py``'s ``CommandBatch``): ``pending ->
running -> completed | failed`` (or ``cancelled``). A stage may only move forward; a report
that would move it back, or touch a finished command, changes nothing (``unchanged``), so a
controller that reports twice does no harm. The commands are the records the kind whose status
reads the runtime owns (``Lifecycle.owned_records``): the engine names no kind.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from plinth.engine.address import Address
from plinth.engine.core import EngineCore
from plinth.engine.observations import ReportResult, observed_kind
from plinth.engine.store_errors import storage_error
from plinth.errors import FieldError, ValidationFailed
from plinth.kinds.validation import model_errors
from plinth.runtime.observations import COMMAND_NEXT, CommandBatch
from plinth.storage.base import Key, Put, Record, StorageError
from plinth.storage.query import Filter, ListRequest, Term
from plinth.storage.scan import every_record

#: Commands read per page.
PAGE = 500
ACTIVE = Filter(match="any", terms=tuple(Term("=", stage, ("lifecycleStage",)) for stage in ("pending", "running")))


async def active_commands(core: EngineCore, org: str) -> list[dict[str, Any]]:
    """The org's commands still ``pending`` or ``running``, oldest first, each with its
    ``gvc`` and ``workload`` names."""
    kind = observed_kind(core)
    await core.read_container(_org_address(core, org))
    out: list[dict[str, Any]] = []
    for record_kind in kind.lifecycle.owned_records:
        request = ListRequest(org, record_kind, None, PAGE, None, ACTIVE)
        for record in await every_record(core.storage, request):
            gvc, _, workload = record.key.parent.partition("/")
            out.append({**orjson.loads(record.doc), "gvc": gvc, "workload": workload})
    out.sort(key=lambda c: str(c.get("created", "")))
    return out


def parse_updates(body: object) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        raise ValidationFailed([FieldError("", "must be an object with 'commands'")], "commands")
    try:
        return [c.model_dump(mode="json") for c in CommandBatch.model_validate(body).commands]
    except ValidationError as exc:
        raise ValidationFailed(model_errors(exc), "commands") from None


async def update_commands(core: EngineCore, org: str, updates: list[dict[str, Any]]) -> ReportResult:
    """Move each command to its reported stage (module docstring)."""
    kind = observed_kind(core)
    await core.read_container(_org_address(core, org))
    result = ReportResult()
    for update in updates:
        label = f"{update['gvc']}/{update['workload']}/{update['id']}"
        key = Key(org, kind.lifecycle.owned_records[0], f"{update['gvc']}/{update['workload']}", update["id"])
        try:
            outcome = await _update_one(core, key, update)
        except StorageError as exc:
            raise storage_error(exc, kind.name, update["workload"]) from exc
        getattr(result, outcome).append(label)
    return result


async def _update_one(core: EngineCore, key: Key, update: dict[str, Any]) -> str:
    for _ in range(10):
        record = await core.storage.get(key, fresh=True)
        if record is None:
            return "missing"
        doc = orjson.loads(record.doc)
        stage = update["lifecycleStage"]
        if stage not in COMMAND_NEXT.get(str(doc.get("lifecycleStage")), frozenset()):
            return "unchanged"
        doc.update(
            lifecycleStage=stage,
            status={**(doc.get("status") or {}), **update["status"]},
            lastModified=core.clock(),
            version=int(doc.get("version", 1)) + 1,
        )
        try:
            await core.storage.commit(
                [Put(Record(key, record.id, record.version + 1, orjson.dumps(doc)), record.version)]
            )
        except StorageError as exc:
            if exc.code == "unavailable":
                raise
            continue  # another report moved it meanwhile: read again
        return "stored"
    return "unchanged"


def _org_address(core: EngineCore, org: str) -> Address:
    return Address(observed_kind(core), org, None, "")
