"""The ``quota`` kind (docs.controlplane.com/reference/quota): how many items of a kind an org, or each of its GVCs,
may hold.

Quotas are the server's: no client creates or deletes one. Each is addressed by its **id**
(``GET /org/{org}/quota/{id}``), since names repeat: there is one ``workloads-per-gvc`` quota per
GVC, told apart by ``dimensions`` (``{"gvc": "prod"}``). The id is derived from the org, the
quota and the GVC (a UUID v5), so the engine finds the quota a write counts against without
a lookup, and the stored record's key is that id.

The four known quotas (:data:`QUOTAS`) are enforced by the engine in the transaction of every
create and delete of the kind they count (``engine/quotas.py``). Only ``max`` is the client's
(a PATCH); ``name``, ``description``, ``unit``, ``dimensions``, ``current`` and ``origin`` are
server-owned and dropped from a body like any server field. Quotas carry no ``tags``.

Where the sources are silent (docs.controlplane.com/reference/quota): the default maxima below are Plinth's choice,
generous enough that a team never meets them by accident and low enough that a runaway script
does; a ``max`` lowered below ``current`` is accepted (nothing is removed; creates are refused
until enough items are deleted).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Access, KindSpec, Presentation, Schema
from plinth.kinds.permissions import declare_permissions
from plinth.kinds.spec_model import TopLevelModel

#: The largest ``max`` a client may set.
MAX_LIMIT = 1_000_000


@dataclass(frozen=True, slots=True)
class QuotaDefinition:
    """One known quota: what it counts (``counts``, a kind), and its ``container``: the kind
    whose items each hold one of it (``"gvc"``: per GVC, created and deleted with the GVC), or
    ``None`` for one per org."""

    name: str
    counts: str
    container: str | None
    default_max: int
    unit: str
    description: str

    @property
    def per_gvc(self) -> bool:
        """Whether each GVC holds one of this quota."""
        return self.container == "gvc"


QUOTAS: tuple[QuotaDefinition, ...] = (
    QuotaDefinition("agents", "agent", None, 100, "agents", "Max number of agents"),
    QuotaDefinition("domains", "domain", None, 1000, "domains", "Max number of domains"),
    QuotaDefinition(
        "identities-per-gvc", "identity", "gvc", 1000, "identities", "Max number of workload identities in a gvc"
    ),
    QuotaDefinition("workloads-per-gvc", "workload", "gvc", 1000, "workloads", "Max number of workloads in a gvc"),
)
LIMITING: dict[str, QuotaDefinition] = {q.counts: q for q in QUOTAS}
#: The fields of a quota's document the store counts in (``storage.base.Tally``): the usage,
#: and the ceiling it may not pass.
COUNTER_FIELD = "current"
CEILING_FIELD = "max"
#: Fixed, so that every server derives the same ids.
_ID_NAMESPACE = uuid.UUID("6a1f4c0e-2b9d-5e53-9c1a-7d0f2e8b4a61")


def quota_id(org: str, quota: QuotaDefinition, gvc: str | None) -> str:
    """The id (and stored key name) of ``quota`` for ``org``, and for ``gvc`` when per GVC."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"{org}/{quota.name}/{gvc or ''}"))


def quota_fields(quota: QuotaDefinition, gvc: str | None, current: int) -> dict[str, Any]:
    """The server-owned fields of a new quota item (its ``max`` is the default)."""
    return {
        "name": quota.name,
        "description": quota.description,
        "unit": quota.unit,
        "dimensions": {"gvc": gvc} if quota.per_gvc else {},
        "max": quota.default_max,
        "current": current,
        "origin": "default",
    }


def exceeded_message(quota: QuotaDefinition, gvc: str | None, max_items: int | None) -> str:
    """The 429's message; it names the quota, as clients look for "quota" in it
    (docs.controlplane.com/reference/quota)."""
    where = f"GVC '{gvc}'" if quota.per_gvc else "the org"
    limit = f" of {max_items} {quota.unit}" if max_items is not None else ""
    return f"Quota '{quota.name}'{limit} for {where} is exhausted; delete some or raise the quota's max"


class QuotaFields(TopLevelModel):
    max: Annotated[int, Field(ge=0, le=MAX_LIMIT)]


def _any_name(name: str) -> str | None:
    """Quotas are never created by clients; the path names them by id, which is always fine."""
    return None


QUOTA = KindSpec(
    name="quota",
    scope="org",
    schema=Schema(
        addressed_by_id=True,
        has_tags=False,
        name_rule=_any_name,
        top_level_model=QuotaFields,
        server_fields=frozenset({"name", "description", "unit", "dimensions", "current", "origin"}),
    ),
    access=Access(
        verbs=frozenset({"get", "list", "patch"}),
        # Permissions: Quotas are the platform's: no delete.
        **declare_permissions(without=("delete",)),
        delete_permission="manage",
    ),
    presentation=Presentation(
        title="Quota",
        terraform_resource=None,
        text_columns=("ID", "NAME", "DESCRIPTION", "ORIGIN", "CURRENT", "MAX", "UNIT", "DIMENSIONS"),
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin", "max", "current", "unit"),
    ),
)
