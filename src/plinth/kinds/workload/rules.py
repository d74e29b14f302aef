"""The workload's cross-field rules (kinds.md §1.3 and beyond): every problem at once.

``validate_workload`` is the kind's ``validate`` hook; the containers' own rules are in
``containers`` and are called from here.
"""

from __future__ import annotations

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload.containers import container_errors


def validate_workload(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """Every rule violation of a schema-valid workload, each at its JSON path; never raises."""
    spec = item["spec"]
    errors: list[FieldError] = []
    if spec.get("type") == "vm":
        errors.append(FieldError("spec.type", "'vm' workloads are not served by Plinth yet"))
    errors += container_errors(item, ctx)
    return errors
