"""Read a store's tables directly (no server) and check that records and events agree.

Used after a server was killed: nothing the API would smooth over (a half-written row, an
event without its record or a record without its event) can hide here.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from plinth.kinds import REGISTRY

KeyTuple = tuple[str, str, str, str]


@dataclass
class Row:
    key: KeyTuple
    id: str
    version: int
    doc: dict[str, Any]


@dataclass
class EventRow:
    seq: int
    key: KeyTuple
    id: str
    created: str
    doc: dict[str, Any]


@dataclass
class Snapshot:
    records: dict[KeyTuple, Row]
    events: dict[KeyTuple, list[EventRow]]


def read_sqlite(path: Path) -> Snapshot:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        resources = conn.execute("SELECT org, kind, parent, name, id, version, doc FROM resources").fetchall()
        events = conn.execute(
            "SELECT seq, org, kind, parent, name, id, created, doc FROM events ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return _snapshot(resources, events)


def read_postgres(url: str) -> Snapshot:
    with psycopg.connect(url) as conn:
        # ::text: the document exactly as stored, parsed here rather than by the driver.
        resources = conn.execute("SELECT org, kind, parent, name, id, version, doc::text FROM resources").fetchall()
        events = conn.execute(
            "SELECT seq, org, kind, parent, name, id, created, doc::text FROM events ORDER BY seq"
        ).fetchall()
    return _snapshot(resources, events)


def _snapshot(resources: list[Any], events: list[Any]) -> Snapshot:
    records: dict[KeyTuple, Row] = {}
    for org, kind, parent, name, id_, version, doc in resources:
        key = (org, kind, parent, name)
        records[key] = Row(key, id_, int(version), json.loads(doc))  # a half-written document fails here
    by_key: dict[KeyTuple, list[EventRow]] = defaultdict(list)
    for seq, org, kind, parent, name, id_, created, doc in events:
        key = (org, kind, parent, name)
        by_key[key].append(EventRow(int(seq), key, id_, created, json.loads(doc)))
    return Snapshot(records, dict(by_key))


def href(key: KeyTuple) -> str:
    org, kind, parent, name = key
    if kind == "org":
        return f"/org/{name}"
    return f"/org/{org}/gvc/{parent}/{kind}/{name}" if parent else f"/org/{org}/{kind}/{name}"


def check_documents_match_their_rows(snapshot: Snapshot) -> None:
    """Every stored document is whole and says what its key columns say (the key of a kind
    addressed by id, a quota, is its id; its name repeats)."""
    for key, row in snapshot.records.items():
        doc = row.doc
        kind = REGISTRY.get(key[1])
        named = doc.get("id") if kind is not None and kind.schema.addressed_by_id else doc.get("name")
        assert (doc.get("kind"), named, doc.get("id"), doc.get("version")) == (
            key[1],
            key[3],
            row.id,
            row.version,
        ), f"{key}: document does not match its row"
        self_links = [link["href"] for link in doc.get("links", []) if link.get("rel") == "self"]
        assert self_links == [href(key)], f"{key}: self link {self_links}"
    for key, events in snapshot.events.items():
        for event in events:
            assert event.doc["id"] == event.id and event.doc["created"] == event.created, f"{key}: event row"
            assert event.doc["context"]["link"] == href(key), f"{key}: event of another item"


def check_history(snapshot: Snapshot, key: KeyTuple) -> int:
    """The event log of a record created once and only updated since: a created event at
    version 1, then one updated event per version, consecutive and in order, ending at the
    stored version, the last one at the record's lastModified. Returns the number of updates."""
    row = snapshot.records.get(key)
    assert row is not None, f"{key}: missing"
    events = snapshot.events.get(key, [])
    assert [e.doc["status"] for e in events] == ["created"] + ["updated"] * (len(events) - 1), f"{key}: {events}"
    versions = [e.doc["context"]["version"] for e in events]
    assert versions == list(range(1, row.version + 1)), f"{key}: event versions {versions}, stored v{row.version}"
    assert events[0].created == row.doc["created"], f"{key}: created"
    assert events[-1].created == row.doc["lastModified"], f"{key}: the last event is not the stored write"
    return len(events) - 1
