"""The SQL both backends run for a commit, written once with ``{p}`` for the placeholder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plinth.storage.base import Change, Delete, Key, MetaEntry, Put, Record, Ref, Row, SetMeta, StoredEvent, Tally

_KEY = "org = {p} AND kind = {p} AND parent = {p} AND name = {p}"

INSERT_RESOURCE = (
    "INSERT INTO resources (org, kind, parent, name, id, version, doc) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
UPDATE_RESOURCE = f"UPDATE resources SET id = {{p}}, version = {{p}}, doc = {{p}} WHERE {_KEY} AND version = {{p}}"
DELETE_RESOURCE = f"DELETE FROM resources WHERE {_KEY} AND version = {{p}}"
#: A delete the change log records: the deleted record's last state comes back.
DELETE_RESOURCE_RETURNING = f"{DELETE_RESOURCE} RETURNING doc"
EXISTS_RESOURCE = f"SELECT version FROM resources WHERE {_KEY}"
SELECT_RESOURCE = f"SELECT id, version, doc FROM resources WHERE {_KEY}"
DELETE_REFS = f"DELETE FROM refs WHERE {_KEY}"
INSERT_REF = "INSERT INTO refs (org, kind, parent, name, target) VALUES ({p}, {p}, {p}, {p}, {p})"
INSERT_EVENT = (
    "INSERT INTO events (org, kind, parent, name, id, created, doc) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
SELECT_EVENTS = f"SELECT seq, doc FROM events WHERE {_KEY} AND seq > {{p}} ORDER BY seq LIMIT {{p}}"
INSERT_CHANGE = (
    "INSERT INTO changes (org, kind, parent, name, type, doc, at) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
SELECT_CHANGES = "SELECT seq, org, kind, parent, name, type, doc FROM changes WHERE seq > {p} ORDER BY seq LIMIT {p}"
#: The change log's horizon (meta) and newest seq; the horizon is never above the newest.
CHANGES_HORIZON_META = "watch.horizon"
CHANGE_BOUNDS = "SELECT (SELECT value FROM meta WHERE name = 'watch.horizon'), (SELECT max(seq) FROM changes)"
#: The seq a trim drops up to: past the last ``keep`` seqs, or older than a time; never the newest.
TRIM_CUTOFF = (
    "SELECT max(seq) FROM changes WHERE seq < (SELECT max(seq) FROM changes)"
    " AND (seq <= (SELECT max(seq) FROM changes) - {p} OR at < {p})"
)
TRIM_CHANGES = "DELETE FROM changes WHERE seq <= {p}"
SELECT_META = "SELECT value FROM meta WHERE name = {p}"
# substr/length, not LIKE: a prefix holding % or _ means itself, and both backends spell them alike.
SELECT_META_PREFIX = (
    "SELECT name, value FROM meta WHERE substr(name, 1, length(CAST({p} AS TEXT))) = CAST({p} AS TEXT) ORDER BY name"
)
# A Tally, in each backend's JSON dialect; parameters: :func:`tally_params`. It matches no row
# when the key is missing or when a positive delta would pass the ceiling.
TALLY_SQLITE = (
    "UPDATE resources SET doc = json_set(doc, {p}, max(0, json_extract(doc, {p}) + {p}))"
    f" WHERE {_KEY} AND ({{p}} <= 0 OR json_extract(doc, {{p}}) + {{p}} <= json_extract(doc, {{p}}))"
    " RETURNING doc"
)
TALLY_POSTGRES = (
    "UPDATE resources SET doc = jsonb_set(doc, ARRAY[{p}::text],"
    " to_jsonb(GREATEST(0, (doc->>{p}::text)::bigint + {p})))"
    f" WHERE {_KEY} AND ({{p}} <= 0 OR (doc->>{{p}}::text)::bigint + {{p}} <= (doc->>{{p}}::text)::bigint)"
    " RETURNING doc"
)
SET_META = "INSERT INTO meta (name, value) VALUES ({p}, {p}) ON CONFLICT (name) DO UPDATE SET value = excluded.value"
SET_META_IF_ABSENT = "INSERT INTO meta (name, value) VALUES ({p}, {p}) ON CONFLICT (name) DO NOTHING"
SET_META_REPLACING = "UPDATE meta SET value = {p} WHERE name = {p} AND value = {p}"


def put_change(op: Put) -> tuple[str, str, str, str, str, str] | None:
    """The change a :class:`Put` appends (without its time), or ``None`` when it is not watched."""
    if not op.watched:
        return None
    k = op.record.key
    kind = "ADDED" if op.expected_version is None else "MODIFIED"
    return (k.org, k.kind, k.parent, k.name, kind, op.record.doc.decode())


def delete_change(op: Delete, last_doc: str) -> tuple[str, str, str, str, str, str]:
    """The change a watched :class:`Delete` of a record whose last state was ``last_doc`` appends."""
    k = op.key
    return (k.org, k.kind, k.parent, k.name, "DELETED", last_doc)


def tally_params(op: Tally, key: tuple[str, ...], path: Callable[[str], str]) -> tuple[Any, ...]:
    """The parameters of ``TALLY_*`` for ``op``; ``path`` spells a field as the backend's JSON path."""
    counter, ceiling = path(op.counter), path(op.ceiling)
    return (counter, counter, op.delta, *key, op.delta, counter, op.delta, ceiling)


def tally_change(op: Tally, doc: str) -> tuple[str, str, str, str, str, str]:
    """The change a :class:`Tally` appends: the counter's record as it now is."""
    k = op.key
    return (k.org, k.kind, k.parent, k.name, "MODIFIED", doc)


def change_row(row: Sequence[Any], doc: Callable[[Any], bytes]) -> Change:
    """The :class:`Change` a ``SELECT_CHANGES`` row holds."""
    return Change(int(row[0]), Key(row[1], row[2], row[3], row[4]), row[5], doc(row[6]))


def set_meta(op: SetMeta) -> tuple[str, tuple[str, ...]]:
    """The statement name (in :func:`rendered`) and parameters of a :class:`SetMeta`."""
    if op.replacing is not None:
        return "SET_META_REPLACING", (op.value, op.name, op.replacing)
    return ("SET_META_IF_ABSENT" if op.only_if_absent else "SET_META"), (op.name, op.value)


# Export and import (``Storage.dump`` and ``Storage.load``): every column, in a stable order.
COUNT_ROWS = (
    "SELECT (SELECT count(*) FROM resources), (SELECT count(*) FROM refs),"
    " (SELECT count(*) FROM events), (SELECT count(*) FROM meta)"
)
STORE_IS_EMPTY = (
    "SELECT NOT (EXISTS (SELECT 1 FROM resources) OR EXISTS (SELECT 1 FROM refs)"
    " OR EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM meta))"
)
DUMP_RESOURCES = "SELECT org, kind, parent, name, id, version, doc FROM resources ORDER BY org, kind, parent, name"
DUMP_REFS = "SELECT org, kind, parent, name, target FROM refs ORDER BY org, kind, parent, name, target"
DUMP_EVENTS = "SELECT seq, org, kind, parent, name, id, created, doc FROM events ORDER BY seq"
DUMP_META = "SELECT name, value FROM meta ORDER BY name"
LOAD_EVENT = (
    "INSERT INTO events (seq, org, kind, parent, name, id, created, doc)"
    " VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
LOAD_META = "INSERT INTO meta (name, value) VALUES ({p}, {p})"


def dump_row(table: str, row: Sequence[Any], doc: Callable[[Any], bytes]) -> Row:
    """The row a ``DUMP_*`` statement of ``table`` returned, with ``doc`` turning the driver's
    document value into bytes."""
    if table == "resources":
        return Record(Key(row[0], row[1], row[2], row[3]), row[4], int(row[5]), doc(row[6]))
    if table == "refs":
        return Ref(Key(row[0], row[1], row[2], row[3]), row[4])
    if table == "events":
        return StoredEvent(int(row[0]), Key(row[1], row[2], row[3], row[4]), row[5], row[6], doc(row[7]))
    return MetaEntry(row[0], row[1])


#: Each table's dump statement, in dump order.
DUMP_TABLES = (("resources", DUMP_RESOURCES), ("refs", DUMP_REFS), ("events", DUMP_EVENTS), ("meta", DUMP_META))


def load_params(row: Row) -> tuple[str, tuple[Any, ...]]:
    """The statement name (in :func:`rendered`) and parameters that insert ``row`` verbatim."""
    if isinstance(row, Record):
        k = row.key
        return "INSERT_RESOURCE", (k.org, k.kind, k.parent, k.name, row.id, row.version, row.doc.decode())
    if isinstance(row, Ref):
        k = row.key
        return "INSERT_REF", (k.org, k.kind, k.parent, k.name, row.target)
    if isinstance(row, StoredEvent):
        k = row.key
        return "LOAD_EVENT", (row.seq, k.org, k.kind, k.parent, k.name, row.id, row.created, row.doc.decode())
    return "LOAD_META", (row.name, row.value)


def referrers_sql(n_kinds: int, refs: str = "refs f") -> str:
    """The items of ``kinds`` linking to a target. ``refs``: how the links table is named in the
    FROM clause (SQLite names its index: see ``SQLITE_REFS``)."""
    kinds = ", ".join(["{p}"] * n_kinds)
    return (
        f"SELECT r.org, r.kind, r.parent, r.name, r.id, r.version, r.doc FROM {refs} JOIN resources r "
        "ON r.org = f.org AND r.kind = f.kind AND r.parent = f.parent AND r.name = f.name "
        f"WHERE f.org = {{p}} AND f.target = {{p}} AND f.kind IN ({kinds}) ORDER BY r.kind, r.parent, r.name"
    )


#: SQLite's planner, without statistics, walked every item of the kind in the org (the
#: resources index on org and kind) and probed each one's links: a volume set's status read
#: its 2 referrers in ~0.5 ms with 300 workloads stored, growing with them. Through the links'
#: index on the target first it takes ~0.02 ms whatever the count (the query plan is tested).
SQLITE_REFS = "refs f INDEXED BY refs_by_target"


def render(statement: str, placeholder: str) -> str:
    return statement.replace("{p}", placeholder)


def rendered(placeholder: str) -> dict[str, str]:
    """Every statement above by its name, spelled with one backend's placeholder."""
    return {
        name: render(text, placeholder)
        for name, text in globals().items()
        if name.isupper() and not name.startswith("_") and isinstance(text, str)
    }
