"""How a workload's replicas are replaced: its ``spec.rolloutOptions``, read with the platform's
defaults (docs/runtime.md, "Rollouts").

- ``maxSurgeReplicas`` (a count, or a percentage of the replicas rounded **up**) and
  ``maxUnavailableReplicas`` (a count, or a percentage rounded **down**): both unset mean
  Kubernetes' Deployment defaults, 25% and 25%, which the platform leaves in place. When both
  come to zero, one replica surges (Kubernetes refuses that pair; the API refuses two zeros).
  A rollout of ``standard`` and ``serverless`` replaces ``surge + unavailable`` replicas at a
  time (per location): the first ``surge`` of each batch start beside their old replica, which
  goes once the new one is ready; the others stop their old replica first.
- ``minReadySeconds`` (default 0): a new replica counts as available only after it has been
  ready this long; the old one it replaces, and the next batch, wait for that.
- ``scalingPolicy`` for ``stateful`` (Kubernetes' ``podManagementPolicy``): ``OrderedReady``
  (the default) replaces and starts replicas one at a time, each waiting for the one before
  to be ready; ``Parallel`` does all at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from plinth.runtime.controller.plan import self_parts

SlotT = TypeVar("SlotT", bound=tuple[str, ...])

#: Kubernetes' Deployment defaults, which apply when ``rolloutOptions`` leaves them unset.
DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"


def _amount(value: Any, replicas: int, round_up: bool) -> int:
    text = str(value).strip()
    if text.endswith("%"):
        share = float(text[:-1]) * replicas / 100
        return max(0, math.ceil(share) if round_up else math.floor(share))
    return max(0, int(float(text)))


@dataclass(frozen=True)
class RolloutPolicy:
    """A workload's rollout settings (module docstring)."""

    max_surge: str = DEFAULT_MAX_SURGE
    max_unavailable: str = DEFAULT_MAX_UNAVAILABLE
    min_ready_s: float = 0.0
    parallel: bool = False

    def batch(self, replicas: int) -> tuple[int, int]:
        """``(surge, unavailable)`` for ``replicas`` replicas: how many of a batch start beside
        their old replica, and how many replace it in place; never both zero."""
        surge = _amount(self.max_surge, replicas, round_up=True)
        unavailable = _amount(self.max_unavailable, replicas, round_up=False)
        if surge == 0 and unavailable == 0:
            surge = 1
        return surge, unavailable


def rollout_policy(workload: Mapping[str, Any]) -> RolloutPolicy:
    """The policy of one workload as the API serves it."""
    options = (workload.get("spec") or {}).get("rolloutOptions") or {}
    surge = options.get("maxSurgeReplicas")
    unavailable = options.get("maxUnavailableReplicas")
    return RolloutPolicy(
        max_surge=DEFAULT_MAX_SURGE if surge is None else str(surge),
        max_unavailable=DEFAULT_MAX_UNAVAILABLE if unavailable is None else str(unavailable),
        min_ready_s=float(options.get("minReadySeconds") or 0),
        parallel=options.get("scalingPolicy") == "Parallel",
    )


def rollout_policies(workloads: Iterable[Mapping[str, Any]], org: str) -> dict[tuple[str, str, str], RolloutPolicy]:
    """Each workload's policy by ``(org, gvc, workload)``; one that cannot be read gets the
    defaults (the API validated it, so only a document from elsewhere could be malformed)."""
    policies: dict[tuple[str, str, str], RolloutPolicy] = {}
    for doc in workloads:
        try:
            policies[(org, self_parts(doc)[3], str(doc["name"]))] = rollout_policy(doc)
        except (ValueError, KeyError, IndexError, TypeError):
            continue
    return policies


def batches(policy: RolloutPolicy, slots: Sequence[SlotT], stateful: bool) -> list[list[tuple[list[SlotT], bool]]]:
    """The replicas of one workload (each its slots, in plan order) in the batches a rollout
    handles together, each replica with whether it is replaced in place (module docstring).
    ``slots`` are ``(org, gvc, workload, location, replica, container)``."""
    replicas: dict[tuple[str, str], list[SlotT]] = {}
    for slot in slots:
        replicas.setdefault((slot[3], slot[4]), []).append(slot)
    if stateful:
        ordered = [(group, True) for group in replicas.values()]
        return [ordered] if policy.parallel else [[entry] for entry in ordered]
    by_location: dict[str, list[list[SlotT]]] = {}
    for (location, _), group in replicas.items():
        by_location.setdefault(location, []).append(group)
    made: list[list[tuple[list[SlotT], bool]]] = []
    for groups in by_location.values():
        surge, unavailable = policy.batch(len(groups))
        size = surge + unavailable
        for start in range(0, len(groups), size):
            chunk = groups[start : start + size]
            made.append([(group, index >= surge) for index, group in enumerate(chunk)])
    return made
