"""A volume set's status (computed, never sent). Plinth provisions no storage itself, so the
status shows what the platform would hold before any workload attaches:

- ``parentId``: the id of the parent GVC;
- ``locations``: one entry per location the parent GVC is placed in (its
  ``staticPlacement.locationLinks``, in order, each once, named by the link's last segment,
  then the enabled locations its ``locationQuery`` selects: ``ctx.placements``), with no
  ``volumes`` yet. ``desiredVolumeCount`` is 1 for a shared set (one
  volume per location, whoever mounts it) and 0 otherwise (ext4/xfs volumes are one per
  replica of the attached workload, and there is none);
- ``workloadLinks``: the workloads that mount the set (``ctx.referrers``: the engine
  refreshes the status on every write or delete of a workload that mounts it or did).

The status follows the parent: it ``ReadsLinked`` ``gvc`` and ``READS_PLACEMENTS`` (``kinds/links.py``),
so the engine recomputes it when the parent GVC's placement, or a location its query selects, changes.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.links import gvc_locations
from plinth.kinds.volumeset.models import SHARED


def compute_volumeset_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """``{parentId, locations, workloadLinks}`` from the item and ``ctx.parent``; pure."""
    parent = ctx.parent or {}
    volumes_per_location = 1 if item["spec"]["fileSystemType"] == SHARED else 0
    status: dict[str, Any] = {}
    if "id" in parent:
        status["parentId"] = parent["id"]
    status["locations"] = [
        {"name": name, "volumes": [], "desiredVolumeCount": volumes_per_location}
        for name in gvc_locations(parent, ctx.placements, ctx.org)
    ]
    status["workloadLinks"] = list(ctx.referrers)
    return status
