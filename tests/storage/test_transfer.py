"""``plinth export`` / ``plinth import`` end to end: a store a real server filled moves
SQLite -> PostgreSQL -> SQLite through the real commands, and nothing changes on the way.

Every table is read directly (not through the API) and compared column by column, documents as
parsed JSON (PostgreSQL's jsonb keeps its own key order and spacing). A service account key
minted before the move authenticates against servers started on the imported stores, and new
events there number after the imported ones.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.api.authz_support import ok, service_account_with_key
from tests.support.server import start_server

ORG = "acme"
CLI_TIMEOUT_S = 60
Tables = dict[str, list[tuple[Any, ...]]]


@dataclass
class Source:
    """A SQLite store filled by a real server, stopped, and its export."""

    data_dir: Path
    export: Path
    admin_key: str
    robot_key: str


def plinth(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLINTH_")}
    return subprocess.run(
        [sys.executable, "-m", "plinth", *args], input=stdin, capture_output=True, env=env, timeout=CLI_TIMEOUT_S
    )


def succeeds(*args: str) -> subprocess.CompletedProcess[bytes]:
    done = plinth(*args)
    assert done.returncode == 0, done.stderr.decode()
    return done


def fill(api: Any) -> str:
    """A bit of everything, with updates and deletions so versions and event logs have depth."""
    ok(api.post(f"/org/{ORG}/gvc", json={"name": "g1", "spec": {"loadBalancer": {"dedicated": True}}}), 201)
    ok(api.patch(f"/org/{ORG}/gvc/g1", json={"spec": {"env": [{"name": "A", "value": "1"}]}}))
    ok(api.post(f"/org/{ORG}/gvc", json={"name": "gone"}), 201)
    ok(api.delete(f"/org/{ORG}/gvc/gone"), 202)
    route = {"prefix": "/", "workloadLink": "//gvc/g1/workload/web"}
    ok(api.post(f"/org/{ORG}/domain", json={"name": "d1.example.com", "spec": {"ports": [{"routes": [route]}]}}), 201)
    ok(api.post(f"/org/{ORG}/gvc/g1/volumeset", json={"name": "v1", "spec": {"initialCapacity": 10}}), 201)
    ok(api.patch(f"/org/{ORG}/gvc/g1/volumeset/v1", json={"spec": {"initialCapacity": 20}}))
    robot_key = service_account_with_key(api, ORG, "robot", description="über robot ✓")
    ok(api.post(f"/org/{ORG}/group", json={"name": "bots", "memberLinks": ["//serviceaccount/robot"]}), 201)
    binding = {"permissions": ["view"], "principalLinks": ["//group/bots"]}
    policy = {"name": "bots-view-gvc", "targetKind": "gvc", "target": "all", "bindings": [binding]}
    ok(api.post(f"/org/{ORG}/policy", json=policy), 201)
    ok(api.patch(f"/org/{ORG}/policy/bots-view-gvc", json={"tags": {"team": "ci", "n": 3}}))
    return robot_key


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    data_dir = tmp_path_factory.mktemp("source")
    server = start_server(data_dir, org=ORG)
    try:
        with server.client() as api:
            robot_key = fill(api)
            assert server_accepts(server.url, robot_key)
    finally:
        server.stop()
    export = data_dir.parent / "source.jsonl"
    succeeds("export", "--data-dir", str(data_dir), "--output", str(export))
    return Source(data_dir, export, server.key, robot_key)


def server_accepts(url: str, key: str) -> bool:
    import httpx

    response = httpx.get(f"{url}/org/{ORG}/gvc/g1", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    return response.status_code == 200


def _rows(fetch: Any, doc_columns: dict[str, int]) -> Tables:
    tables: Tables = {}
    for table, columns, order in (
        ("resources", "org, kind, parent, name, id, version, doc", "org, kind, parent, name"),
        ("refs", "org, kind, parent, name, target", "org, kind, parent, name, target"),
        ("events", "seq, org, kind, parent, name, id, created, doc", "seq"),
        ("meta", "name, value", "name"),
    ):
        rows = fetch(f"SELECT {columns} FROM {table} ORDER BY {order}")
        at = doc_columns.get(table)
        tables[table] = [
            tuple(json.loads(v) if i == at else v for i, v in enumerate(row)) for row in rows
        ]  # documents parsed; every other column exactly as stored
    return tables


def sqlite_tables(data_dir: Path) -> Tables:
    conn = sqlite3.connect(data_dir / "plinth.db")
    try:
        return _rows(lambda q: conn.execute(q).fetchall(), {"resources": 6, "events": 7})
    finally:
        conn.close()


def postgres_tables(url: str) -> Tables:
    with psycopg.connect(url) as conn:
        fetch = lambda q: conn.execute(q.replace("doc FROM", "doc::text FROM")).fetchall()  # noqa: E731
        return _rows(fetch, {"resources": 6, "events": 7})


@pytest.mark.postgres
@pytest.mark.timeout(180)
def test_sqlite_to_postgres_to_sqlite_is_lossless(source: Source, fresh_pg_url: str, tmp_path: Path) -> None:
    database_url = fresh_pg_url
    original = sqlite_tables(source.data_dir)
    assert {name: len(rows) for name, rows in original.items()} == {
        name: n for name, n in zip(("resources", "refs", "events", "meta"), _header_counts(source.export), strict=True)
    }
    assert any(row[0].startswith("signing.key.") for row in original["meta"])
    assert any(row[2] == "gvc" and row[4] == "gone" for row in original["events"]), "a deleted record's events"

    # The signing keys travel sealed with the source's secrets key: the target's servers need that key.
    source_keys = source.data_dir / "secrets.key"
    succeeds("import", str(source.export), "--database-url", database_url, "--secrets-key-file", str(source_keys))
    assert postgres_tables(database_url) == original

    back = tmp_path / "back"
    back.mkdir()
    shutil.copy(source_keys, back / "secrets.key")
    exported = succeeds("export", "--database-url", database_url).stdout  # to standard output
    imported = plinth("import", "-", "--data-dir", str(back), stdin=exported)
    assert imported.returncode == 0, imported.stderr.decode()
    assert sqlite_tables(back) == original
    assert [json.loads(line) for line in exported.splitlines()] == [
        json.loads(line) for line in source.export.read_bytes().splitlines()
    ], "both backends export the same file"

    # Keys minted before the move work on both new homes, and new events come after the old.
    last_seq = original["events"][-1][0]
    g1_events = [row for row in original["events"] if row[2] == "gvc" and row[4] == "g1"]
    for data_dir, url in ((tmp_path / "pg-server", database_url), (back, None)):
        server = start_server(data_dir, url, org=ORG, extra_args=("--secrets-key-file", str(source_keys)))
        try:
            assert "Admin key (shown once" not in "\n".join(server.log_lines()), "the store was bootstrapped again"
            assert server_accepts(server.url, source.robot_key)
            assert server_accepts(server.url, source.admin_key)
            with server.client(source.admin_key) as api:
                history = ok(api.get(f"/org/{ORG}/gvc/g1/-eventlog"))["items"]
                assert [e["id"] for e in history] == [row[5] for row in g1_events], "the imported history is served"
                ok(api.post(f"/org/{ORG}/gvc", json={"name": "after-move"}), 201)
        finally:
            server.stop()
        tables = postgres_tables(database_url) if url else sqlite_tables(data_dir)
        assert next(row[0] for row in tables["events"] if row[4] == "after-move") > last_seq


def _header_counts(path: Path) -> tuple[int, ...]:
    counts = json.loads(path.read_bytes().split(b"\n", 1)[0])["counts"]
    return (counts["record"], counts["ref"], counts["event"], counts["meta"])


def test_import_refuses_a_store_that_is_not_empty(source: Source) -> None:
    before = sqlite_tables(source.data_dir)
    refused = plinth("import", str(source.export), "--data-dir", str(source.data_dir))
    assert refused.returncode == 1
    assert "not empty" in refused.stderr.decode()
    assert sqlite_tables(source.data_dir) == before


def test_import_refuses_a_truncated_file_before_loading_anything(source: Source, tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(b"".join(source.export.read_bytes().splitlines(keepends=True)[:-3]))
    refused = plinth("import", str(truncated), "--data-dir", str(tmp_path / "target"))
    assert refused.returncode == 1
    assert "truncated" in refused.stderr.decode()
    assert not (tmp_path / "target" / "plinth.db").exists()


def test_export_of_a_missing_store_fails_clearly(tmp_path: Path) -> None:
    refused = plinth("export", "--data-dir", str(tmp_path / "nothing"))
    assert refused.returncode == 1
    assert "no store to export" in refused.stderr.decode()
    assert not (tmp_path / "nothing").exists()
