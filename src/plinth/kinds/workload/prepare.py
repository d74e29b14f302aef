"""The workload's defaults (the kind's ``prepare`` hook): what the API fills in on write."""

from __future__ import annotations

from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload.containers import fill_container_defaults
from plinth.kinds.workload.models import WorkloadSpec


def prepare_workload(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Fill the API's defaults into a schema-valid ``item['spec']``; mutates ``item`` only."""
    spec = item["spec"]
    fill_container_defaults(spec)
    # Keep the schema's field order, so filled-in defaults read where a client expects them.
    item["spec"] = {name: spec[name] for name in WorkloadSpec.model_fields if name in spec}
