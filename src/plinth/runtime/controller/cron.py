"""Cron workloads' schedules and job policy (pure): when a job is due, and what its
``spec.job`` asks for.

- :func:`job_policy` reads ``spec.job`` (``schedule``, ``concurrencyPolicy`` default
  ``Forbid``, ``historyLimit`` default 5, ``restartPolicy`` default ``Never``,
  ``activeDeadlineSeconds``) and ``defaultOptions.suspend``.
- :func:`due_fire` answers the latest fire time in ``(last, now]``, or ``None``. Missed fire
  times (the controller was down) collapse into one run, for the latest of them, as a
  Kubernetes CronJob without ``startingDeadlineSeconds`` does. Times are UTC.

Schedules are computed with ``croniter`` (five fields, names, ranges, steps, and the macros
``@hourly`` ... ``@yearly``). ``@every <duration>`` (robfig/cron, which the API accepts) is
done here: every ``duration`` after the last fire.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from croniter import croniter

_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
#: ``@midnight`` is robfig's name for ``@daily``; croniter does not know it.
_MACROS = {"@midnight": "0 0 * * *", "@annually": "0 0 1 1 *"}


@dataclass(frozen=True, slots=True)
class JobPolicy:
    schedule: str
    concurrency: str = "Forbid"
    history_limit: int = 5
    restart_policy: str = "Never"
    active_deadline_s: float | None = None
    suspend: bool = False


def job_policy(workload: Mapping[str, Any]) -> JobPolicy:
    """The cron workload's job policy, with the API's defaults (module docstring)."""
    spec = workload.get("spec") or {}
    job = spec.get("job") or {}
    deadline = job.get("activeDeadlineSeconds")
    return JobPolicy(
        schedule=str(job.get("schedule") or ""),
        concurrency=str(job.get("concurrencyPolicy") or "Forbid"),
        history_limit=int(job.get("historyLimit", 5)),
        restart_policy=str(job.get("restartPolicy") or "Never"),
        active_deadline_s=float(deadline) if deadline is not None else None,
        suspend=bool((spec.get("defaultOptions") or {}).get("suspend")),
    )


def every_interval(schedule: str) -> timedelta | None:
    """The interval of an ``@every`` schedule (``@every 1h30m``), else ``None``."""
    if not schedule.startswith("@every "):
        return None
    text = schedule[len("@every ") :].strip()
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"schedule {schedule!r}: not a duration")
    return timedelta(seconds=sum(float(n) * _UNIT_S[u] for n, u in parts))


def due_fire(schedule: str, last: datetime, now: datetime) -> datetime | None:
    """The latest fire time after ``last`` and at or before ``now``, or ``None`` (module
    docstring). Both must be timezone-aware."""
    interval = every_interval(schedule)
    if interval is not None:
        steps = int((now - last) / interval)
        return last + steps * interval if steps >= 1 else None
    expression = _MACROS.get(schedule, schedule)
    # croniter's get_prev from ``now`` answers the latest fire strictly before it, so start
    # just after ``now`` to include a fire at ``now`` itself.
    latest: datetime = croniter(expression, now + timedelta(microseconds=1)).get_prev(datetime)
    return latest if latest > last else None


def next_fire(schedule: str, after: datetime) -> datetime:
    """The first fire time strictly after ``after``."""
    interval = every_interval(schedule)
    if interval is not None:
        return after + interval
    result: datetime = croniter(_MACROS.get(schedule, schedule), after).get_next(datetime)
    return result
