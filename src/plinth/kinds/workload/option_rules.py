"""The type matrix for ``defaultOptions`` and each ``localOptions[i]``
(docs.controlplane.com/reference/workload/types, .../autoscaling).

The same rules judge every options block; a local block is judged on what it names, read
against what the location runs with (``scaling.effective_autoscaling``), so a problem of
``defaultOptions`` is reported once, at ``spec.defaultOptions``, not again for every location.
Each problem is reported at its JSON path (``spec.localOptions[1].autoscaling.minScale``):

- the metric must be one the type allows (``scaling.ALLOWED_METRICS``; on cron autoscaling
  does not apply and any single metric is stored, as TF's cron tests send ``concurrency``);
- ``multi`` only on standard and stateful, each metric once, with ``metric`` and ``target``
  absent beside it, cpu and memory targets at most 100;
- KEDA (``metric: keda`` or a ``keda`` block) only on standard and stateful, and only when
  the parent GVC has ``spec.keda.enabled: true``; a trigger's ``authenticationRef.name``
  names a secret the GVC lists in ``spec.keda.secrets``; a ``fallback`` needs a trigger whose
  metricType (default AverageValue) is AverageValue and whose type is not cpu or memory (TF).
  ``target`` beside KEDA is accepted (TF's changelog allows it; AI says rejected;
  refusing what TF sends would break its users);
- ``target`` at most 100 for cpu and memory (a percentage);
- ``minScale: 0`` never on cron. On standard and stateful it is accepted with any metric,
  though docs.controlplane.com/reference/workload/autoscaling ties it to serverless and KEDA:
  the vendor's template catalog parks workloads with ``minScale: 0, maxScale: 0`` (standard
  with metric ``disabled`` or ``cpu``, stateful with ``disabled``) and runs them through
  ``localOptions`` (controlplane-com/templates, e.g.
  grafana-multi-location/versions/1.1.1/templates/workload-alerting.yaml,
  manticore/versions/2.1.0/templates/workload.yaml, tidb/versions/1.8.1/templates/workload-pd.yaml;
  docs/validation-audit.md);
- ``minScale`` at most ``maxScale`` (1 and 5 when unset);
- ``capacityAI: true`` refused with metric cpu, with ``multi``, or with a GPU in any
  container. The defaults never choose it there (``prepare``), so a ``true`` seen here is
  the client's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import KindContext
from plinth.kinds.workload.scaling import (
    ALLOWED_METRICS,
    DEFAULT_MAX_SCALE,
    DEFAULT_MIN_SCALE,
    MULTI_AND_KEDA_TYPES,
    PERCENT_METRICS,
    capacity_ai_conflict,
    effective_autoscaling,
    has_gpu,
    uses_keda,
    uses_multi,
)

#: The percentage cap for cpu and memory targets.
PERCENT_MAX = 100
_STRATEGY = ("metric", "multi", "keda")


@dataclass(frozen=True, slots=True)
class _Block:
    """One options block: its path, what it names, and the autoscaling its location runs with."""

    path: str
    options: dict[str, Any]
    named: dict[str, Any]
    effective: dict[str, Any]

    @property
    def autoscaling_path(self) -> str:
        return f"{self.path}.autoscaling"


def _percent_message(metric: str) -> str:
    return f"must be at most {PERCENT_MAX} for metric '{metric}' (a percentage)"


def _gvc_keda(ctx: KindContext) -> dict[str, Any]:
    keda: dict[str, Any] = ((ctx.parent or {}).get("spec") or {}).get("keda") or {}
    return keda


def _metric_errors(block: _Block, workload_type: str) -> Iterator[FieldError]:
    metric = block.named.get("metric")
    allowed = ALLOWED_METRICS.get(workload_type)
    # KEDA has a rule of its own (_keda_errors), which says more than "not allowed".
    if metric not in (None, "keda") and allowed is not None and metric not in allowed:
        yield FieldError(
            f"{block.autoscaling_path}.metric",
            f"'{metric}' is not allowed on a {workload_type} workload (allowed: {', '.join(sorted(allowed))})",
        )


def _multi_errors(block: _Block, workload_type: str) -> Iterator[FieldError]:
    if not uses_multi(block.named):
        return
    base = block.autoscaling_path
    if workload_type not in MULTI_AND_KEDA_TYPES:
        yield FieldError(f"{base}.multi", "is only allowed on standard and stateful workloads")
    for name in ("metric", "target"):
        if name in block.named:
            yield FieldError(f"{base}.{name}", "must be absent when multi is set (each multi entry names its own)")
    seen: set[str] = set()
    for index, entry in enumerate(block.named["multi"]):
        metric = entry["metric"]
        if metric in seen:
            yield FieldError(f"{base}.multi[{index}].metric", f"'{metric}' is listed more than once")
        seen.add(metric)
        if metric in PERCENT_METRICS and entry.get("target", 0) > PERCENT_MAX:
            yield FieldError(f"{base}.multi[{index}].target", _percent_message(metric))


def _trigger_errors(keda: dict[str, Any], base: str, ctx: KindContext) -> Iterator[FieldError]:
    listed = {link.rstrip("/").rsplit("/", 1)[-1] for link in _gvc_keda(ctx).get("secrets") or []}
    triggers = keda.get("triggers") or []
    for index, trigger in enumerate(triggers):
        name = trigger.get("authenticationRef", {}).get("name")
        if name is not None and name not in listed:
            yield FieldError(
                f"{base}.triggers[{index}].authenticationRef.name",
                f"'{name}' is not a secret listed in the GVC's spec.keda.secrets",
            )
    if "fallback" in keda and not any(
        trigger.get("metricType", "AverageValue") == "AverageValue" and trigger["type"] not in ("cpu", "memory")
        for trigger in triggers
    ):
        yield FieldError(
            f"{base}.fallback",
            "needs a trigger with metricType AverageValue whose type is not cpu or memory",
        )


def _keda_errors(block: _Block, workload_type: str, ctx: KindContext) -> Iterator[FieldError]:
    if not uses_keda(block.named):
        return
    base = block.autoscaling_path
    where = f"{base}.keda" if "keda" in block.named else f"{base}.metric"
    if workload_type not in MULTI_AND_KEDA_TYPES:
        yield FieldError(where, "KEDA is only allowed on standard and stateful workloads")
        return
    if _gvc_keda(ctx).get("enabled") is not True:
        yield FieldError(where, "KEDA needs the GVC's spec.keda.enabled set to true")
    if "keda" in block.named:
        yield from _trigger_errors(block.named["keda"], f"{base}.keda", ctx)


def _target_errors(block: _Block) -> Iterator[FieldError]:
    metric, target = block.effective.get("metric"), block.named.get("target")
    if target is not None and metric in PERCENT_METRICS and target > PERCENT_MAX:
        yield FieldError(f"{block.autoscaling_path}.target", _percent_message(metric))


def _scale_errors(block: _Block, workload_type: str) -> Iterator[FieldError]:
    base, named, effective = block.autoscaling_path, block.named, block.effective
    low = effective.get("minScale", DEFAULT_MIN_SCALE)
    high = effective.get("maxScale", DEFAULT_MAX_SCALE)
    strategy = next((name for name in _STRATEGY if name in named), None)
    if low == 0 and ("minScale" in named or strategy is not None):
        where = f"{base}.minScale" if "minScale" in named else f"{base}.{strategy}"
        if workload_type == "cron":
            yield FieldError(where, "minScale cannot be 0 on a cron workload")
    if low > high and "minScale" in named:
        yield FieldError(f"{base}.minScale", f"must be at most maxScale ({high})")
    elif low > high and "maxScale" in named:
        yield FieldError(f"{base}.maxScale", f"must be at least minScale ({low})")


def _capacity_ai_errors(block: _Block, gpu: bool) -> Iterator[FieldError]:
    if block.options.get("capacityAI") is not True:
        return
    conflict = capacity_ai_conflict(block.effective, gpu)
    if conflict is not None:
        yield FieldError(f"{block.path}.capacityAI", f"cannot be true when {conflict}")


def _block_errors(block: _Block, workload_type: str, gpu: bool, ctx: KindContext) -> list[FieldError]:
    return [
        *_metric_errors(block, workload_type),
        *_multi_errors(block, workload_type),
        *_keda_errors(block, workload_type, ctx),
        *_target_errors(block),
        *_scale_errors(block, workload_type),
        *_capacity_ai_errors(block, gpu),
    ]


def options_errors(spec: dict[str, Any], ctx: KindContext) -> list[FieldError]:
    """Every option rule of the module docstring, for ``defaultOptions`` and each local option."""
    workload_type = spec["type"]
    if workload_type == "vm":
        return []  # refused as a type; vm options follow rules of their own (DOCS workload/vm)
    gpu = has_gpu(spec)
    default = spec.get("defaultOptions") or {}
    default_autoscaling = default.get("autoscaling") or {}
    blocks = [_Block("spec.defaultOptions", default, default_autoscaling, default_autoscaling)]
    for index, local in enumerate(spec.get("localOptions") or []):
        named = local.get("autoscaling") or {}
        effective = effective_autoscaling(default_autoscaling, named)
        blocks.append(_Block(f"spec.localOptions[{index}]", local, named, effective))
    return [error for block in blocks for error in _block_errors(block, workload_type, gpu, ctx)]
