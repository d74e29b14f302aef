"""The ``workload`` kind (docs.controlplane.com/reference/workload): containers a GVC runs, in every location it is
placed.

Package layout, one job per module:

- ``models``: the spec schema except the containers (options, firewall, job, rollout, ...);
- ``containers``: the container schema and the containers' own rules;
- ``prepare``: the API's defaults; ``rules``: the cross-field rules and the type matrix;
- ``links``: the links a workload holds, and the rules on what they resolve to;
- ``status``: the server-computed status; ``commands``: the ``-command`` request bodies;
- ``actions``: the deployments and commands endpoints; ``answers``: their answers' models.

Beyond its verbs a workload serves (``KindSpec.actions``) its deployments
(``.../workload/{name}/deployment[/{location}]``) and its commands (``.../-command[/{id}]``),
served by ``actions.py`` (answers in ``answers.py``) from the runtime, through the engine's
:class:`~plinth.kinds.actions.ActionContext`.
Commands are stored under the workload and deleted with it. A workload protects the volume
sets it mounts and the identity it names: deleting one of them is a 409 while it is in use.
"""

from __future__ import annotations

from plinth.errors import FieldError
from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    AsksGrants,
    Item,
    KindContext,
    KindExample,
    KindSpec,
    Lifecycle,
    Presentation,
    ReadsLinked,
    ReadsRuntime,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.links import READS_PLACEMENTS
from plinth.kinds.permissions import EXEC_DESCRIPTION, declare_permissions
from plinth.kinds.workload.actions import ACTIONS
from plinth.kinds.workload.links import identity_link_errors, validate_workload_links, workload_references
from plinth.kinds.workload.models import WorkloadSpec
from plinth.kinds.workload.prepare import prepare_workload
from plinth.kinds.workload.rules import validate_workload, workload_name_rule
from plinth.kinds.workload.secret_refs import reveal_questions, workload_blockers
from plinth.kinds.workload.status import compute_workload_status

#: Tags with documented behaviour on workloads (docs.controlplane.com/reference/workload/general) that clients may set.
WORKLOAD_TAGS = frozenset(
    {
        "cpln/deployTimestamp",
        "cpln/publishNotReadyAddresses",
        "cpln/protocol",
        "cpln/bypassProxyOutbound",
        "cpln/disableServiceMeshInboundPort",
        "cpln/disableServiceMeshOutboundPort",
        "cpln/multiZone",
        "cpln/skipLocationEndpointHeaders",
        "cpln/discoverCrossGvcReplicas",
        "cpln/tracingDisabled",
        "cpln/largeDisk",
        "cpln/timeoutSecondsOverride",
        "cpln/disableServiceMesh",
        "cpln/disableServiceMeshOutboundCIDR",
        "cpln/k8sClusterRole",
        "cpln/ignore",
        "cpln/relaxGracePeriodMax",
        "cpln/relaxMemoryToCpuRatio",
        "cpln/run",
        "cpln/run-identity",
    }
)


def validate(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """The spec's rules (``rules``) and the rule on the identity link's GVC (``links``)."""
    return validate_workload(item, old, ctx) + identity_link_errors(item, ctx)


def write_permissions(item: Item, old: Item | None) -> tuple[str, ...]:
    """Changing the direct load balancer (an external address, billed) needs
    ``configureLoadBalancer``, which ``edit`` does not imply
    (docs.controlplane.com/reference/workload/load-balancing)."""
    direct = (item["spec"].get("loadBalancer") or {}).get("direct")
    before = (((old or {}).get("spec") or {}).get("loadBalancer") or {}).get("direct")
    return ("configureLoadBalancer",) if direct != before else ()


WORKLOAD = KindSpec(
    name="workload",
    scope="gvc",
    schema=Schema(
        spec_model=WorkloadSpec,
        spec_required=True,
        name_rule=workload_name_rule,
        immutable=("spec.type",),
        reserved_tags=WORKLOAD_TAGS,
    ),
    rules=Rules(
        prepare=prepare_workload,
        validate=validate,
        references=workload_references,
        validate_resolved=validate_workload_links,
        protects=frozenset({"volumeset", "identity"}),
    ),
    status=Status(
        compute=compute_workload_status,
        depends_on=(
            ReadsLinked(frozenset({"gvc", "secret"})),
            *READS_PLACEMENTS,
            AsksGrants(reveal_questions),
            ReadsRuntime(blockers=workload_blockers),
        ),
    ),
    lifecycle=Lifecycle(
        owned_records=("command",),
    ),
    access=Access(
        **declare_permissions(
            extra={
                "configureLoadBalancer": "Configure the workload's load balancer",
                "connect": "Open an interactive shell in a replica",
                "exec": EXEC_DESCRIPTION,
                "exec.runCronWorkload": "Force a cron workload to run",
                "exec.stopReplica": "Force a replica to stop",
            },
            implied={"exec": ("exec.runCronWorkload", "exec.stopReplica")},
        ),
        write_permissions=write_permissions,
    ),
    presentation=Presentation(
        terraform_resource="cpln_workload",
        text_columns=("NAME", "DESCRIPTION", "GVC", "READY", "CREATED", "ENDPOINT", "TAGS"),
        title="Workload",
        item_links=(("deployment", "deployment"),),
        short_names=("w",),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "spec": {
                "type": "serverless",
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:latest",
                        "cpu": "50m",
                        "memory": "128Mi",
                        "ports": [{"number": 8080, "protocol": "http"}],
                        "env": [],
                    }
                ],
                "defaultOptions": {
                    "autoscaling": {"metric": "concurrency", "minScale": 1, "maxScale": 3},
                    "capacityAI": False,
                },
                "firewallConfig": {"external": {"inboundAllowCIDR": ["0.0.0.0/0"]}},
            },
        },
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "gvc",
            "spec.type",
            "spec.identityLink",
            "spec.supportDynamicTags",
            "spec.defaultOptions.suspend",
            "spec.defaultOptions.capacityAI",
            "spec.defaultOptions.autoscaling.metric",
        ),
    ),
    actions=ACTIONS,
    example=KindExample(
        valid={
            "name": "w{n}",
            "spec": {"containers": [{"name": "app", "image": "nginx:latest", "ports": [{"number": 8080}]}]},
        },
        invalid=(
            ({"name": "w{n}", "spec": {"containers": []}}, "spec.containers"),
            ({"name": "w{n}", "spec": {"type": "batch", "containers": [{"name": "app", "image": "x"}]}}, "spec.type"),
            ({"name": "w{n}-headless", "spec": {"containers": [{"name": "app", "image": "x"}]}}, "name"),
        ),
        update={"spec": {"$patch/containers": [{"name": "app", "image": "nginx:1.27"}]}},
        needs=(("/org/{org}/gvc", {"name": "g{n}"}),),
        gvc="g{n}",
    ),
)
