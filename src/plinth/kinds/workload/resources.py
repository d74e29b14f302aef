"""A container's compute: ``cpu``, ``memory``, ``minCpu``, ``minMemory`` and ``gpu``
(docs.controlplane.com/reference/workload/containers).

Schema: the four amounts are Kubernetes quantities of at most 20 characters (TF's regex and
length; parsed by ``_quantity``); ``gpu`` names exactly one of ``nvidia`` (model ``t4`` or
``a10g``) and ``custom`` (resource and runtime class ``^[a-zA-Z0-9./]*$``, at most 64
characters, quantity 0-8) (TF).

Rules (:func:`resource_errors`, on a spec whose defaults are filled; a missing ``cpu`` or
``memory`` counts as its default):

- floors: ``cpu`` at least 25m, ``memory`` at least 32Mi (AI);
- ``memory`` in Mi at most 8 times ``cpu`` in millicores, 32 times with the tag
  ``cpln/relaxMemoryToCpuRatio`` (AI): 2Gi of memory needs 256m of CPU;
- ``minCpu`` at most ``cpu``, ``minMemory`` at most ``memory`` (AI);
- stateful, where the minimums are the reserved request (DOCS types.mdx, AI): ``cpu - minCpu``
  at most 4000m and ``memory - minMemory`` at most 4096Mi, and each minimum at least a quarter
  of its maximum (the 4:1 ratio);
- ``nvidia``: quantity 1-4 for ``t4`` and exactly 1 for ``a10g`` (DOCS, chosen over TF's 0-4 for
  any model); at least 2 CPU cores and 7000Mi of memory. TF's own check and
  message accept "7 Gi (or 7000 Mi)", so 7000Mi is the floor: a TF user's 7000Mi is not refused.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from plinth.errors import FieldError
from plinth.kinds.quantity import check_quantity, parse_quantity
from plinth.kinds.spec_model import SpecModel, exactly_one

Quantity = Annotated[str, Field(max_length=20), AfterValidator(check_quantity)]

DEFAULT_CPU = "50m"
DEFAULT_MEMORY = "128Mi"
RELAX_RATIO_TAG = "cpln/relaxMemoryToCpuRatio"

_MI = Decimal(1024**2)
_MILLI = Decimal("0.001")
CPU_FLOOR = Decimal("0.025")
MEMORY_FLOOR = 32 * _MI
RATIO_MAX, RATIO_MAX_RELAXED = 8, 32
STATEFUL_CPU_SPAN = Decimal(4)
STATEFUL_MEMORY_SPAN = 4096 * _MI
STATEFUL_MIN_RATIO = 4
GPU_CPU_FLOOR = Decimal(2)
GPU_MEMORY_FLOOR = 7000 * _MI
NVIDIA_QUANTITY = {"t4": (1, 4), "a10g": (1, 1)}

_GPU_NAME = r"^[a-zA-Z0-9./]*$"


class NvidiaGpu(SpecModel):
    model: Literal["t4", "a10g"]
    #: The per-model range is a rule (``resource_errors``), so the message can name the model.
    quantity: Annotated[int, Field(ge=1, le=4)]


class CustomGpu(SpecModel):
    resource: Annotated[str, Field(min_length=1, max_length=64, pattern=_GPU_NAME)]
    runtimeClass: Annotated[str, Field(max_length=64, pattern=_GPU_NAME)] | None = None
    quantity: Annotated[int, Field(ge=0, le=8)]


class Gpu(SpecModel):
    nvidia: NvidiaGpu | None = None
    custom: CustomGpu | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Gpu:
        exactly_one(self, ("nvidia", "custom"), "GPU kind")
        return self


def _amount(text: str) -> Decimal:
    # Every quantity reaching the rules passed the schema's syntax check, or is a default.
    amount = parse_quantity(text)
    assert amount is not None
    return amount


def _sized(container: dict[str, Any]) -> dict[str, Any]:
    """``container`` with ``cpu`` and ``memory`` present: the rules run after the defaults, but
    a hook that never raises must not rely on that."""
    return {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEMORY, **container}


def ratio_relaxed(tags: dict[str, Any]) -> bool:
    """Whether the item's tags raise the memory-to-CPU ceiling: the tag is there and not false."""
    value = tags.get(RELAX_RATIO_TAG)
    return value is not None and value is not False and str(value).lower() != "false"


def _floor_and_ratio_errors(container: dict[str, Any], base: str, relaxed: bool) -> list[FieldError]:
    cpu, memory = _amount(container["cpu"]), _amount(container["memory"])
    errors = []
    if cpu < CPU_FLOOR:
        errors.append(FieldError(f"{base}.cpu", "must be at least 25m"))
    if memory < MEMORY_FLOOR:
        errors.append(FieldError(f"{base}.memory", "must be at least 32Mi"))
    ceiling = RATIO_MAX_RELAXED if relaxed else RATIO_MAX
    if memory / _MI > ceiling * (cpu / _MILLI):
        needed = (memory / _MI / ceiling).to_integral_value(rounding="ROUND_CEILING")
        hint = "" if relaxed else f", or tag the workload {RELAX_RATIO_TAG} to allow 32"
        errors.append(
            FieldError(
                f"{base}.memory",
                f"memory in Mi may be at most {ceiling} times cpu in millicores: {container['memory']} "
                f"needs cpu of at least {needed}m{hint}",
            )
        )
    return errors


def _minimum_errors(container: dict[str, Any], base: str, stateful: bool) -> list[FieldError]:
    errors = []
    pairs = (("minCpu", "cpu", STATEFUL_CPU_SPAN, "4000m"), ("minMemory", "memory", STATEFUL_MEMORY_SPAN, "4096Mi"))
    for low_key, high_key, span, span_text in pairs:
        if low_key not in container:
            continue
        low, high = _amount(container[low_key]), _amount(container[high_key])
        path = f"{base}.{low_key}"
        if low > high:
            errors.append(FieldError(path, f"must be at most {high_key} ({container[high_key]})"))
        elif stateful and high - low > span:
            errors.append(FieldError(path, f"must be within {span_text} of {high_key} on a stateful workload"))
        elif stateful and high > low * STATEFUL_MIN_RATIO:
            errors.append(FieldError(path, f"must be at least a quarter of {high_key} on a stateful workload"))
    return errors


def _gpu_errors(container: dict[str, Any], base: str) -> list[FieldError]:
    nvidia = container.get("gpu", {}).get("nvidia")
    if nvidia is None:
        return []
    errors = []
    low, high = NVIDIA_QUANTITY[nvidia["model"]]
    if not low <= nvidia["quantity"] <= high:
        allowed = f"exactly {low}" if low == high else f"{low}-{high}"
        errors.append(FieldError(f"{base}.gpu.nvidia.quantity", f"must be {allowed} for model {nvidia['model']}"))
    if _amount(container["cpu"]) < GPU_CPU_FLOOR:
        errors.append(FieldError(f"{base}.cpu", "must be at least 2 (cores) with an nvidia GPU"))
    if _amount(container["memory"]) < GPU_MEMORY_FLOOR:
        errors.append(FieldError(f"{base}.memory", "must be at least 7Gi (7000Mi) with an nvidia GPU"))
    return errors


def resource_errors(container: dict[str, Any], base: str, workload_type: str, relaxed: bool) -> list[FieldError]:
    """Every rule of the module docstring for one container at JSON path ``base``; never raises."""
    container = _sized(container)
    return (
        _floor_and_ratio_errors(container, base, relaxed)
        + _minimum_errors(container, base, workload_type == "stateful")
        + _gpu_errors(container, base)
    )
