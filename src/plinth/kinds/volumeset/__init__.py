"""The ``volumeset`` kind (docs.controlplane.com/reference/volumeset): persistent volumes for the workloads of one GVC.

``performanceClass`` and ``fileSystemType`` are immutable: the engine compares them after
``prepare`` has filled their defaults, so an update that leaves them out keeps them rather
than changing them. The decisions taken where the sources are silent are listed in the docstrings
of ``prepare``, ``rules`` and ``status``.

Package layout: ``models`` (the spec schema), ``prepare`` (the defaults), ``rules`` (the
cross-field rules), ``status`` (the computed status, which follows the parent GVC).
"""

from __future__ import annotations

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    KindExample,
    KindSpec,
    Presentation,
    ReadsLinked,
    ReadsLinkers,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.links import READS_PLACEMENTS
from plinth.kinds.volumeset.models import VolumeSetSpec
from plinth.kinds.volumeset.prepare import prepare_volumeset
from plinth.kinds.volumeset.rules import validate_volumeset
from plinth.kinds.volumeset.status import compute_volumeset_status

VOLUMESET = KindSpec(
    name="volumeset",
    scope="gvc",
    schema=Schema(
        spec_model=VolumeSetSpec,
        spec_required=True,
        immutable=("spec.performanceClass", "spec.fileSystemType"),
    ),
    rules=Rules(
        prepare=prepare_volumeset,
        validate=validate_volumeset,
    ),
    status=Status(
        compute=compute_volumeset_status,
        depends_on=(
            ReadsLinked(frozenset({"gvc"})),
            ReadsLinkers(frozenset({"workload"})),
            *READS_PLACEMENTS,
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_volume_set",
        text_columns=("NAME", "DESCRIPTION", "GVC", "CREATED", "PERFORMANCE CLASS", "FILE SYSTEM TYPE", "TAGS"),
        title="VolumeSet",
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "gvc",
            "spec.initialCapacity",
            "spec.performanceClass",
            "spec.fileSystemType",
            "spec.storageClassSuffix",
            "spec.autoscaling.maxCapacity",
        ),
        short_names=("vs",),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "spec": {"initialCapacity": 10, "performanceClass": "general-purpose-ssd", "fileSystemType": "ext4"},
        },
    ),
    example=KindExample(
        valid={"name": "v{n}", "spec": {"initialCapacity": 10}},
        invalid=(
            ({"name": "v{n}", "spec": {"initialCapacity": 5}}, "spec.initialCapacity"),
            ({"name": "v{n}", "spec": {}}, "spec.initialCapacity"),
        ),
        update={"spec": {"initialCapacity": 20}},
        needs=(("/org/{org}/gvc", {"name": "g{n}"}),),
        gvc="g{n}",
    ),
)
