"""``Status.depends_on`` is what drives status refreshes: a write refreshes the statuses that
declare they read it, and only those (``engine/dependencies.py``, ``kinds/base.py``).

Three kinds of this test's own, served beside every real kind: a ``note``; a ``board`` whose
status reads the note it links to (``ReadsLinked``) and a ``sketch`` whose status computes the
same thing but declares nothing; and a ``pin`` whose status lists the boards that link to it
(``ReadsLinkers``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine
from plinth.kinds import REGISTRY
from plinth.kinds.base import Item, KindContext, KindSpec, ReadsLinked, ReadsLinkers, Reference, Rules, Schema, Status
from plinth.kinds.spec_model import SpecModel
from plinth.storage.base import Storage
from tests.aio import RunAsync


class LinksSpec(SpecModel):
    noteLink: str | None = None
    pinLink: str | None = None


def _references(item: Item, org: str) -> list[Reference]:
    spec = item.get("spec") or {}
    return [
        Reference(f"spec.{field}", spec[field], frozenset({kind}), must_exist=False)
        for field, kind in (("noteLink", "note"), ("pinLink", "pin"))
        if spec.get(field)
    ]


def _note_description(item: Item, ctx: KindContext) -> dict[str, Any]:
    link = (item.get("spec") or {}).get("noteLink")
    note = ctx.lookup(f"/org/{ctx.org}/note/{link.rsplit('/', 1)[-1]}") if link else None
    return {"note": note.get("description") if note else None}


def _boards(item: Item, ctx: KindContext) -> dict[str, Any]:
    return {"boards": list(ctx.referrers)}


LINKING = Rules(references=_references)
KINDS = {
    **REGISTRY,
    "note": KindSpec(name="note", scope="org"),
    "board": KindSpec(
        name="board",
        scope="org",
        schema=Schema(spec_model=LinksSpec),
        rules=LINKING,
        status=Status(compute=_note_description, depends_on=(ReadsLinked(frozenset({"note"})),)),
    ),
    "sketch": KindSpec(
        name="sketch", scope="org", schema=Schema(spec_model=LinksSpec), rules=LINKING, status=Status(_note_description)
    ),
    "pin": KindSpec(
        name="pin", scope="org", status=Status(compute=_boards, depends_on=(ReadsLinkers(frozenset({"board"})),))
    ),
}


def _status(engine: Engine, run_async: RunAsync, kind: str, name: str) -> Any:
    return orjson.loads(run_async(engine.get(RequestInfo(kind=kind, org="acme", name=name))))["status"]


def test_a_write_refreshes_the_statuses_that_declare_they_read_it_and_no_other(
    sqlite_store: Storage, run_async: RunAsync
) -> None:
    engine = Engine(sqlite_store, KINDS)

    async def scenario() -> None:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await engine.upsert(RequestInfo(kind="note", org="acme"), {"name": "n1", "description": "first"})
        for kind in ("board", "sketch"):
            await engine.upsert(RequestInfo(kind=kind, org="acme"), {"name": "b1", "spec": {"noteLink": "//note/n1"}})
        await engine.upsert(RequestInfo(kind="note", org="acme"), {"name": "n1", "description": "second"})

    run_async(scenario())
    assert _status(engine, run_async, "board", "b1") == {"note": "second"}  # ReadsLinked note: refreshed
    assert _status(engine, run_async, "sketch", "b1") == {"note": "first"}  # declares nothing: as written


def test_a_write_of_a_linking_item_refreshes_the_status_that_reads_its_linkers(
    sqlite_store: Storage, run_async: RunAsync
) -> None:
    engine = Engine(sqlite_store, KINDS)

    async def scenario() -> None:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await engine.upsert(RequestInfo(kind="pin", org="acme"), {"name": "p1"})
        await engine.upsert(RequestInfo(kind="board", org="acme"), {"name": "b1", "spec": {"pinLink": "//pin/p1"}})
        await engine.upsert(RequestInfo(kind="board", org="acme"), {"name": "b2", "spec": {"pinLink": "//pin/p1"}})

    run_async(scenario())
    assert _status(engine, run_async, "pin", "p1") == {"boards": ["/org/acme/board/b1", "/org/acme/board/b2"]}

    async def unlink() -> None:
        await engine.upsert(RequestInfo(kind="board", org="acme"), {"name": "b1", "spec": {}})

    run_async(unlink())
    assert _status(engine, run_async, "pin", "p1") == {"boards": ["/org/acme/board/b2"]}


class CountingReferrers:
    """The store, recording each question of which items link to a target."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    async def referrers(self, org: str, href: str, kinds: Any) -> Any:
        self.asked.append((href, tuple(kinds)))
        return await self._storage.referrers(org, href, kinds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


def test_a_write_asks_once_for_what_links_to_it_whatever_the_number_of_linking_kinds(
    sqlite_store: Storage, run_async: RunAsync
) -> None:
    # A card reads the note it links to, as a board does: two kinds link to notes.
    kinds = {**KINDS, "card": dataclasses.replace(KINDS["board"], name="card")}
    counting = CountingReferrers(sqlite_store)
    engine = Engine(counting, kinds)  # type: ignore[arg-type]

    async def scenario() -> None:
        await engine.upsert(RequestInfo(kind="org"), {"name": "acme"})
        await engine.upsert(RequestInfo(kind="note", org="acme"), {"name": "n1", "description": "first"})
        for kind in ("board", "card"):
            await engine.upsert(RequestInfo(kind=kind, org="acme"), {"name": "b1", "spec": {"noteLink": "//note/n1"}})
        counting.asked.clear()
        await engine.upsert(RequestInfo(kind="note", org="acme"), {"name": "n1", "description": "second"})

    run_async(scenario())
    # Once before the commit and once in the settle after it, each for both kinds together.
    assert counting.asked == [("/org/acme/note/n1", ("board", "card"))] * 2
    assert _status(engine, run_async, "board", "b1") == {"note": "second"}
    assert _status(engine, run_async, "card", "b1") == {"note": "second"}
