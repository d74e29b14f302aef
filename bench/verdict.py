"""The issue's targets and the PASS/MISS logic, kept pure so the tests can pin it down."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Op = Literal[">=", "<=", "<"]


@dataclass(frozen=True)
class Target:
    op: Op
    value: float

    def met(self, measured: float) -> bool:
        if self.op == ">=":
            return measured >= self.value
        if self.op == "<=":
            return measured <= self.value
        return measured < self.value

    def describe(self) -> str:
        shown = {">=": "≥", "<=": "≤", "<": "<"}[self.op]
        return f"{shown} {self.value:g}"


#: GET one domain's req/s as a share of the ceiling's, per backend (the issue's figures).
CEILING_TARGETS: dict[str, dict[str, Target]] = {
    "sqlite": {"get": Target(">=", 0.50)},
    "postgresql": {"get": Target(">=", 0.35)},
}
#: p50 latency with 100,000 items over the same figure with 1,000.
SCALE_TARGET = Target("<=", 1.3)
#: RSS per worker process, MB, with 100,000 items stored.
MEMORY_TARGET = Target("<", 150.0)


def ratio(value: float, reference: float) -> float | None:
    """``value / reference``; ``None`` when the reference is zero (nothing to compare with)."""
    if reference <= 0:
        return None
    return value / reference


def mark(measured: float | None, target: Target | None, errors: int = 0) -> str:
    """``ERR`` when the run had failed requests (its figures mean nothing), else PASS/MISS
    against the target, or ``-`` where the issue names no target."""
    if errors:
        return "ERR"
    if target is None or measured is None:
        return "-"
    return "PASS" if target.met(measured) else "MISS"


#: Other processes' CPU (cores) above which a figure is marked unreliable (``*``).
NOISY_CORES = 0.25
NOISE_NOTE = (
    f"* other processes used more than {NOISY_CORES} of a core during this figure: measure again on a quiet machine"
)


def noted(verdict: str, other_cores: float) -> str:
    """``verdict`` with ``*`` when the machine was busy with something else during the run."""
    return verdict + "*" if other_cores > NOISY_CORES else verdict
