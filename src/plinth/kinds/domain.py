"""The ``domain`` kind (api.md §2.3): an org-scoped FQDN routed to a GVC or to workloads.

The rules are split by job into private modules:

- ``_domain_models``: the spec's shape, enums, bounds and API defaults;
- ``_domain_names``: the name rule (an FQDN) and what "apex" and ".internal" mean;
- ``_domain_prepare``: defaults that depend on other fields or on the name;
- ``_domain_rules`` / ``_domain_route_rules``: every cross-field rule, with paths;
- ``_domain_links``: where links sit in a spec, and which GVC a domain serves;
- ``_domain_status`` / ``_domain_dns``: the computed status and its DNS records.

Ownership checks that need the whole store (``must_prove_ownership``, ``apex_must_exist``,
``apex_owned_by_other_org``, ``parent_ns_domain_exists``) are not hook rules: they compare
this domain with other domains, which the hooks cannot see.
"""

from __future__ import annotations

from plinth.kinds._domain_links import spec_links, workload_gvc_href
from plinth.kinds._domain_models import DomainSpec
from plinth.kinds._domain_names import domain_name_rule
from plinth.kinds._domain_prepare import prepare_domain
from plinth.kinds._domain_rules import validate_domain
from plinth.kinds._domain_status import compute_domain_status
from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Item, KindSpec, Reference
from plinth.kinds.permissions import permission_fields


def domain_references(item: Item, org: str) -> list[Reference]:
    """The links a domain holds, each at its JSON path.

    ``gvcLink`` must name an existing GVC. Workloads are not served yet and secrets are
    checked when they are read, so those links need only be well-formed and in this org.
    The GVC that routed workloads live in is listed too (not required to exist), so its
    item reaches ``compute_status`` (load balancer, alias, locations) and a change to it
    refreshes the domain's status.
    """
    references: list[Reference] = []
    gvcs_seen: set[str] = set()
    for found in spec_links(item.get("spec") or {}):
        must_exist = found.kind == "gvc"
        references.append(Reference(found.path, found.value, frozenset({found.kind}), must_exist=must_exist))
        if found.kind == "workload":
            gvc = workload_gvc_href(found.value, org)
            if gvc is not None and gvc not in gvcs_seen:
                gvcs_seen.add(gvc)
                # The path holds the workload's link, not the GVC's: never rewrite it with this one.
                references.append(Reference(found.path, gvc, frozenset({"gvc"}), must_exist=False, rewrite=False))
    return references


DOMAIN = KindSpec(
    name="domain",
    scope="org",
    title="Domain",
    spec_model=DomainSpec,
    name_rule=domain_name_rule,
    **permission_fields("domain"),
    prepare=prepare_domain,
    validate=validate_domain,
    compute_status=compute_domain_status,
    references=domain_references,
    status_inputs=frozenset({"gvc"}),
    query_properties=(
        *COMMON_QUERY_PROPERTIES,
        "spec.dnsMode",
        "spec.gvcLink",
        "spec.certChallengeType",
        "spec.workloadLink",
        "spec.acceptAllHosts",
        "spec.acceptAllSubdomains",
    ),
)
