"""The workload's defaults (the kind's ``prepare`` hook): what the API fills in on write.

So that a GET shows what the platform shows, and applying the same body again changes
nothing (every default below is idempotent: a filled spec sent back yields itself):

- ``defaultOptions`` is always present (the schema creates it) with ``timeoutSeconds: 5``,
  ``debug: false``, ``suspend: false`` (TF) and ``capacityAI``: on unless it cannot be (the
  metric in force is ``cpu``, ``multi`` is used, or a container has a GPU: DOCS capacity.mdx,
  AI "left unset with cpu or multi, it defaults to off"). Cron follows DOCS (on by default,
  applied at the next run), with the same exceptions.
- ``defaultOptions.autoscaling`` is always present except on cron, where it is stored as sent
  or left absent (autoscaling does not apply to cron); it gets the metric of
  ``scaling.default_metric``, ``target: 95`` (not beside ``multi``, whose entries carry their
  targets, nor with ``keda``, which scales on its triggers; TF plans it the same way),
  ``minScale: 1``, ``maxScale: 5``, ``scaleToZeroDelay: 300``, ``maxConcurrency: 0`` (TF).
  ``metricPercentile`` is not filled: TF plans it as a plain optional field, so the API does
  not invent it.
- ``localOptions[]`` entries are stored as sent: a local option overrides only what it names
  (docs.controlplane.com/reference/workload/autoscaling), so a default there would override ``defaultOptions`` for
  that location.
- ``firewallConfig``: closed defaults come from the schema; the CIDR lists are stored
  de-duplicated and sorted (``firewall.normalise_firewall``).
- ``job``, ``rolloutOptions``, ``requestRetryPolicy``, ``loadBalancer``: their defaults come
  from the schema, inside the blocks sent; ``supportDynamicTags: false`` likewise.

A value the default would never choose is the client's and is left for the rules to judge,
with two exceptions for values carried over unchanged from the stored item, where a default
may well have put them. The official CLI's ``--set`` and ``start``/``stop`` PATCHes send
only what changes, and a default stored earlier must not turn them into 400s:

- ``defaultOptions.capacityAI: true`` is switched off when this write makes it impossible
  (``--set spec.defaultOptions.autoscaling.metric=cpu`` on a serverless workload, or a
  container gaining a GPU);
- when this write turns a single-metric ``defaultOptions.autoscaling`` to ``multi`` or to a
  ``keda`` block, the stored ``metric`` and ``target`` it leaves unchanged are dropped (they
  described the strategy being replaced) and the metric is defaulted afresh.

A client that sends such a value anew (changed from the stored one) is still refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload.containers import fill_container_defaults
from plinth.kinds.workload.firewall import normalise_firewall
from plinth.kinds.workload.models import WorkloadSpec
from plinth.kinds.workload.options import WorkloadAutoscaling, WorkloadOptions
from plinth.kinds.workload.scaling import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_SCALE,
    DEFAULT_MIN_SCALE,
    DEFAULT_SCALE_TO_ZERO_DELAY,
    DEFAULT_TARGET,
    capacity_ai_conflict,
    default_metric,
    has_gpu,
    options_of,
    uses_keda,
    uses_multi,
)

#: Types whose ``defaultOptions.autoscaling`` is stored as sent (or left absent).
_UNSCALED_TYPES = frozenset({"cron", "vm"})
DEFAULT_TIMEOUT_SECONDS = 5


def _ordered(block: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``block`` with its keys in the model's field order (filled defaults read where expected)."""
    return {name: block[name] for name in model.model_fields if name in block}


def fill_autoscaling(autoscaling: dict[str, Any], workload_type: str, capacity_ai: bool | None) -> None:
    """Fill ``defaultOptions.autoscaling``'s defaults (module docstring); mutates it."""
    metric = default_metric(workload_type, autoscaling, capacity_ai)
    if metric is not None:
        autoscaling.setdefault("metric", metric)
    if not uses_multi(autoscaling) and autoscaling.get("metric") not in (None, "keda"):
        autoscaling.setdefault("target", DEFAULT_TARGET)
    autoscaling.setdefault("maxScale", DEFAULT_MAX_SCALE)
    autoscaling.setdefault("minScale", DEFAULT_MIN_SCALE)
    autoscaling.setdefault("scaleToZeroDelay", DEFAULT_SCALE_TO_ZERO_DELAY)
    autoscaling.setdefault("maxConcurrency", DEFAULT_MAX_CONCURRENCY)


def _capacity_ai_carried_over(old: Item | None) -> bool:
    return old is not None and options_of(old).get("capacityAI") is True


def _forget_replaced_strategy(autoscaling: dict[str, Any], old: Item | None) -> None:
    """Drop the stored single-metric ``metric``/``target`` a switch to multi or KEDA replaces."""
    if old is None:
        return
    stored = options_of(old).get("autoscaling") or {}
    if uses_multi(stored) or uses_keda(stored):
        return
    if uses_multi(autoscaling) or "keda" in autoscaling:
        for name in ("metric", "target"):
            if name in autoscaling and autoscaling[name] == stored.get(name):
                del autoscaling[name]


def fill_default_options(spec: dict[str, Any], old: Item | None) -> None:
    """Fill ``spec['defaultOptions']`` (module docstring); reads the type and the containers."""
    options: dict[str, Any] = spec.setdefault("defaultOptions", {})
    if spec["type"] not in _UNSCALED_TYPES:
        autoscaling = options.setdefault("autoscaling", {})
        _forget_replaced_strategy(autoscaling, old)
        fill_autoscaling(autoscaling, spec["type"], options.get("capacityAI"))
        options["autoscaling"] = _ordered(autoscaling, WorkloadAutoscaling)
    conflict = capacity_ai_conflict(options.get("autoscaling", {}), has_gpu(spec))
    if "capacityAI" not in options:
        options["capacityAI"] = conflict is None
    elif options["capacityAI"] and conflict is not None and _capacity_ai_carried_over(old):
        options["capacityAI"] = False
    options.setdefault("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
    options.setdefault("debug", False)
    options.setdefault("suspend", False)
    spec["defaultOptions"] = _ordered(options, WorkloadOptions)


def prepare_workload(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Fill the API's defaults into a schema-valid ``item['spec']``; mutates ``item`` only.

    The containers' defaults come first: they need only the type, which the schema has
    already defaulted, while the option defaults read the containers (a GPU turns Capacity
    AI's default off).
    """
    spec = item["spec"]
    fill_container_defaults(spec)
    fill_default_options(spec, old)
    normalise_firewall(spec["firewallConfig"])
    # Keep the schema's field order, so filled-in defaults read where a client expects them.
    item["spec"] = {name: spec[name] for name in WorkloadSpec.model_fields if name in spec}
