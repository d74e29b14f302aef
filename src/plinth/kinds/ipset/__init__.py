"""The ``ipset`` kind (docs.controlplane.com/reference/ipset): reserved public addresses for a workload's direct load
balancer or a GVC's dedicated one, one per location.

``spec.link`` names the workload or GVC, which names the IP set back
(``spec.loadBalancer.direct.ipSet``, ``spec.loadBalancer.ipSet``); ``spec.locations`` lists
where addresses are held and what happens to each once unused (``retentionPolicy``: ``keep``,
the default, or ``free``). ``spec`` may be left out or empty: an IP set that links nothing
holds nothing.

Package layout: ``models`` (the spec schema), ``links`` (the links and their rules),
``status`` (the computed status, which follows the linked item).

Decisions where the sources are silent (docs.controlplane.com/reference/ipset; docs/api.md, IP sets):

- Neither the linked item nor the locations need exist, and the link need not be returned:
  the status warns instead (``status``), so an IP set and what uses it can be written in
  either order. A workload's ``direct.ipSet`` need not name an existing IP set either
  (``cpln apply`` writes IP sets after workloads).
- Location names and links are stored as full links, each location once.
- No addresses are allocated; ``ipAddresses`` is empty and a delete is never refused for
  bound addresses.
- Permissions: the default set (``create``, ``delete``, ``edit``, ``manage``, ``view``); the
  sources document none. Queries work as for every kind (``-query``).
"""

from __future__ import annotations

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    KindExample,
    KindSpec,
    Presentation,
    ReadsLinked,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.ipset.links import ipset_references, validate_ipset
from plinth.kinds.ipset.models import IpSetSpec
from plinth.kinds.ipset.status import compute_ipset_status

IPSET = KindSpec(
    name="ipset",
    scope="org",
    schema=Schema(
        spec_model=IpSetSpec,
    ),
    rules=Rules(
        validate=validate_ipset,
        references=ipset_references,
    ),
    status=Status(
        compute=compute_ipset_status,
        depends_on=(ReadsLinked(frozenset({"workload", "gvc"})),),
    ),
    presentation=Presentation(
        terraform_resource="cpln_ipset",
        text_columns=("NAME", "DESCRIPTION", "LINK", "LOCATIONS", "TAGS"),
        title="IpSet",
        query_properties=COMMON_QUERY_PROPERTIES,
        template={
            "name": "",
            "description": "",
            "tags": {},
            "spec": {
                "link": "//gvc/{gvc}",
                "locations": [{"name": "//location/aws-us-east-1", "retentionPolicy": "keep"}],
            },
        },
    ),
    example=KindExample(
        valid={
            "name": "ips{n}",
            "spec": {"link": "//gvc/g{n}", "locations": [{"name": "//location/aws-us-east-1"}]},
        },
        invalid=(
            ({"name": "ips{n}", "spec": {"link": "//workload/w"}}, "spec.link"),
            (
                {"name": "ips{n}", "spec": {"locations": [{"name": "x", "retentionPolicy": "hold"}]}},
                "spec.locations[0].retentionPolicy",
            ),
            (
                {
                    "name": "ips{n}",
                    "spec": {"locations": [{"name": "aws-us-east-1"}, {"name": "//location/aws-us-east-1"}]},
                },
                "spec.locations[1].name",
            ),
        ),
        update={"spec": {"locations": [{"name": "aws-us-east-1", "retentionPolicy": "free"}]}},
        needs=(("/org/{org}/gvc", {"name": "g{n}"}),),
    ),
)
