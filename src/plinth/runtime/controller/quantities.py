"""Kubernetes-style quantities (``250m``, ``0.5``, ``128Mi``, ``1G``, ``1e3``), as a
container's ``cpu`` and ``memory`` are written, turned into the engine's limits."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_SUFFIX = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10**3),
    "K": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
}


def quantity(text: str) -> Decimal:
    """A Kubernetes-style quantity (``250m``, ``0.5``, ``128Mi``, ``1G``, ``1e3``) as a number;
    ``ValueError`` for anything else."""
    match = _QUANTITY.fullmatch(str(text).strip())
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = match.groups()
    try:
        value = Decimal(number)
        if suffix[:1] in ("e", "E"):
            return value * Decimal(10) ** int(suffix[1:])
        return value * _SUFFIX[suffix]
    except (InvalidOperation, KeyError, ValueError):
        raise ValueError(f"not a quantity: {text!r}") from None


def millicores(text: str) -> int:
    return max(1, int(quantity(text) * 1000))


def memory_bytes(text: str) -> int:
    return int(quantity(text))
