"""The ``gvc`` kind (api.md §2.2): a global virtual cloud, the home of workloads and volume sets.

Decisions where the sources are silent:

- ``alias`` (server-owned, top level) is set once, on create, to 13 lowercase base32
  characters of the SHA-256 of the GVC's id: stable for the GVC's life (the id never
  changes and updates carry the stored alias over), DNS-safe (``a-z2-7``) for CNAME targets
  such as ``{alias}.t.cpln.app``, and 65 bits wide, so two GVCs practically never share one.
  A recreated GVC (new id) gets a new alias, as a new platform GVC would.
- ``status`` is ``{}``: the official API types it as a free-form object and shows nothing
  there for a GVC, and everything derived from the placement (a volume set's locations)
  is computed where it is used, from the GVC itself.
- Links to locations, secrets, identities and the alias workload need not exist yet.
- ``domain`` is deprecated and stored as sent; ``aliasWorkloadLink`` (terraform only) is
  accepted so terraform configurations apply unchanged.
"""

from __future__ import annotations

import base64
import hashlib

from plinth.kinds._gvc_rules import gvc_references, validate_gvc
from plinth.kinds._gvc_spec import GvcSpec
from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Item, KindContext, KindSpec
from plinth.kinds.permissions import permission_fields

ALIAS_LENGTH = 13


def gvc_alias(item_id: str) -> str:
    """The alias of the GVC whose id is ``item_id``: a pure function of the id."""
    digest = hashlib.sha256(item_id.encode()).digest()
    return base64.b32encode(digest).decode().lower()[:ALIAS_LENGTH]


def prepare_gvc(item: Item, old: Item | None, ctx: KindContext) -> None:
    """On create, set ``alias`` from ``ctx.id``; on update the engine has carried it over.

    Without an id (``ctx.id is None``, a candidate that will never be stored) no alias is
    set, rather than one that would not match the stored item's.
    """
    if old is None and ctx.id is not None:
        item["alias"] = gvc_alias(ctx.id)


GVC = KindSpec(
    name="gvc",
    scope="org",
    title="GVC",
    spec_model=GvcSpec,
    server_fields=frozenset({"alias"}),
    **permission_fields("gvc"),
    prepare=prepare_gvc,
    validate=validate_gvc,
    references=gvc_references,
    query_properties=(
        *COMMON_QUERY_PROPERTIES,
        "alias",
        "spec.endpointNamingFormat",
        "spec.staticPlacement.locationLinks",
        "spec.loadBalancer.dedicated",
        "spec.keda.enabled",
        "spec.domain",
    ),
)
