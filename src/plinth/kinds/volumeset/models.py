"""The volume set spec schema (docs.controlplane.com/reference/volumeset; VolumeSet.yaml for the nested shapes).

Single-field rules live here (bounds, patterns, cron and quantity syntax) so they are
reported together with every other schema error. Rules that relate fields to each other
(per-class capacity minimums, shared-only blocks, resource ranges) are in ``rules``.
Defaults are filled only inside blocks the client sent; the class and file system defaults
depend on each other and are filled by ``prepare``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from plinth.kinds.cron import check_schedule
from plinth.kinds.quantity import check_quantity
from plinth.kinds.spec_model import NonEmptyStr, SpecModel

PerformanceClass = Literal["general-purpose-ssd", "high-throughput-ssd", "shared"]
FileSystemType = Literal["ext4", "xfs", "shared"]
#: The shared performance class and the shared file system: each needs the other.
SHARED = "shared"

#: The largest volume any performance class offers, in GB.
MAX_CAPACITY_GB = 65536
#: The smallest minimum of any class; a class may require more (``rules``).
MIN_CAPACITY_GB = 10

Capacity = Annotated[int, Field(ge=MIN_CAPACITY_GB, le=MAX_CAPACITY_GB)]
ScalingFactor = Annotated[float, Field(ge=1.1)]
Quantity = Annotated[str, AfterValidator(check_quantity)]


#: The platform's pattern ^[0-9]+(\.[0-9]+)?[dhm]$, matched whole (``re.fullmatch``: a
#: Python ``$`` would also accept a trailing newline).
_RETENTION = re.compile(r"[0-9]+(\.[0-9]+)?[dhm]")


def _check_retention(value: str) -> str:
    if not _RETENTION.fullmatch(value):
        raise ValueError("must be a number followed by d, h or m (e.g. 7d, 12h, 1.5d)")
    return value


class Snapshots(SpecModel):
    createFinalSnapshot: bool = True
    retentionDuration: Annotated[str, AfterValidator(_check_retention)] | None = None
    schedule: Annotated[str, AfterValidator(check_schedule)] | None = None


class Predictive(SpecModel):
    """Growth forecasting: expand ahead of need from the recent usage trend."""

    enabled: bool = False
    lookbackHours: Annotated[float, Field(ge=1, le=168)] = 24.0
    projectionHours: Annotated[float, Field(ge=1, le=72)] = 6.0
    minDataPoints: Annotated[int, Field(ge=2, le=100)] = 10
    minGrowthRateGBPerHour: Annotated[float, Field(ge=0)] = 0.01
    #: Defaults to the enclosing ``autoscaling.scalingFactor`` (filled by ``prepare``).
    scalingFactor: ScalingFactor | None = None


class Autoscaling(SpecModel):
    maxCapacity: Capacity | None = None
    minFreePercentage: Annotated[int, Field(ge=1, le=100)] | None = None
    scalingFactor: ScalingFactor | None = None
    predictive: Predictive | None = None


class MountResources(SpecModel):
    """CPU and memory for each mount point of a shared volume set (Kubernetes quantities)."""

    minCpu: Quantity | None = None
    maxCpu: Quantity | None = None
    minMemory: Quantity | None = None
    maxMemory: Quantity | None = None


class MountOptions(SpecModel):
    resources: MountResources | None = None


class EncryptionKey(SpecModel):
    keyId: NonEmptyStr


class CustomEncryption(SpecModel):
    #: ``{cloud}-{region}`` (e.g. ``aws-us-east-1``) to the KMS key that encrypts volumes there.
    regions: dict[NonEmptyStr, EncryptionKey] | None = None


class VolumeSetSpec(SpecModel):
    initialCapacity: Capacity
    performanceClass: PerformanceClass | None = None
    fileSystemType: FileSystemType | None = None
    storageClassSuffix: Annotated[str, Field(pattern=r"^[a-zA-Z][0-9a-zA-Z\-_]*$")] | None = None
    customEncryption: CustomEncryption | None = None
    snapshots: Snapshots | None = None
    autoscaling: Autoscaling | None = None
    mountOptions: MountOptions | None = None
