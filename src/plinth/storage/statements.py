"""The SQL both backends run for a commit, written once with ``{p}`` for the placeholder."""

from __future__ import annotations

_KEY = "org = {p} AND kind = {p} AND parent = {p} AND name = {p}"

INSERT_RESOURCE = (
    "INSERT INTO resources (org, kind, parent, name, id, version, doc) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
UPDATE_RESOURCE = f"UPDATE resources SET id = {{p}}, version = {{p}}, doc = {{p}} WHERE {_KEY} AND version = {{p}}"
DELETE_RESOURCE = f"DELETE FROM resources WHERE {_KEY} AND version = {{p}}"
EXISTS_RESOURCE = f"SELECT version FROM resources WHERE {_KEY}"
SELECT_RESOURCE = f"SELECT id, version, doc FROM resources WHERE {_KEY}"
DELETE_REFS = f"DELETE FROM refs WHERE {_KEY}"
INSERT_REF = "INSERT INTO refs (org, kind, parent, name, target) VALUES ({p}, {p}, {p}, {p}, {p})"
INSERT_EVENT = (
    "INSERT INTO events (org, kind, parent, name, id, created, doc) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
SELECT_EVENTS = f"SELECT seq, doc FROM events WHERE {_KEY} AND seq > {{p}} ORDER BY seq LIMIT {{p}}"
SELECT_META = "SELECT value FROM meta WHERE name = {p}"
SET_META = "INSERT INTO meta (name, value) VALUES ({p}, {p}) ON CONFLICT (name) DO UPDATE SET value = excluded.value"
SET_META_IF_ABSENT = "INSERT INTO meta (name, value) VALUES ({p}, {p}) ON CONFLICT (name) DO NOTHING"


def referrers_sql(n_kinds: int) -> str:
    kinds = ", ".join(["{p}"] * n_kinds)
    return (
        "SELECT r.org, r.kind, r.parent, r.name, r.id, r.version, r.doc FROM refs f JOIN resources r "
        "ON r.org = f.org AND r.kind = f.kind AND r.parent = f.parent AND r.name = f.name "
        f"WHERE f.org = {{p}} AND f.target = {{p}} AND f.kind IN ({kinds}) ORDER BY r.kind, r.parent, r.name"
    )


def render(statement: str, placeholder: str) -> str:
    return statement.replace("{p}", placeholder)


def rendered(placeholder: str) -> dict[str, str]:
    """Every statement above by its name, spelled with one backend's placeholder."""
    return {
        name: render(text, placeholder)
        for name, text in globals().items()
        if name.isupper() and not name.startswith("_") and isinstance(text, str)
    }
