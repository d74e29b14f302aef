"""The log store and Loki's query_range over it (runtime/logs/store.py, query.py, params.py), on
real SQLite: answers in Loki's shape, paging as the official CLI pages (commands/logs.js of
@controlplane/cli 3.10.1), the per-workload bound, positions kept across a reopening, and
parameters refused by name."""

from __future__ import annotations

import argparse
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plinth.runtime.logs import DEFAULT_RETENTION_BYTES, add_arguments
from plinth.runtime.logs.query import answer
from plinth.runtime.logs.records import Record
from plinth.runtime.logs.store import ROW_OVERHEAD, LogStore, Position

BASE = 1_800_000_000 * 10**9
ORG = "acme"


def labels(workload: str, replica: str) -> dict[str, str]:
    return {
        "org": ORG,
        "gvc": "main",
        "workload": workload,
        "container": "main",
        "location": "aws-us-east-2",
        "provider": "aws",
        "replica": replica,
    }


def fill(store: LogStore, workload: str, replica: str, count: int, offset_ns: int = 0, step: int = 10) -> None:
    """``count`` lines, ``step`` ns apart from ``BASE + offset_ns``, alternating stdout/stderr."""
    records = [
        Record(BASE + offset_ns + i * step, "stderr" if i % 2 else "stdout", f"{workload} {replica} {i}")
        for i in range(count)
    ]
    store.append(f"{workload}-{replica}", Position("/x", 1, count), labels(workload, replica), records)


def values(body: dict[str, Any]) -> list[tuple[int, str]]:
    """Every (ts, line) of an answer, merged in time order."""
    return sorted((int(ts), line) for s in body["data"]["result"] for ts, line in s["values"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LogStore]:
    s = LogStore(tmp_path / "logs.sqlite3")
    yield s
    s.close()


def q(**params: Any) -> dict[str, str]:
    base = {"query": '{workload="web"}', "start": str(BASE), "end": str(BASE + 10**12)}
    return {**base, **{k: str(v) for k, v in params.items()}}


def test_the_answer_has_lokis_shape_one_stream_per_label_set(store: LogStore) -> None:
    fill(store, "web", "web-0", 4)
    status, body = answer(store, ORG, q(direction="forward"))
    assert status == 200 and body["status"] == "success" and body["data"]["resultType"] == "streams"
    streams = {s["stream"]["stream"]: s for s in body["data"]["result"]}
    assert set(streams) == {"stdout", "stderr"}
    assert streams["stdout"]["stream"] == {**labels("web", "web-0"), "stream": "stdout"}
    assert streams["stdout"]["values"] == [[str(BASE), "web web-0 0"], [str(BASE + 20), "web web-0 2"]]
    assert streams["stderr"]["values"] == [[str(BASE + 10), "web web-0 1"], [str(BASE + 30), "web web-0 3"]]


def test_backward_answers_the_newest_lines_newest_first(store: LogStore) -> None:
    fill(store, "web", "web-0", 100)
    status, body = answer(store, ORG, q())  # the CLI's default: backward, limit 30
    assert status == 200
    got = values(body)
    assert [line for _, line in got] == [f"web web-0 {i}" for i in range(70, 100)]
    for stream in body["data"]["result"]:
        times = [int(ts) for ts, _ in stream["values"]]
        assert times == sorted(times, reverse=True)


def test_two_replicas_merge_by_time_and_other_workloads_and_orgs_stay_out(store: LogStore) -> None:
    fill(store, "web", "web-0", 50, offset_ns=0)
    fill(store, "web", "web-1", 50, offset_ns=5)
    fill(store, "api", "api-0", 50, offset_ns=1)
    _, body = answer(store, ORG, q(limit=20, direction="forward"))
    got = values(body)
    assert [line for _, line in got] == [f"web web-{i % 2} {i // 2}" for i in range(20)]
    _, other = answer(store, "other-org", q())
    assert other["data"]["result"] == []


def test_time_range_is_start_inclusive_end_exclusive(store: LogStore) -> None:
    fill(store, "web", "web-0", 10)
    _, body = answer(store, ORG, q(start=BASE + 20, end=BASE + 50, direction="forward"))
    assert [ts - BASE for ts, _ in values(body)] == [20, 30, 40]


def test_paging_as_the_cli_does_reads_every_line_once(store: LogStore) -> None:
    """--limit 0: forward, limit=999, start moved one nanosecond past the last line each time."""
    fill(store, "web", "web-0", 2500)
    fill(store, "web", "web-1", 2500, offset_ns=5)
    seen: list[tuple[int, str]] = []
    params = q(limit=999, direction="forward")
    while True:
        status, body = answer(store, ORG, params)
        assert status == 200
        page = values(body)
        seen += page
        if len(page) < 999:
            break
        params["start"] = str(page[-1][0] + 1)
    assert len(seen) == 5000 == len(set(seen))
    assert seen == sorted(seen)


def test_line_filters_and_regex_selectors_apply(store: LogStore) -> None:
    fill(store, "web", "web-0", 30)
    fill(store, "web", "web-1", 30)
    query = '{workload=~"w.+", replica!="web-0", stream="stderr"} |~ "web-1 1[0-9]$" != "13"'
    _, body = answer(store, ORG, q(query=query, direction="forward"))
    assert [line for _, line in values(body)] == [f"web web-1 {i}" for i in (11, 15, 17, 19)]


def test_the_bound_drops_the_oldest_lines_first(tmp_path: Path) -> None:
    bound = 20_000
    store = LogStore(tmp_path / "bounded.sqlite3", retention_bytes=bound)
    written: list[tuple[int, str]] = []
    for batch in range(20):
        records = [Record(BASE + batch * 1000 + i, "stdout", f"{batch:03d}-{i:03d}" + "x" * 90) for i in range(100)]
        store.append("c1", Position("/x", 1, batch), labels("web", "web-0"), records)
        written += [(r.ts, r.line) for r in records]
    fill(store, "api", "api-0", 10)  # another workload's lines are not its to drop
    _, body = answer(store, ORG, q(limit=5000, direction="forward"))
    got = values(body)
    held = sum(len(line.encode()) + ROW_OVERHEAD for _, line in got)
    assert 0 < held <= bound
    assert len(got) < len(written)
    assert got == written[-len(got) :]  # the newest lines, every one of them: only the oldest went
    _, api = answer(store, ORG, q(query='{workload="api"}', limit=5000))
    assert len(values(api)) == 10
    store.close()


def test_positions_are_kept_with_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "logs.sqlite3"
    store = LogStore(path)
    store.append("c1", Position("/var/log/c1", 42, 1234), labels("web", "web-0"), [Record(BASE, "stdout", "a")])
    store.close()
    again = LogStore(path)
    assert again.position("c1") == Position("/var/log/c1", 42, 1234)
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):  # the workloads' output: the owner's only
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    again.forget(["c1"])
    assert again.position("c1") is None
    again.close()


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"query": ""}, "query", "required"),
        ({"query": '{workload="web"} | json'}, "query", "'| json' is not supported"),
        ({"limit": "ten"}, "limit", "not an integer"),
        ({"limit": "0"}, "limit", "between 1 and 5000"),
        ({"limit": "5001"}, "limit", "between 1 and 5000"),
        ({"direction": "sideways"}, "direction", "forward or backward"),
        ({"start": "yesterday"}, "start", "not a time"),
        ({"end": "2026-13-45T00:00:00Z"}, "end", "not a time"),
        ({"start": str(BASE + 10), "end": str(BASE)}, "end", "before start"),
        ({"delay_for": "60"}, "delay_for", "between 0 and 5"),
    ],
)
def test_bad_parameters_are_400s_naming_them(store: LogStore, params: dict[str, str], field: str, says: str) -> None:
    status, body = answer(store, ORG, {**q(), **params})
    assert status == 400
    assert body["status"] == 400 and body["code"] == "invalid"
    assert body["details"]["errors"][0]["path"] == field
    assert says in body["details"]["errors"][0]["message"]


def test_times_are_read_as_loki_reads_them(store: LogStore) -> None:
    fill(store, "web", "web-0", 1)
    forms = [
        str(BASE),
        str(BASE // 10**9),
        f"{BASE // 10**9}.000000000",
        "2027-01-15T08:00:00Z",
        "2027-01-15T08:00:00.000000000+00:00",
    ]
    for start in forms:
        status, body = answer(store, ORG, q(start=start, end=str(BASE + 1)))
        assert status == 200 and len(values(body)) == 1, start
    status, body = answer(store, ORG, q(start=str(BASE + 1), end=str(BASE + 2)))
    assert status == 200 and values(body) == []


def test_the_retention_setting_is_a_positive_number_of_bytes() -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_arguments(parser)
    assert parser.parse_args([]).log_retention_bytes == DEFAULT_RETENTION_BYTES == 16 * 1024 * 1024
    assert parser.parse_args(["--log-retention-bytes", "1000"]).log_retention_bytes == 1000
    for bad in ("0", "-5", "lots"):
        with pytest.raises(argparse.ArgumentError, match="log-retention-bytes"):
            parser.parse_args(["--log-retention-bytes", bad])


def test_a_workloads_lines_can_be_dropped_and_others_stay(store: LogStore) -> None:
    fill(store, "web", "web-0", 10)
    fill(store, "api", "api-0", 10)
    assert store.drop_workload(ORG, "main", "web") == 10
    assert store.drop_workload(ORG, "main", "web") == 0
    _, web = answer(store, ORG, q())
    _, api = answer(store, ORG, q(query='{workload="api"}'))
    assert web["data"]["result"] == [] and len(values(api)) == 10
    fill(store, "web", "web-0", 3)  # a workload of the same name starts afresh
    _, again = answer(store, ORG, q(limit=100))
    assert [line for _, line in values(again)] == ["web web-0 0", "web web-0 1", "web web-0 2"]
