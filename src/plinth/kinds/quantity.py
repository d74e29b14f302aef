"""Kubernetes resource quantities (``500m``, ``2``, ``1.5``, ``1Gi``, ``512Mi``, ``1e3``).

Parsed exactly (``Decimal``) so that limits such as "at most 4096Mi apart" compare without
rounding. Only non-negative quantities are accepted: resource amounts are never negative.
"""

from __future__ import annotations

import re
from decimal import Decimal

_QUANTITY = re.compile(
    r"(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

QUANTITY_HINT = "must be a Kubernetes quantity such as 500m, 2, 1Gi or 512Mi"


def parse_quantity(text: str) -> Decimal | None:
    """The value of ``text`` in base units (cores, bytes), or ``None`` if it is not a quantity."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    number = Decimal(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * (1024 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    # A decimal exponent: "e3" or "E-2" (a bare "E" is exa, matched above).
    return number.scaleb(int(suffix[1:]))


def check_quantity(text: str) -> str:
    """Pydantic validator: accept ``text`` unchanged when it parses, else raise ``ValueError``."""
    if parse_quantity(text) is None:
        raise ValueError(QUANTITY_HINT)
    return text
