"""What a workload's options mean, shared by the defaults (``prepare``) and the rules.

- :func:`default_metric`: the metric the API fills when ``autoscaling.metric`` is omitted
  (docs.controlplane.com/reference/workload/autoscaling; AI and TF differ): ``concurrency`` on serverless; ``cpu`` on
  standard and stateful, except ``disabled`` when the client turns Capacity AI on explicitly (AI: "with Capacity AI
  on, an omitted metric resolves to disabled"; filling ``cpu`` would make the client's own
  ``capacityAI: true`` an error); ``keda`` when a ``keda`` block is sent without a metric;
  nothing beside ``multi`` (``metric`` must then be absent) nor on cron (autoscaling is not
  applicable there and is stored as sent).
- :func:`capacity_ai_conflict`: why Capacity AI cannot be on (metric ``cpu``, ``multi``, a
  GPU; DOCS capacity.mdx, TF, AI), or ``None``.
- :func:`effective_autoscaling`: what a location runs with: its local ``autoscaling`` over
  ``defaultOptions.autoscaling``, field by field, except that naming a scaling strategy
  (``metric``, ``multi`` or ``keda``) replaces the default's whole strategy (its metric,
  multi, keda, target and percentile), since a target only means something for its metric.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item

#: The API's autoscaling defaults besides the metric (TF, AI; docs.controlplane.com/reference/workload/autoscaling).
DEFAULT_TARGET = 95
DEFAULT_MIN_SCALE = 1
DEFAULT_MAX_SCALE = 5
DEFAULT_SCALE_TO_ZERO_DELAY = 300
DEFAULT_MAX_CONCURRENCY = 0

#: The metrics each type allows (docs.controlplane.com/reference/workload/types; DOCS autoscaling.mdx, AI). Cron is
#: absent: autoscaling does not apply to it, and TF's own tests create one with ``concurrency``.
#: ``concurrency`` is accepted on standard and stateful too, though DOCS list it for serverless
#: only: the TF provider sends it by default for every workload without multi or KEDA
#: (terraform-provider-cpln internal/provider/resource_workload.go, ``ModifyAutoscaling``),
#: and the vendor's examples apply it (docs/validation-audit.md).
ALLOWED_METRICS: dict[str, frozenset[str]] = {
    "serverless": frozenset({"concurrency", "cpu", "memory", "rps", "disabled"}),
    "standard": frozenset({"concurrency", "cpu", "memory", "latency", "rps", "keda", "disabled"}),
    "stateful": frozenset({"concurrency", "cpu", "memory", "latency", "rps", "keda", "disabled"}),
}
#: Types that may use ``multi`` and KEDA (docs.controlplane.com/reference/workload/types, .../autoscaling; TF
#: validator, DOCS, AI).
MULTI_AND_KEDA_TYPES = frozenset({"standard", "stateful"})
#: Metrics whose target is a percentage.
PERCENT_METRICS = frozenset({"cpu", "memory"})

_STRATEGY = ("metric", "multi", "keda")
_STRATEGY_FIELDS = ("metric", "multi", "keda", "target", "metricPercentile")


def uses_multi(autoscaling: dict[str, Any]) -> bool:
    """Whether ``multi`` is in force (an empty list means no multi-metric scaling)."""
    return bool(autoscaling.get("multi"))


def uses_keda(autoscaling: dict[str, Any]) -> bool:
    """Whether KEDA is in use: ``metric: keda``, or a ``keda`` block (TF reads it so too)."""
    return autoscaling.get("metric") == "keda" or autoscaling.get("keda") is not None


def has_gpu(spec: dict[str, Any]) -> bool:
    """Whether any container asks for a GPU (``containers[].gpu``)."""
    return any(container.get("gpu") for container in spec.get("containers", []))


def default_metric(workload_type: str, autoscaling: dict[str, Any], capacity_ai: bool | None) -> str | None:
    """The metric filled when ``autoscaling.metric`` is omitted (module docstring), or ``None``."""
    if uses_multi(autoscaling) or workload_type not in ALLOWED_METRICS:
        return None
    if autoscaling.get("keda") is not None:
        return "keda"
    if workload_type == "serverless":
        return "concurrency"
    return "disabled" if capacity_ai is True else "cpu"


def capacity_ai_conflict(autoscaling: dict[str, Any], gpu: bool) -> str | None:
    """Why Capacity AI cannot be on with ``autoscaling`` (and a GPU or not), or ``None``."""
    if gpu:
        return "a container uses a GPU"
    if uses_multi(autoscaling):
        return "autoscaling uses multi"
    if autoscaling.get("metric") == "cpu":
        return "the autoscaling metric is 'cpu'"
    return None


def effective_autoscaling(default: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
    """A location's autoscaling: ``local`` over ``default`` (module docstring)."""
    base = dict(default)
    if any(name in local for name in _STRATEGY):
        for name in _STRATEGY_FIELDS:
            base.pop(name, None)
    return {**base, **local}


def options_of(item: Item) -> dict[str, Any]:
    """``spec.defaultOptions`` of a stored or candidate item (``{}`` when absent)."""
    options: dict[str, Any] = item.get("spec", {}).get("defaultOptions") or {}
    return options
