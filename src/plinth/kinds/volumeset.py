"""The ``volumeset`` kind (api.md §2.4): persistent volumes for the workloads of one GVC.

Schema in ``_volumeset_spec``, defaults and cross-field rules in ``_volumeset_rules``
(whose docstring lists the decisions taken where api.md is silent). ``performanceClass``
and ``fileSystemType`` are immutable: the engine compares them after ``prepare`` has filled
their defaults, so an update that leaves them out keeps them rather than changing them.

Status (computed, never sent): Plinth provisions no storage itself, so the status shows
what the platform would hold before any workload attaches:

- ``parentId``: the id of the parent GVC;
- ``locations``: one entry per location the parent GVC is statically placed in (its
  ``staticPlacement.locationLinks``, in order, each once), named by the link's last
  segment, with no ``volumes`` yet. ``desiredVolumeCount`` is 1 for a shared set (one
  volume per location, whoever mounts it) and 0 otherwise (ext4/xfs volumes are one per
  replica of the attached workload, and there is none). Locations chosen by a
  ``locationQuery`` are not resolved: locations are not served yet;
- ``workloadLinks``: the workloads that mount the set (``ctx.referrers``: the engine
  refreshes the status on every write or delete of a workload that mounts it or did).

The status follows the parent: ``status_inputs`` names ``gvc``, so the engine recomputes
it when the parent GVC's placement changes.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds._volumeset_rules import SHARED, fill_volumeset_defaults, validate_volumeset
from plinth.kinds._volumeset_spec import VolumeSetSpec
from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Item, KindContext, KindSpec
from plinth.kinds.permissions import permission_fields


def prepare_volumeset(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Fill the class, file system, predictive factor and mount resource defaults."""
    spec = item["spec"]
    fill_volumeset_defaults(spec)
    # Keep the schema's field order, so filled-in defaults read where a client expects them.
    item["spec"] = {name: spec[name] for name in VolumeSetSpec.model_fields if name in spec}


def _location_names(gvc: Item) -> list[str]:
    links = gvc.get("spec", {}).get("staticPlacement", {}).get("locationLinks", [])
    names = [link.rstrip("/").rsplit("/", 1)[-1] for link in links]
    return list(dict.fromkeys(names))


def compute_volumeset_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """``{parentId, locations, workloadLinks}`` from the item and ``ctx.parent``; pure."""
    parent = ctx.parent or {}
    volumes_per_location = 1 if item["spec"]["fileSystemType"] == SHARED else 0
    status: dict[str, Any] = {}
    if "id" in parent:
        status["parentId"] = parent["id"]
    status["locations"] = [
        {"name": name, "volumes": [], "desiredVolumeCount": volumes_per_location} for name in _location_names(parent)
    ]
    status["workloadLinks"] = list(ctx.referrers)
    return status


VOLUMESET = KindSpec(
    name="volumeset",
    scope="gvc",
    title="VolumeSet",
    spec_model=VolumeSetSpec,
    spec_required=True,
    **permission_fields("volumeset"),
    immutable=("spec.performanceClass", "spec.fileSystemType"),
    prepare=prepare_volumeset,
    validate=validate_volumeset,
    compute_status=compute_volumeset_status,
    status_inputs=frozenset({"gvc"}),
    status_referrers=frozenset({"workload"}),
    query_properties=(
        *COMMON_QUERY_PROPERTIES,
        "gvc",
        "spec.initialCapacity",
        "spec.performanceClass",
        "spec.fileSystemType",
        "spec.storageClassSuffix",
        "spec.autoscaling.maxCapacity",
    ),
)
