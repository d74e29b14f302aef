"""A create, PUT or PATCH of any kind, from the fresh read to the settled commit.

Each attempt (``engine/commits.py`` runs it until it commits) requires the container, reads
the stored item fresh (never from a cache), and judges the preconditions on it: ``view``,
``create`` and ``edit``, a built-in's read-only rule, a client-sent ``version`` (409 when
stale); it opens a sealed kind's sealed record so the build sees the stored values in the
clear. ``engine/build.py`` then builds what to commit; after the commit what depends on the
item is settled (``EngineCore.settle``). A write that carried a ``version`` and lost its race
gets 409 rather than a retry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from plinth.engine import sealed
from plinth.engine.access import Unrestricted, require, stamp_of
from plinth.engine.address import Address
from plinth.engine.build import Built, Write, WriteResult, build
from plinth.engine.commits import Commit, until_committed
from plinth.engine.core import EngineCore
from plinth.engine.render import SERVER_ACTOR
from plinth.engine.store_errors import storage_error
from plinth.errors import Conflict, not_found
from plinth.kinds.base import Item
from plinth.storage.base import Record, StorageError

#: What internal callers (bootstrap, tests) act as: every permission, recorded as the server.
SYSTEM = Unrestricted(SERVER_ACTOR)


async def write(core: EngineCore, t: Address, w: Write) -> WriteResult:
    """Run the write ``w`` of ``t`` until it commits (or answers without committing).

    A create (``POST``, not a dry run) first takes its name as free without reading it: a new
    name is never in the record cache, so that read cost a statement on every create. Its
    ``INSERT`` fails if the name is taken; only then is the item read, and the create answered
    exactly as if it had been read first (:func:`_taken`); so is a create whose build failed.
    The build runs once either way, and its hooks with it (an extension's ``before_commit``
    may be followed by no commit, as after a lost race: here, when the name was taken).
    """
    unread = w.mode == "create" and not w.dry_run  # only the first attempt skips its read

    async def attempt() -> Commit[WriteResult] | WriteResult:
        nonlocal unread
        parent = await core.read_container(t)
        if unread:
            unread = False
            try:
                built = await build(core, t, parent, None, None, w, None)
            except Exception as exc:
                # What a create that had read first would answer: the taken name's, the
                # preconditions' of a free name, or else this same build's error.
                taken = await _taken(core, t, w)
                if taken is not None:
                    raise taken from None
                await _preconditions(core, t, w, None)
                raise exc
            if isinstance(built, Built):
                return _commit(core, t, w, built, free=True)
        # Fresh: a write's precondition is judged on the stored version, never a cached one.
        old_record = await core.read(t, fresh=True)
        old, sealed_record = await _preconditions(core, t, w, old_record)
        built = await build(core, t, parent, old_record, old, w, sealed_record)
        if isinstance(built, WriteResult):
            return built
        return _commit(core, t, w, built, free=False)

    def too_fast() -> Exception:
        return Conflict("The item is changing too fast to apply this write; retry", {"name": t.name})

    return await until_committed(core.storage, t.kind.name, attempt, too_fast)


def _commit(core: EngineCore, t: Address, w: Write, built: Built, free: bool) -> Commit[WriteResult]:
    """The commit of ``built``; ``free``: built without reading, taking the name as free."""

    async def done() -> WriteResult:
        await core.settle(built.change, built.links)
        result = built.result
        if result.status == 201 and t.kind.lifecycle.shown_once is not None:
            result = replace(result, doc=orjson.dumps(t.kind.lifecycle.shown_once(orjson.loads(result.doc))))
        return result

    async def refused(exc: StorageError) -> Exception | None:
        if free:
            taken = await _taken(core, t, w)
            if taken is not None:
                return taken
        return await core.refusal(built.change, exc, pinned=w.expected is not None)

    return Commit(built.ops, done, refused)


async def _taken(core: EngineCore, t: Address, w: Write) -> Exception | None:
    """For a create built without reading whose commit was refused: what it answers if the
    name is taken (a create of a stored name never gets past its preconditions: 409, or 403
    for a name the caller may not view nor create), ``None`` if it is free."""
    old_record = await core.read(t, fresh=True)
    if old_record is None:
        return None
    try:
        await _preconditions(core, t, w, old_record)
    except Exception as exc:  # the answer
        return exc
    raise AssertionError("a create of a stored name passed its preconditions")


async def _preconditions(
    core: EngineCore, t: Address, w: Write, old_record: Record | None
) -> tuple[Item | None, Record | None]:
    """Judge ``w`` against the stored item; answer it (sealed fields in the clear) and its
    sealed record."""
    if old_record is None and w.mode == "update":
        raise not_found(t.kind.name, t.name)
    old: Item | None = orjson.loads(old_record.doc) if old_record else None
    if old is not None and old_record is not None and w.mode != "update":
        if not w.access.allows(t.kind, "view", t.href, stamp_of(old_record), lambda old=old: old):  # type: ignore[misc]
            # A POST or PUT of a name the caller may not view answers as for a free name
            # (403 naming create) unless the caller may create it: then 409, the name is
            # taken, which unique names tell anyone who may create (docs/api.md, "Errors").
            require(w.access, t.kind, "create", t.href, None, lambda old=old: old)  # type: ignore[misc]
            raise storage_error(StorageError("exists"), t.kind.name, t.name)
        if w.mode == "create":
            raise storage_error(StorageError("exists"), t.kind.name, t.name)
    if old is None and not w.access.holds_any(t.kind, "create"):
        # No policy grants create on any item of this kind: refused before the body is
        # worked on (a create is otherwise judged on its candidate, once built).
        require(w.access, t.kind, "create", t.href, None, lambda: None)
    sealed_record: Record | None = None
    if old is not None and old_record is not None:
        require(w.access, t.kind, "edit", t.href, stamp_of(old_record), lambda old=old: old)  # type: ignore[misc]
        if t.kind.lifecycle.builtin_is_read_only and old.get("origin") == "builtin" and w.access is not SYSTEM:
            raise Conflict(f"Built-in {t.kind.name} '{t.name}' cannot be edited", {"kind": t.kind.name})
        if t.kind.schema.sealed:
            # Opened to merge and compare in the clear; never stored or served from here.
            sealed_record, values = await _sealed_values(core, t)
            old = {**old, **values}
    if w.expected is not None and old is not None and old["version"] != w.expected:
        raise storage_error(StorageError("conflict"), t.kind.name, t.name)
    return old, sealed_record


async def _sealed_values(core: EngineCore, t: Address) -> tuple[Record | None, dict[str, Any]]:
    """The stored sealed record of ``t`` (fresh) and its fields in the clear."""
    try:
        return await sealed.read_values(core.storage, core.sealer, t.kind, t.key, t.href, fresh=True)
    except StorageError as exc:
        raise storage_error(exc, t.kind.name, t.name) from exc
