"""``bench.runtime``'s pure parts: podman's event time stamps, the quantiles and the split of a
write's delay from the controller's trace. No timing is asserted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.runtime_events import event_time
from bench.runtime_report import quantile
from bench.runtime_trace import PROBER, breakdown, read, segments


def test_event_time_keeps_nanoseconds_fromisoformat_refuses() -> None:
    whole = datetime(2026, 11, 27, 7, 14, 28, tzinfo=UTC).timestamp()
    assert event_time("2026-11-27T07:14:28.205226525Z") == pytest.approx(whole + 0.205226525)
    assert event_time("2026-11-27T07:14:28Z") == whole
    assert event_time("2026-11-27T08:14:28.5+01:00") == pytest.approx(whole + 0.5)


def test_event_time_refuses_what_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="unexpected podman event time"):
        event_time("yesterday")


def test_quantile_is_an_observed_value() -> None:
    values = [float(n) for n in range(1, 21)]  # 20 writes, as the bench makes
    assert quantile(values, 0.5) == 11.0
    assert quantile(values, 0.99) == 20.0
    assert quantile([3.0], 0.99) == 3.0


def test_trace_segments_split_a_write_and_leave_the_prober_out(tmp_path: Path) -> None:
    lines = [
        {"wake": 100.02},
        {"call": ["ps", "--all"], "at": 99.9, "took": 0.2, "by": PROBER},  # the prober, overlapping
        {"call": ["ps", "--all"], "at": 100.12, "took": 0.1, "by": "reconcile"},
        {"call": ["container", "inspect"], "at": 100.22, "took": 0.1, "by": "reconcile"},
        {"call": ["image", "inspect"], "at": 100.32, "took": 0.05, "by": "one_workload"},
        {"call": ["container", "inspect"], "at": 100.37, "took": 0.1, "by": "run"},
        {"call": ["create", "--name"], "at": 100.47, "took": 0.2, "by": "run"},
        {"call": ["start", "x"], "at": 100.7, "took": 0.1, "by": "run"},  # after the create event
    ]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    parts = segments(read(path), sent=100.0, created=100.6)
    assert parts == pytest.approx(
        {
            "API → informer": 0.02,
            "debounce + pass in flight": 0.10,
            "podman ps": 0.1,
            "podman container inspect": 0.2,
            "podman image inspect": 0.05,
            "podman create": 0.13,  # up to the create event
            "between commands": 0.0,
            "prober commands alongside": 1.0,
        },
        abs=1e-6,
    )
    rows = breakdown(read(path), [(100.0, 100.6)])
    assert rows[0] == ["API → informer", "20", "20"]
    assert rows[-1] == ["prober commands alongside", "1", "1"]
