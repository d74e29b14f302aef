"""The ``domain`` kind (docs.controlplane.com/reference/domain): an org-scoped FQDN routed to a GVC or to workloads.

Package layout, one job per module (this module only declares the kind):

- ``models``: the spec's shape, enums, bounds and API defaults;
- ``names``: the name rule (an FQDN) and what "apex" and ".internal" mean;
- ``prepare``: defaults that depend on other fields or on the name;
- ``rules`` / ``route_rules``: every cross-field rule, with paths;
- ``links``: where links sit in a spec, the references a domain holds, and which GVC it serves;
- ``status`` / ``dns``: the computed status and its DNS records.

Ownership checks that need the whole store (``must_prove_ownership``, ``apex_must_exist``,
``apex_owned_by_other_org``, ``parent_ns_domain_exists``) are not hook rules: they compare
this domain with other domains, which the hooks cannot see.
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
from plinth.kinds.domain.links import domain_references
from plinth.kinds.domain.models import DomainSpec
from plinth.kinds.domain.names import domain_name_rule
from plinth.kinds.domain.prepare import prepare_domain
from plinth.kinds.domain.rules import validate_domain
from plinth.kinds.domain.status import compute_domain_status
from plinth.kinds.links import READS_PLACEMENTS

DOMAIN = KindSpec(
    name="domain",
    scope="org",
    schema=Schema(
        spec_model=DomainSpec,
        name_rule=domain_name_rule,
    ),
    rules=Rules(
        prepare=prepare_domain,
        validate=validate_domain,
        references=domain_references,
    ),
    status=Status(
        compute=compute_domain_status,
        depends_on=(
            ReadsLinked(frozenset({"gvc", "workload"})),
            *READS_PLACEMENTS,
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_domain",
        text_columns=("NAME", "DESCRIPTION", "TAGS"),
        title="Domain",
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "spec.dnsMode",
            "spec.gvcLink",
            "spec.certChallengeType",
            "spec.workloadLink",
            "spec.acceptAllHosts",
            "spec.acceptAllSubdomains",
        ),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "spec": {
                "dnsMode": "cname",
                "ports": [
                    {
                        "number": 443,
                        "protocol": "http2",
                        "routes": [{"prefix": "/", "workloadLink": "//gvc/{gvc}/workload/web"}],
                    }
                ],
            },
        },
    ),
    example=KindExample(
        valid={
            "name": "d{n}.example.com",
            "spec": {"ports": [{"routes": [{"prefix": "/", "workloadLink": "//gvc/g{n}/workload/web"}]}]},
        },
        invalid=(
            ({"name": "d{n}.example.com", "spec": {"dnsMode": "nope"}}, "spec.dnsMode"),
            ({"name": "d{n}.example.com", "spec": {"ports": [{"number": 70000}]}}, "spec.ports[0].number"),
            ({"name": "d{n}.example.com", "spec": {"gvcLink": "//gvc/does-not-exist"}}, "spec.gvcLink"),
        ),
        update={"spec": {"acceptAllSubdomains": True}},
        needs=(("/org/{org}/gvc", {"name": "g{n}"}),),
    ),
)
