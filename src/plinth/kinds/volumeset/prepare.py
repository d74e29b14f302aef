"""A volume set's defaults (docs.controlplane.com/reference/volumeset), filled by :func:`prepare_volumeset`:

- ``performanceClass`` omitted: ``shared`` when the file system is shared, otherwise
  ``general-purpose-ssd`` (what the official CLI sends; the API's own default is
  unconfirmed, and refusing the request would break clients that rely on the CLI's habit).
- ``fileSystemType`` omitted: ``shared`` when the class is shared, otherwise ``ext4``.
- ``autoscaling.predictive.scalingFactor`` omitted: the enclosing ``scalingFactor``.
- ``mountOptions`` on a shared set: any missing resource gets 500m / 2000m CPU and
  1Gi / 2Gi memory.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import Item, KindContext
from plinth.kinds.volumeset.models import SHARED, VolumeSetSpec

DEFAULT_CLASS = "general-purpose-ssd"
DEFAULT_FILE_SYSTEM = "ext4"
DEFAULT_MOUNT_RESOURCES = {"minCpu": "500m", "maxCpu": "2000m", "minMemory": "1Gi", "maxMemory": "2Gi"}


def fill_volumeset_defaults(spec: dict[str, Any]) -> None:
    """Fill the defaults listed in the module docstring into ``spec`` (mutates it)."""
    shared_fs = spec.get("fileSystemType") == SHARED
    spec.setdefault("performanceClass", SHARED if shared_fs else DEFAULT_CLASS)
    spec.setdefault("fileSystemType", SHARED if spec["performanceClass"] == SHARED else DEFAULT_FILE_SYSTEM)
    autoscaling = spec.get("autoscaling", {})
    predictive = autoscaling.get("predictive")
    if predictive is not None and "scalingFactor" in autoscaling:
        predictive.setdefault("scalingFactor", autoscaling["scalingFactor"])
    mount = spec.get("mountOptions")
    if mount is not None and spec["fileSystemType"] == SHARED:
        mount["resources"] = {**DEFAULT_MOUNT_RESOURCES, **mount.get("resources", {})}


def prepare_volumeset(item: Item, old: Item | None, ctx: KindContext) -> None:
    """Fill the class, file system, predictive factor and mount resource defaults."""
    spec = item["spec"]
    fill_volumeset_defaults(spec)
    # Keep the schema's field order, so filled-in defaults read where a client expects them.
    item["spec"] = {name: spec[name] for name in VolumeSetSpec.model_fields if name in spec}
