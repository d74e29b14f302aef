"""The ``auditctx`` kind (docs.controlplane.com/reference/auditctx): a named context that audit events are written to
and read from (the audit service itself is not Plinth's: ``/discovery`` names it, nothing serves it).

An audit context has no ``spec``: only its description and tags are the client's. ``origin``
(server-owned) is ``default`` for contexts clients create and ``builtin`` for ``cpln``, the
context every org is created with (it receives the platform's own events), which no client may
edit (``builtin_is_read_only``). ``status`` is ``{}``.

Decisions where the sources disagree (docs.controlplane.com/reference/auditctx; docs/api.md, Audit contexts):

- **Audit contexts are never deleted.** The official CLI has no delete command (it is
  commented out), the Terraform provider only forgets them, the vendor's runbook says there is
  no delete, and the permission table has no ``delete``; only the docs' operation list names
  a DELETE. So ``delete`` is not among the verbs: a DELETE is a 405 with ``Allow``, as for orgs.
  A context is kept for its events, which outlive any use of it.
- The built-in ``cpln`` context is seeded with the org's other built-ins (``server/bootstrap.py``),
  for orgs seeded after this kind was served.
"""

from __future__ import annotations

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    CRUD_VERBS,
    Access,
    Item,
    KindContext,
    KindExample,
    KindSpec,
    Lifecycle,
    Presentation,
    Rules,
    Schema,
)
from plinth.kinds.permissions import declare_permissions

#: The built-in context of every org.
BUILTIN_CONTEXT = "cpln"


def prepare_auditctx(item: Item, old: Item | None, ctx: KindContext) -> None:
    """``origin`` on create (the engine carries it over on update)."""
    item.setdefault("origin", "default")


AUDITCTX = KindSpec(
    name="auditctx",
    scope="org",
    schema=Schema(
        server_fields=frozenset({"origin"}),
    ),
    rules=Rules(
        prepare=prepare_auditctx,
    ),
    lifecycle=Lifecycle(
        builtin_is_read_only=True,
    ),
    access=Access(
        verbs=CRUD_VERBS - {"delete"},
        # Permissions: Audit contexts are never deleted: no delete (docs.controlplane.com/reference/policy).
        **declare_permissions(
            extra={"readAudit": "Read audit events", "writeAudit": "Write audit events"},
            implied={"readAudit": ("view",), "writeAudit": ("view",)},
            without=("delete",),
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_audit_context",
        text_columns=("NAME", "DESCRIPTION", "ORIGIN", "TAGS"),
        title="AuditContext",
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin"),
        template={"name": "", "description": "", "tags": {}},
    ),
    example=KindExample(
        valid={"name": "ctx{n}", "description": "Payments audit trail", "tags": {"team": "payments"}},
        invalid=(
            ({"name": "Ctx{n}"}, "name"),
            ({"name": "ctx{n}", "spec": {"retention": 30}}, "spec"),
            ({"name": "ctx{n}", "tags": {"cpln/builtin": "true"}}, "tags.cpln/builtin"),
        ),
        update={"description": "Payments audit trail (PCI)"},
    ),
)
