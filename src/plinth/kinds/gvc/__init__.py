"""The ``gvc`` kind (types-ts gvc.ts): a global virtual cloud, the home of workloads and volume sets.

Decisions where the sources are silent:

- ``alias`` (server-owned, top level) is set once, on create, to 13 lowercase base32
  characters of the SHA-256 of the GVC's id: stable for the GVC's life (the id never
  changes and updates carry the stored alias over), DNS-safe (``a-z2-7``) for CNAME targets
  such as ``{alias}.t.cpln.app``, and 65 bits wide, so two GVCs practically never share one.
  A recreated GVC (new id) gets a new alias, as a new platform GVC would.
- ``status`` is ``{}``: the official API types it as a free-form object and shows nothing
  there for a GVC, and everything derived from the placement (a volume set's locations)
  is computed where it is used, from the GVC itself.
- ``staticPlacement.locationLinks`` name existing, enabled locations of the org (a 400 at the
  link's path): the built-in catalog and the org's BYOK locations (``kinds/location``). A
  location a GVC links to cannot then be disabled or deleted (409 naming the GVC). A
  ``locationQuery`` selects among the org's enabled locations, whenever a status is computed
  (``engine/placement.py``), links first; a location written later changes what it selects,
  and the statuses of what is in the GVC follow. Only new writes are checked: a GVC stored
  before locations were served keeps reading and serving whatever it names, and its next
  write must name locations that exist.
- Links to secrets, identities and the alias workload need not exist yet.
- ``domain`` is deprecated and stored as sent; ``aliasWorkloadLink`` (terraform only) is
  accepted so terraform configurations apply unchanged.

Package layout: ``models`` (the spec schema), ``prepare`` (the alias), ``rules`` (the
cross-field rules), ``links`` (the references a GVC holds).
"""

from __future__ import annotations

from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Access, KindExample, KindSpec, Presentation, Rules, Schema
from plinth.kinds.gvc.links import gvc_references
from plinth.kinds.gvc.models import GvcSpec
from plinth.kinds.gvc.prepare import gvc_alias, prepare_gvc
from plinth.kinds.gvc.rules import validate_gvc, validate_gvc_locations
from plinth.kinds.permissions import declare_permissions

__all__ = ["GVC", "gvc_alias"]

GVC = KindSpec(
    name="gvc",
    scope="org",
    schema=Schema(
        spec_model=GvcSpec,
        server_fields=frozenset({"alias"}),
    ),
    rules=Rules(
        prepare=prepare_gvc,
        validate=validate_gvc,
        references=gvc_references,
        validate_resolved=validate_gvc_locations,
        protects=frozenset({"location"}),
    ),
    access=Access(
        **declare_permissions(extra={"configureLoadBalancer": "Configure the GVC's load balancer"}),
    ),
    presentation=Presentation(
        terraform_resource="cpln_gvc",
        text_columns=("NAME", "DESCRIPTION", "CREATED", "ALIAS", "DOMAIN", "LOCATIONS", "TAGS"),
        title="GVC",
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "alias",
            "spec.endpointNamingFormat",
            "spec.staticPlacement.locationLinks",
            "spec.loadBalancer.dedicated",
            "spec.keda.enabled",
            "spec.domain",
        ),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "spec": {"staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]}, "env": []},
        },
    ),
    example=KindExample(
        valid={"name": "g{n}", "spec": {"loadBalancer": {"dedicated": True}}},
        invalid=(
            ({"name": "g{n}", "spec": {"loadBalancer": {"trustedProxies": 3}}}, "spec.loadBalancer.trustedProxies"),
            ({"name": "g{n}", "spec": {"endpointNamingFormat": "weird"}}, "spec.endpointNamingFormat"),
        ),
        update={"spec": {"env": [{"name": "A", "value": "1"}]}},
    ),
)
