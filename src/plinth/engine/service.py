"""The engine's facade: every verb for every kind, in one fixed order (``kinds/base.py``).

``Engine`` is :class:`~plinth.engine.core.EngineCore` (the parts and the steps every path
shares) with the verbs on top: reads here, writes in ``engine/writes.py`` and
``engine/build.py``, deletes in ``engine/deletes.py``, seeding in ``engine/seeding.py``, all
committing through the one compare-and-swap loop of ``engine/commits.py``. The verbs turn a
request into a :class:`~plinth.engine.build.Write` (the body, or the PATCH merge, from the
stored item) and hand it on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from plinth.engine import deletes, pipeline, seeding, writes
from plinth.engine.access import Access, require, stamp_of
from plinth.engine.build import SystemFn, Write, WriteResult
from plinth.engine.core import EngineCore
from plinth.engine.patch import apply_patch
from plinth.engine.render import client_view
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.writes import SYSTEM
from plinth.errors import BadRequest, FieldError, ValidationFailed, not_found
from plinth.kinds.base import Item

__all__ = ["SYSTEM", "Engine", "WriteResult"]


class Engine(EngineCore):
    """Serves every registered kind. Holds no per-request state."""

    async def get(self, info: RequestInfo, access: Access = SYSTEM) -> bytes:
        t = self.target(info)
        self.require_verb(t.kind, "get")
        record = await self.read(t)
        if record is None:
            raise not_found(t.kind.name, t.name)
        require(access, t.kind, "view", t.href, stamp_of(record), lambda: orjson.loads(record.doc))
        return record.doc

    async def create(self, info: RequestInfo, body: Any, access: Access = SYSTEM, dry_run: bool = False) -> WriteResult:
        """POST on a collection: 201 with Location; 409 when the name is taken."""
        self.require_verb(self.kind_of(info), "create")
        body = _object(body)
        t = self.target(info, _body_name(body))
        return await writes.write(self, t, Write(lambda old: body, access, "create", _version_of(body), dry_run))

    async def create_for_action(self, info: RequestInfo, body: Any, access: Access) -> WriteResult:
        """Create an item of a kind clients cannot POST, for an action that adds them (users
        join by ``-invite``). The same pipeline and events as :meth:`create`, without the verb
        check; the action checks its own permission and passes the access the write is made with."""
        body = _object(body)
        t = self.target(info, _body_name(body))
        return await writes.write(self, t, Write(lambda old: body, access, "create"))

    async def upsert(
        self,
        info: RequestInfo,
        body: Any,
        access: Access = SYSTEM,
        dry_run: bool = False,
        system: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """PUT on a collection (``cpln apply``) or on an item: 201 when created, else 200."""
        self.require_verb(self.kind_of(info), "replace")
        body = _object(body)
        name = info.name if info.name is not None else _body_name(body)
        if info.name is not None and "name" in body and body["name"] != info.name:
            raise ValidationFailed([FieldError("name", f"must be '{info.name}', the name in the path")])
        t = self.target(info, name)
        fixed = dict(system or {})
        write = Write(lambda old: body, access, "upsert", _version_of(body), dry_run, lambda old: fixed)
        return await writes.write(self, t, write)

    async def create_missing(self, kind_name: str, org: str, items: Sequence[tuple[Item, Mapping[str, Any]]]) -> int:
        """Create, as the server, those of ``items`` not stored yet (``engine/seeding.py``)."""
        return await seeding.create_missing(self, kind_name, org, items)

    async def patch(
        self,
        info: RequestInfo,
        body: Any,
        access: Access = SYSTEM,
        dry_run: bool = False,
        system: SystemFn | None = None,
    ) -> WriteResult:
        """PATCH on an item: the deep merge of ``engine/patch.py`` onto the stored item.

        ``$drop/<field>`` on a field the kind lists in ``droppable_server_lists`` (a service
        account's ``keys``) removes entries by name; nothing else may touch server fields.
        """
        self.require_verb(self.kind_of(info), "patch")
        body = _object(body)
        t = self.target(info)
        if "name" in body and body["name"] != t.name and not t.kind.schema.addressed_by_id:
            raise ValidationFailed([FieldError("name", "cannot be changed; delete and recreate instead")], t.kind.name)

        drops = {f: body.pop(f"$drop/{f}") for f in t.kind.schema.droppable_server_lists if f"$drop/{f}" in body}
        for field, names in drops.items():
            if not isinstance(names, list):
                raise ValidationFailed([FieldError(f"$drop/{field}", "must be an array of names")], t.kind.name)

        def merged(old: Item | None) -> dict[str, Any]:
            assert old is not None
            patch_body = pipeline.strip_server_owned(t.kind, body)
            return apply_patch(client_view(t.kind, old), patch_body, t.kind.name, t.org)

        def server_values(old: Item | None) -> dict[str, Any]:
            values = dict(system(old)) if system else {}
            for field, names in drops.items():
                kept = [e for e in (old or {}).get(field, []) if not (isinstance(e, dict) and e.get("name") in names)]
                values[field] = kept
            return values

        return await writes.write(self, t, Write(merged, access, "update", _version_of(body), dry_run, server_values))

    async def delete(self, info: RequestInfo, access: Access = SYSTEM, dry_run: bool = False) -> None:
        """Delete an item; with ``dry_run`` only the checks run (missing, protected, dependants)."""
        t = self.target(info)
        self.require_verb(t.kind, "delete")
        await deletes.delete(self, t, access, dry_run)


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object")
    return body


def _body_name(body: dict[str, Any]) -> str:
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationFailed([FieldError("name", "is required")])
    return name


def _version_of(body: dict[str, Any]) -> int | None:
    """A client-sent ``version`` is a precondition (the official CLI sends it in PATCH)."""
    version = body.get("version")
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValidationFailed([FieldError("version", "must be an integer")])
    return version
