"""The ``workload`` kind (kinds.md §1): containers a GVC runs, in every location it is placed.

Package layout, one job per module:

- ``models``: the spec schema except the containers (options, firewall, job, rollout, ...);
- ``containers``: the container schema and the containers' own rules;
- ``prepare``: the API's defaults; ``rules``: the cross-field rules and the type matrix;
- ``links``: the links a workload holds; ``status``: the server-computed status.
"""

from __future__ import annotations

from plinth.kinds.base import COMMON_QUERY_PROPERTIES, KindSpec
from plinth.kinds.permissions import permission_fields
from plinth.kinds.workload.links import workload_references
from plinth.kinds.workload.models import WorkloadSpec
from plinth.kinds.workload.prepare import prepare_workload
from plinth.kinds.workload.rules import validate_workload

WORKLOAD = KindSpec(
    name="workload",
    scope="gvc",
    title="Workload",
    spec_model=WorkloadSpec,
    spec_required=True,
    **permission_fields("workload"),
    immutable=("spec.type",),
    prepare=prepare_workload,
    validate=validate_workload,
    references=workload_references,
    status_inputs=frozenset({"gvc"}),
    query_properties=(*COMMON_QUERY_PROPERTIES, "gvc", "spec.type", "spec.identityLink"),
)
