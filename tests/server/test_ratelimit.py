"""The token bucket itself, on a clock the test moves."""

from __future__ import annotations

import pytest

from plinth.server import ratelimit
from plinth.server.ratelimit import RateLimiter, retry_after


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_caller_gets_its_burst_then_waits_for_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=2, burst=3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)  # one token takes 1/rate seconds
    clock.now += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") == pytest.approx(0.5)


def test_a_refused_request_takes_nothing() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=1, burst=1, clock=clock)
    assert limiter.take("a") == 0.0
    for _ in range(100):
        assert limiter.take("a") > 0
    clock.now += 1.0
    assert limiter.take("a") == 0.0  # the refusals did not push the next token further away


def test_buckets_refill_only_up_to_the_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=10, burst=5, clock=clock)
    limiter.take("a")
    clock.now += 3600
    assert [limiter.take("a") for _ in range(5)] == [0.0] * 5
    assert limiter.take("a") > 0


def test_callers_have_their_own_buckets() -> None:
    limiter = RateLimiter(rate=1, burst=2, clock=Clock())
    assert [limiter.take("runaway") for _ in range(2)] == [0.0, 0.0]
    assert limiter.take("runaway") > 0
    assert limiter.take("other") == 0.0
    assert limiter.take(("a", "tuple")) == 0.0


@pytest.mark.parametrize(("wait", "header"), [(0.001, "1"), (0.5, "1"), (1.0, "1"), (1.01, "2"), (59.2, "60")])
def test_retry_after_is_whole_seconds_rounded_up_and_at_least_one(wait: float, header: str) -> None:
    assert retry_after(wait) == header


def test_the_table_of_buckets_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 100)
    clock = Clock()
    limiter = RateLimiter(rate=1, burst=5, clock=clock)
    for i in range(1000):
        limiter.take(f"ip{i}")
        clock.now += 0.001
    assert len(limiter._buckets) <= 100


def test_a_sweep_keeps_the_buckets_that_are_not_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 10)
    clock = Clock()
    limiter = RateLimiter(rate=1, burst=2, clock=clock)
    for _ in range(3):
        limiter.take("runaway")
    for i in range(9):
        limiter.take(f"once{i}")
    clock.now += 1.5  # the callers seen once are full again; the runaway has 1.5 of its 2 tokens
    limiter.take("newcomer")  # the eleventh caller: a sweep
    assert set(limiter._buckets) == {"runaway", "newcomer"}
    assert limiter.take("runaway") == 0.0
    assert limiter.take("runaway") > 0  # a forgotten bucket would have started full


def test_negative_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        RateLimiter(rate=-1, burst=1)
