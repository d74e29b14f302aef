"""A volume set's cross-field rules (docs.controlplane.com/reference/volumeset), checked by :func:`validate_volumeset`:

- the shared file system and the shared class go together, both ways: a shared volume is a
  network file system, which no block-device class or ext4/xfs can provide;
- ``initialCapacity`` is at least the class minimum (10, 200 for high-throughput-ssd);
- ``autoscaling.maxCapacity`` is at least ``initialCapacity``: autoscaling only grows a
  volume, so a lower ceiling could never be honoured;
- shared sets take no ``customEncryption`` and no ``snapshots``; only shared sets take
  ``mountOptions``;
- mount resources: each amount above zero, max at least min, max at most 4 times min, and
  max - min at most 4000m CPU and 4096Mi memory.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.quantity import parse_quantity
from plinth.kinds.volumeset.models import SHARED

MIN_CAPACITY_BY_CLASS = {"general-purpose-ssd": 10, "high-throughput-ssd": 200, "shared": 10}

#: (min field, max field, the largest allowed max - min) per resource.
_RESOURCE_RANGES = (
    ("minCpu", "maxCpu", "4000m"),
    ("minMemory", "maxMemory", "4096Mi"),
)
_MAX_RATIO = 4


def _pairing_errors(spec: dict[str, Any]) -> list[FieldError]:
    file_system, performance_class = spec["fileSystemType"], spec["performanceClass"]
    if file_system == SHARED and performance_class != SHARED:
        return [FieldError("spec.performanceClass", "must be 'shared' when fileSystemType is 'shared'")]
    if performance_class == SHARED and file_system != SHARED:
        return [FieldError("spec.fileSystemType", "must be 'shared' when performanceClass is 'shared'")]
    return []


def _capacity_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors = []
    initial, performance_class = spec["initialCapacity"], spec["performanceClass"]
    minimum = MIN_CAPACITY_BY_CLASS[performance_class]
    if initial < minimum:
        errors.append(
            FieldError(
                "spec.initialCapacity", f"must be at least {minimum} (GB) for performance class {performance_class}"
            )
        )
    max_capacity = spec.get("autoscaling", {}).get("maxCapacity")
    if max_capacity is not None and max_capacity < initial:
        errors.append(FieldError("spec.autoscaling.maxCapacity", f"must be at least initialCapacity ({initial})"))
    return errors


def _file_system_errors(spec: dict[str, Any]) -> list[FieldError]:
    if spec["fileSystemType"] == SHARED:
        return [
            FieldError(f"spec.{block}", "is not supported with the shared file system")
            for block in ("customEncryption", "snapshots")
            if block in spec
        ]
    if "mountOptions" in spec:
        return [FieldError("spec.mountOptions", "is only supported with the shared file system")]
    return []


def _amount(quantity: str) -> Decimal:
    # Every quantity reaching here passed the schema's syntax check (or is a constant above).
    amount = parse_quantity(quantity)
    assert amount is not None
    return amount


def _resource_errors(spec: dict[str, Any]) -> list[FieldError]:
    resources = spec.get("mountOptions", {}).get("resources")
    if resources is None or spec["fileSystemType"] != SHARED:
        return []
    base = "spec.mountOptions.resources"
    errors = []
    for low_key, high_key, widest in _RESOURCE_RANGES:
        low, high = _amount(resources[low_key]), _amount(resources[high_key])
        not_positive = [key for key, amount in ((low_key, low), (high_key, high)) if amount <= 0]
        if not_positive:
            errors += [FieldError(f"{base}.{key}", "must be greater than zero") for key in not_positive]
        elif high < low:
            errors.append(FieldError(f"{base}.{high_key}", f"must be at least {low_key}"))
        elif high - low > _amount(widest):
            errors.append(FieldError(f"{base}.{high_key}", f"must be at most {widest} above {low_key}"))
        elif high > low * _MAX_RATIO:
            errors.append(FieldError(f"{base}.{high_key}", f"must be at most {_MAX_RATIO} times {low_key}"))
    return errors


def validate_volumeset(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every cross-field rule of the module docstring; mutates nothing, never raises.

    When the class and file system do not pair up, the rules that depend on the file
    system are skipped: their messages would only repeat the pairing error.
    """
    spec = item["spec"]
    pairing = _pairing_errors(spec)
    errors = pairing + _capacity_errors(spec)
    if not pairing:
        errors += _file_system_errors(spec)
        errors += _resource_errors(spec)
    return errors
