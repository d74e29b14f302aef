"""Running a log query over the store: Loki's ``query_range`` answer, and the rows a tail sends.

``select`` resolves the selector to streams (every stream of the org is matched in Python:
an org has few), walks each selected workload's ``(workload_id, ts)`` index in the query's
direction, merges the walks by time, keeps the lines of selected streams that pass the line
filters, and stops at ``limit``: "the last 1,000 lines" reads about 1,000 rows per workload,
however many are stored.

The answer is Loki's ``streams`` result: one entry per stream with its labels and its
``[["<ns>", "line"], ...]`` values, each stream's values in the query's direction, streams in
the order their first line was met.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from plinth.runtime.logs.logql import LogQuery
from plinth.runtime.logs.params import LogParams, ParamError, parse_params
from plinth.runtime.logs.store import LogStore, Row, Stream


def matching_streams(store: LogStore, org: str, query: LogQuery) -> dict[int, Stream]:
    """The org's streams the selector selects, by id."""
    return {s.id: s for s in store.streams(org) if query.selects(s.labels)}


def select(store: LogStore, streams: Mapping[int, Stream], params: LogParams, max_id: int | None = None) -> list[Row]:
    """Up to ``params.limit`` lines of ``streams`` in ``[start, end)`` passing the line
    filters, in the direction asked (ties in collection order), collected at or before
    ``max_id`` when given."""
    workloads = sorted({s.workload_id for s in streams.values()})
    walks = [store.scan(w, params.start, params.end, params.backward, max_id) for w in workloads]
    sign = -1 if params.backward else 1
    merged: Iterable[Row] = heapq.merge(*walks, key=lambda row: (sign * row[1], sign * row[0]))
    keep = params.query.line_test()
    rows: Iterator[Row] = (r for r in merged if r[2] in streams and (keep is None or keep(r[3])))
    try:
        return list(itertools.islice(rows, params.limit))
    finally:
        for walk in walks:
            walk.close()


def as_streams(rows: Sequence[Row], streams: Mapping[int, Stream]) -> list[dict[str, Any]]:
    """Loki's ``streams`` list: rows grouped by stream, in the order given."""
    grouped: dict[int, list[list[str]]] = {}
    for _, ts, stream_id, line in rows:
        grouped.setdefault(stream_id, []).append([str(ts), line])
    return [{"stream": dict(streams[sid].labels), "values": values} for sid, values in grouped.items()]


def query_range(store: LogStore, org: str, params: LogParams) -> dict[str, Any]:
    """Loki's ``query_range`` answer for ``params`` over ``org``'s lines."""
    streams = matching_streams(store, org, params.query)
    rows = select(store, streams, params)
    return {"status": "success", "data": {"resultType": "streams", "result": as_streams(rows, streams)}}


def answer(store: LogStore, org: str, params: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
    """``(200, Loki's answer)``, or ``(400, Plinth's error shape)`` naming the bad parameter."""
    try:
        checked = parse_params(params)
    except ParamError as exc:
        return exc.status, exc.body()
    return 200, query_range(store, org, checked)
