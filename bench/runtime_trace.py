"""Where a write's delay goes: the controller's trace (``bench.runtime_controller``) cut at each
write, from the PATCH sent to the engine's ``create`` event of the new container.

Segments, per write:

- ``API → informer``: the PATCH sent until the informer's cache changed (the watch event);
- ``debounce + pass in flight``: that wake-up until the pass's first podman command (the loop's
  ``debounce_s``, plus the rest of a pass already running, which the loop lets finish first);
- one row per podman command the pass ran before the ``create`` event (``ps`` and ``create``;
  more when the driver runs more: ``container inspect``, ``image inspect``), its time;
- ``between commands``: what is left (Python, and waits between commands).

The prober's commands (a list when the engine's events say something changed) are not the
pass's; how many ran alongside is shown, because they contend for podman's storage lock.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROBER = "ControlLoop.probe_forever"


@dataclass(frozen=True)
class Call:
    what: str
    at: float
    took: float
    by: str


@dataclass(frozen=True)
class Trace:
    wakes: list[float]
    calls: list[Call]


def read(path: Path) -> Trace:
    wakes, calls = [], []
    for line in path.read_text().splitlines():
        doc = json.loads(line)
        if "wake" in doc:
            wakes.append(doc["wake"])
        else:
            calls.append(Call(" ".join(doc["call"]), doc["at"], doc["took"], doc.get("by", "")))
    return Trace(sorted(wakes), sorted(calls, key=lambda c: c.at))


def _what(call: Call) -> str:
    """``container inspect`` stays two words; ``create --name`` is ``create``."""
    first = call.what.split()[0]
    return call.what if first in ("container", "image") else first


def segments(trace: Trace, sent: float, created: float) -> dict[str, float]:
    """Seconds of each segment (module docstring) of one write."""
    wake = next((w for w in trace.wakes if w >= sent), created)
    ours = [c for c in trace.calls if wake <= c.at <= created and c.by != PROBER]
    out: dict[str, float] = {"API → informer": wake - sent}
    out["debounce + pass in flight"] = (ours[0].at if ours else created) - wake
    spent: dict[str, float] = defaultdict(float)
    for call in ours:
        spent[f"podman {_what(call)}"] += min(call.took, created - call.at)
    out.update(spent)
    out["between commands"] = max(0.0, (created - (ours[0].at if ours else created)) - sum(spent.values()))
    out["prober commands alongside"] = float(
        sum(1 for c in trace.calls if c.by == PROBER and c.at < created and c.at + c.took > sent)
    )
    return out


def breakdown(trace: Trace, writes: Sequence[tuple[float, float]]) -> list[list[str]]:
    """Rows ``segment, p50 ms, max ms`` over the writes (``(sent, created)`` pairs), in order of
    first appearance; the prober row counts commands, not ms."""
    per: dict[str, list[float]] = {}
    for sent, created in writes:
        for name, value in segments(trace, sent, created).items():
            per.setdefault(name, []).append(value)
    rows = []
    for name, values in per.items():
        values = values + [0.0] * (len(writes) - len(values))  # a command some passes did not run
        ordered = sorted(values)
        middle, top = ordered[len(ordered) // 2], ordered[-1]
        if name.startswith("prober"):
            rows.append([name, f"{middle:.0f}", f"{top:.0f}"])
        else:
            rows.append([name, f"{middle * 1000:,.0f}", f"{top * 1000:,.0f}"])
    return rows
