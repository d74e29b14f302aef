"""The engines' log file formats (runtime/logs/records.py): podman's CRI lines, docker's JSON
lines, partial lines joined, and the consumed offset never past a line still partial."""

from __future__ import annotations

import json

from plinth.runtime.logs.records import FLUSH_AT, MAX_LINE, Record, parse, parse_time

T0 = "2026-11-27T10:11:12.123456789+00:00"
T0_NS = 1795774272123456789


def cri(ts: str, stream: str, tag: str, text: str) -> bytes:
    return f"{ts} {stream} {tag} {text}\n".encode()


def test_times_keep_nanoseconds_and_zones() -> None:
    assert parse_time(T0) == T0_NS
    assert parse_time("2026-11-27T11:11:12.123456789+01:00") == T0_NS
    assert parse_time("2026-11-27T10:11:12.123456789Z") == T0_NS
    assert parse_time("2026-11-27T10:11:12Z") == T0_NS - 123456789
    assert parse_time("2026-11-27T10:11:12.5Z") == T0_NS - 123456789 + 500_000_000


def test_cri_lines_keep_their_stream_and_time() -> None:
    data = cri(T0, "stdout", "F", "out one") + cri(T0, "stderr", "F", "err one") + cri(T0, "stdout", "F", "")
    records, consumed = parse(data)
    assert records == [
        Record(T0_NS, "stdout", "out one"),
        Record(T0_NS, "stderr", "err one"),
        Record(T0_NS, "stdout", ""),
    ]
    assert consumed == len(data)


def test_partial_records_are_joined_and_timed_by_their_first_part() -> None:
    later = "2026-11-27T10:11:13+00:00"
    data = cri(T0, "stdout", "P", "hel") + cri(later, "stdout", "F", "lo")
    assert parse(data) == ([Record(T0_NS, "stdout", "hello")], len(data))


def test_nothing_is_consumed_past_a_line_still_partial() -> None:
    """A line of another stream completed after a partial one is held back, so the offset kept
    is one the next read starts from without losing or repeating anything."""
    done = cri(T0, "stdout", "F", "first")
    partial = cri(T0, "stdout", "P", "beg")
    other = cri(T0, "stderr", "F", "err")
    records, consumed = parse(done + partial + other + b"2026-11-27T10:1")  # a record half written
    assert records == [Record(T0_NS, "stdout", "first")] and consumed == len(done)
    rest = partial + other + cri(T0, "stdout", "F", "end")
    records, consumed = parse(rest)
    assert records == [Record(T0_NS, "stderr", "err"), Record(T0_NS, "stdout", "begend")]
    assert consumed == len(rest)


def test_docker_json_lines() -> None:
    line = {"log": "hello\n", "stream": "stderr", "time": "2026-11-27T10:11:12.123456789Z"}
    part = {"log": "par", "stream": "stdout", "time": "2026-11-27T10:11:12.123456789Z"}
    end = {"log": "tial\n", "stream": "stdout", "time": "2026-11-27T10:11:13Z"}
    data = b"".join(json.dumps(d).encode() + b"\n" for d in (line, part, end))
    assert parse(data) == ([Record(T0_NS, "stderr", "hello"), Record(T0_NS, "stdout", "partial")], len(data))


def test_unknown_records_are_skipped_and_long_lines_cut() -> None:
    data = b"not a log record\n" + cri(T0, "stdout", "F", "x" * (MAX_LINE + 10))
    records, consumed = parse(data)
    assert [len(r.line) for r in records] == [MAX_LINE] and consumed == len(data)


def test_a_line_that_never_ends_is_taken_cut_once_a_read_holds_nothing_else() -> None:
    part = cri(T0, "stdout", "P", "y" * 8000)
    data = part * (FLUSH_AT // len(part) + 1)
    records, consumed = parse(data)
    assert [(r.stream, len(r.line)) for r in records] == [("stdout", MAX_LINE)] and consumed == len(data)
    assert parse(data[: len(part) * 10]) == ([], 0)  # a shorter read waits for the line's end
