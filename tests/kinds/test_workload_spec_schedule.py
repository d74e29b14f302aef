"""A cron workload's ``job.schedule``: the Kubernetes CronJob syntax, through build_candidate.

The snapshot dialect of the same module keeps its own rules; test_volumeset.py covers it,
and the last tests here pin that the two dialects differ where they should.
"""

from __future__ import annotations

import pytest
from _workload_spec_support import errors_for, pairs, workload, write

from plinth.kinds.cron import kubernetes_schedule_problem, schedule_problem


def cron(schedule: str) -> dict[str, object]:
    return workload("cron", job={"schedule": schedule})


@pytest.mark.parametrize(
    "schedule",
    [
        "* * * * *",
        "0 0 * * *",
        "*/15 * * * *",
        "0-59/10 * * * *",
        "5,10,15-20,40-50/5 * * * *",
        "30 8 * * mon-fri",
        "0 9 1 jan,JUL *",
        "0 0 1-7 * SUN",
        "0 0 ? * 1",
        "0 0 * * ?",
        "5/10 * * * *",
        "0 0 29 feb 0-6",
        "59 23 31 12 6",
        "*/1000 * * * *",
        "0 0 * * 0-6/2",
        "  0   12  *  *  *  ",
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@every 90s",
        "@every 1h30m",
        "@every 1.5h",
    ],
)
def test_kubernetes_schedules_are_accepted(schedule: str) -> None:
    assert errors_for(cron(schedule)) == []


@pytest.mark.parametrize(
    ("schedule", "hint"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("* * * *", "5 fields"),
        ("* * * * * *", "5 fields"),
        ("60 * * * *", "minute field"),
        ("* 24 * * *", "hour field"),
        ("* * 0 * *", "day-of-month field"),
        ("* * 32 * *", "day-of-month field"),
        ("* * * 13 *", "month field"),
        ("* * * * 7", "day-of-week field"),
        ("* * * * funday", "day-of-week field"),
        ("* * * foo *", "month field"),
        ("10-5 * * * *", "low to high"),
        ("*/0 * * * *", "positive"),
        ("*/x * * * *", "positive"),
        ("1/2/3 * * * *", "positive"),
        ("1,,2 * * * *", "minute field"),
        ("1- * * * *", "minute field"),
        ("-1 * * * *", "minute field"),
        ("+5 * * * *", "minute field"),
        ("² * * * *", "minute field"),
        ("@reboot", "unknown macro"),
        ("@HOURLY", "unknown macro"),
        ("@every", "unknown macro"),
        ("@every 5", "positive duration"),
        ("@every -5m", "positive duration"),
        ("@every soon", "positive duration"),
        ("TZ=UTC 0 0 * * *", "time zone"),
        ("CRON_TZ=Europe/Paris 0 0 * * *", "time zone"),
    ],
)
def test_invalid_kubernetes_schedules_are_refused_at_their_path(schedule: str, hint: str) -> None:
    _, errors = write(cron(schedule))
    assert [path for path, _ in pairs(errors)] == ["spec.job.schedule"]
    assert hint in errors[0].message


def test_schedule_is_stored_exactly_as_sent() -> None:
    item, errors = write(cron("0 9 1 JAN,jul MON-fri"))
    assert errors == []
    assert item["spec"]["job"]["schedule"] == "0 9 1 JAN,jul MON-fri"


def test_schedule_is_required_in_a_job() -> None:
    assert errors_for(workload("cron", job={"concurrencyPolicy": "Allow"})) == ["spec.job.schedule"]


@pytest.mark.parametrize(
    ("schedule", "snapshot_ok", "kubernetes_ok"),
    [
        ("0 * * * *", True, True),
        ("*/5 * * * *", False, True),  # snapshots fire at most once an hour
        ("0 0 * * 7", True, False),  # robfig/cron has no weekday 7
        ("0 5/2 * * *", False, True),  # "N/S" is Kubernetes syntax only
        ("0 0 ? * *", False, True),
        ("@hourly", False, True),
    ],
)
def test_the_two_dialects_differ_where_documented(schedule: str, snapshot_ok: bool, kubernetes_ok: bool) -> None:
    assert (schedule_problem(schedule) is None) is snapshot_ok
    assert (kubernetes_schedule_problem(schedule) is None) is kubernetes_ok
