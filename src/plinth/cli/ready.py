"""``plinth apply --ready``: wait until every applied workload is ready at its latest version.

What counts as ready is the official CLI's rule (``cpln apply --ready``, its
``getWorkloadHealth``), read from the same two documents, ``GET .../workload/{name}`` and
``GET .../workload/{name}/deployment``:

- no deployments: not ready (nothing runs it: the GVC is placed nowhere);
- a location counts as *ready* when its deployment's ``status.ready`` is true and
  ``status.internal.syncFailed`` is not; it counts as *ready at the latest version* when,
  besides, its ``lastProcessedVersion`` has reached the workload's ``version`` and the
  ``versions[]`` entry for ``expectedDeploymentVersion`` is ``ready``;
- locations the workload suspends in ``localOptions`` (or scales to ``minScale`` and
  ``maxScale`` 0 there) are not counted;
- the workload is ready at its latest version when at least one location is ready and every
  counted location is ready at the latest version; a ``cron`` workload as soon as one
  location is ready (its jobs are not long-running replicas).

The wait polls and returns once one sweep found **every** workload ready (``wait_ready``). The
pause between two checks grows with the wait (:func:`poll_after`): a twentieth of the time waited
so far, between :data:`POLL_MIN_S` and :data:`POLL_S`, so a workload that gets ready within a
second or two is seen within a few hundredths of a second of its report (what the poll adds to
a wait is at most a twentieth of it), and a long wait costs no more requests than a 0.25 s poll.

The official CLI also asks for three ready checks in a row, 5 s apart, because the platform's
deployment status lags its writes; Plinth's is the runtime's report stored with the workload (a
new version reads not ready until replicas serve it), so one sweep is enough. It gives up after
``--ready-timeout`` seconds (default 300, the official CLI's 60 checks 5 s apart:
``commands/apply.py``) with :class:`~plinth.cli.errors.NotReady`, which names each workload not
ready and why (its deployments' messages, by location).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plinth.cli.errors import NotReady
from plinth.client import ApiClient, TransportError
from plinth.errors import APIError, ServiceUnavailable, TooManyRequests

#: The longest pause between two checks of a workload found not ready (a check is two GETs).
POLL_S = 0.25
#: The shortest pause, at the start of a wait (:func:`poll_after`).
POLL_MIN_S = 0.02
#: The pause is this share of the time waited so far (between the two bounds above).
POLL_SHARE = 0.05


def poll_after(waited_s: float) -> float:
    """The pause before the next check, ``waited_s`` seconds into the wait: a twentieth of it, at
    least :data:`POLL_MIN_S` and at most :data:`POLL_S` (module docstring)."""
    return min(POLL_S, max(POLL_MIN_S, waited_s * POLL_SHARE))


@dataclass(frozen=True, slots=True)
class Health:
    """One workload's readiness as the official CLI computes it, and why not when not."""

    ready: bool
    latest: bool
    reason: str = ""


def _locations_not_counted(workload: dict[str, Any]) -> int:
    count = 0
    for option in (workload.get("spec") or {}).get("localOptions") or []:
        scaling = option.get("autoscaling") or {}
        if option.get("suspend") or (scaling.get("minScale") == 0 and scaling.get("maxScale") == 0):
            count += 1
    return count


def _latest_ready(workload: dict[str, Any], status: dict[str, Any]) -> bool:
    if (status.get("lastProcessedVersion") or 0) < (workload.get("version") or 0):
        return False
    expected = status.get("expectedDeploymentVersion")
    entry = next((v for v in status.get("versions") or [] if v.get("workload") == expected), None)
    return bool(entry and entry.get("ready"))


def health(workload: dict[str, Any], deployments: Sequence[dict[str, Any]]) -> Health:
    """Whether ``workload`` is ready, and ready at its latest version (the rule above)."""
    if not deployments:
        message = ((workload.get("status") or {}).get("healthCheck") or {}).get("message")
        return Health(False, False, message or "no deployments: the GVC is placed nowhere")
    ready = latest = 0
    reasons = []
    for deployment in deployments:
        status = deployment.get("status")
        if not status:
            reasons.append(f"{deployment.get('name')}: no status yet")
            continue
        if status.get("ready") and not (status.get("internal") or {}).get("syncFailed"):
            ready += 1
            if _latest_ready(workload, status):
                latest += 1
                continue
        reasons.append(f"{deployment.get('name')}: {_why(workload, status)}")
    counted = len(deployments) - _locations_not_counted(workload)
    if ready == 0:
        return Health(False, False, "; ".join(reasons))
    is_latest = (workload.get("spec") or {}).get("type") == "cron" or latest >= counted
    return Health(True, is_latest, "" if is_latest else "; ".join(reasons))


def _why(workload: dict[str, Any], status: dict[str, Any]) -> str:
    """A location's reason for not being ready at the latest version."""
    if status.get("message"):
        return str(status["message"])
    if (status.get("internal") or {}).get("syncFailed"):
        return "sync failed"
    processed, version = status.get("lastProcessedVersion") or 0, workload.get("version") or 0
    if processed < version:
        return f"version {version} not deployed yet (at {processed})"
    return f"version {status.get('expectedDeploymentVersion')} not ready"


@dataclass(frozen=True, slots=True)
class Target:
    """A workload to wait for: its path (``/org/acme/gvc/main/workload/web``) and label."""

    href: str
    label: str


def check(client: ApiClient, target: Target) -> Health:
    """One check of ``target``; a server that is unreachable or busy is a reason, not a failure
    (it is asked again after the next pause), any other error of the server ends the wait."""
    try:
        workload = client.request("GET", target.href).json()
        deployments = client.request("GET", target.href + "/deployment").json().get("items") or []
    except TransportError as failure:
        return Health(False, False, f"the server did not answer: {failure}")
    except (ServiceUnavailable, TooManyRequests) as failure:
        return Health(False, False, f"the server is busy: {failure}")
    except APIError:
        raise
    return health(workload, deployments)


def wait_ready(
    connect: Callable[[], ApiClient],
    targets: Sequence[Target],
    timeout_s: float,
    *,
    now: Callable[[], datetime],
    sleep: Callable[[float], None],
    say: Callable[[str], None],
) -> None:
    """Poll until every target is ready at its latest version (a line each, ``... ready``),
    or raise :class:`NotReady` after ``timeout_s`` naming those that are not and why.

    The targets are checked one after the other, and the wait ends once as many checks in a
    row as there are targets found each ready: every target, in one sweep. A check that finds
    one not ready pauses (:func:`poll_after`) and asks that one again, so a long stack costs two
    GETs per poll while it waits, not two per workload."""
    if not targets:
        return
    began = now()
    client = connect()
    try:
        at, streak = 0, 0
        while streak < len(targets):
            if check(client, targets[at]).latest:
                streak, at = streak + 1, (at + 1) % len(targets)
                continue
            streak = 0
            waited = (now() - began).total_seconds()
            if waited >= timeout_s:
                raise NotReady(_summary({target: check(client, target) for target in targets}, timeout_s))
            sleep(min(poll_after(waited), timeout_s - waited))
        for target in targets:
            say(f"{target.label} ready")
    finally:
        client.close()


def _summary(found: dict[Target, Health], timeout_s: float) -> str:
    late = [(target, h) for target, h in found.items() if not h.latest]
    lines = [f"Not ready after {timeout_s:g} s: {len(late)} of {len(found)} workloads"]
    lines += [f"  {target.label}: {h.reason or 'not ready'}" for target, h in late]
    return "\n".join(lines)
