"""The ``org`` kind (types-ts org.ts): the root every other item lives under.

Decisions where the sources are silent:

- Orgs are never deleted (the CLI route map, CLI rest/map.js, has no DELETE on an org), so ``delete`` is not a verb.
- Names follow the common rule and are also not ``index`` and not ``xserve-*``; those
  collide with the official platform's own host names, and a name valid here should stay
  valid if the org is ever moved there.
- ``status.accountLink`` is ``/account/{org}``: a self-hosted install has no billing
  accounts, so each org stands for its own; the link is stable and readable.
- ``status.active`` is always ``true`` (Plinth has no suspended orgs).
- ``status.endpointPrefix`` is the org name: it is already unique and DNS-safe, so
  workload endpoints can be ``{workload}-{endpointPrefix}.{domain}`` without a lookup.
- ``sessionTimeoutSeconds`` must be a positive integer; observability retention days are
  non-negative integers; alert emails must look like ``user@domain.tld``.

Package layout: ``models`` (the spec schema), ``log_destinations`` (``spec.logging`` and
``spec.extraLogging``); the name rule and the status are small enough to sit here.
"""

from __future__ import annotations

from typing import Any

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    CRUD_VERBS,
    Access,
    Item,
    KindContext,
    KindSpec,
    Presentation,
    Schema,
    Status,
    default_name_rule,
)
from plinth.kinds.org.models import OrgSpec
from plinth.kinds.permissions import EXEC_DESCRIPTION, declare_permissions


def org_name_rule(name: str) -> str | None:
    """The common name rule, plus the two names the platform reserves for itself."""
    problem = default_name_rule(name)
    if problem:
        return problem
    if name == "index" or name.startswith("xserve-"):
        return "is reserved ('index' and names starting with 'xserve-' cannot be used)"
    return None


def compute_org_status(item: Item, ctx: KindContext) -> dict[str, Any]:
    """``{accountLink, active, endpointPrefix}``; see the module docstring for the values."""
    name = item["name"]
    return {"accountLink": f"/account/{name}", "active": True, "endpointPrefix": name}


ORG = KindSpec(
    name="org",
    scope="root",
    schema=Schema(
        spec_model=OrgSpec,
        name_rule=org_name_rule,
    ),
    status=Status(
        compute=compute_org_status,
    ),
    access=Access(
        # Permissions: Creating an org is the server admin's right, and orgs are never deleted: no create or delete.
        **declare_permissions(
            extra={
                "exec": EXEC_DESCRIPTION,
                "exec.echo": "Run the echo command",
                "grafanaAdmin": "Administer the org's Grafana",
                "readLogs": "Read the logs of every workload",
                "readMetrics": "Read metrics",
                "readUsage": "Read usage",
                "viewAccessReport": "View the access report",
            },
            implied={"exec": ("exec.echo",)},
            without=("create", "delete"),
        ),
        verbs=CRUD_VERBS - {"delete"},
        seeds_access=True,  # its built-in groups and policies
    ),
    presentation=Presentation(
        terraform_resource="cpln_org",
        text_columns=("NAME", "DESCRIPTION", "LINK", "TAGS"),
        title="Org",
        query_properties=(
            *COMMON_QUERY_PROPERTIES,
            "spec.sessionTimeoutSeconds",
            "spec.authConfig.samlOnly",
            "spec.security.threatDetection.enabled",
        ),
    ),
)
