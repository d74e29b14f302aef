"""``bench.runtime``'s pure parts: podman's event time stamps and the quantiles. No timing is asserted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.runtime_events import event_time
from bench.runtime_report import quantile


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
