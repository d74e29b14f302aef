"""The one permission table: what a policy may grant on each kind, and what each grant implies.

Every kind that a policy can target (docs.controlplane.com/reference/policy, "kinds with permission schemas") has an
entry, whether Plinth serves it yet or not, so a policy written for the official platform
(``targetKind: workload``, ``permissions: [exec]``) applies unchanged. Served kinds take their
``permissions``/``implied`` fields from here (``**permission_fields("gvc")``), and the policy
kind validates bindings against the same entries, so a permission exists in exactly one place.

Sources, in order of preference: the confirmed tables of docs.controlplane.com/reference/policy (policy, serviceaccount,
auditctx); the vendor's own access-control runbook (controlplane-com/ai-plugin ``skills/access-control``, whose
permission matrix lists workload, secret, identity, image, org, user and gvc in full); otherwise the default
set ``create, delete, edit, manage, view``. Where the sources differ from that default:

- ``org`` has no ``create``/``delete`` (creating an org is the server-admin right, and orgs are
  never deleted) and adds ``exec``, ``exec.echo``, ``grafanaAdmin``, ``readLogs``,
  ``readMetrics``, ``readUsage`` and ``viewAccessReport``;
- ``user`` has no ``create`` (users join by invitation) and adds ``impersonate`` and ``invite``;
- ``auditctx`` has no ``delete``;
- ``location`` has no ``delete`` and adds ``use`` (docs.controlplane.com/reference/location); deleting a BYOK
  location needs ``manage`` (``KindSpec.delete_permission``; TF resource_custom_location.go deletes BYOK locations).
- ``cloudaccount`` adds ``browse`` (implies ``view``; ``edit`` implies it), and ``agent`` adds
  ``use`` (implies ``view``) (docs.controlplane.com/reference/cloudaccount; docs.controlplane.com/reference/agent);
- ``secret`` adds ``reveal`` (read the values; implied by ``edit``) and ``use``, each implying
  ``view`` (docs.controlplane.com/reference/secret).

Implications are direct (``image``: ``create`` -> ``pull`` -> ``view``); :func:`implied_closure`
follows them transitively. The rules every entry keeps: ``edit`` implies ``view``; ``manage``
implies every other permission of the kind; an extra permission implies nothing unless a source
says so. ``manage`` is not listed among its own implications.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

BASIC_PERMISSIONS: Mapping[str, str] = MappingProxyType(
    {
        "create": "Create new items",
        "delete": "Delete items",
        "edit": "Modify existing items",
        "manage": "Full access",
        "view": "Read-only access",
    }
)
BASIC_IMPLIED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "edit": ("view",),
        "manage": ("create", "delete", "edit", "view"),
    }
)


class KindPermissions(NamedTuple):
    """One kind's entry: permission name -> description, and permission -> what it implies."""

    permissions: Mapping[str, str]
    implied: Mapping[str, tuple[str, ...]]


def _entry(
    extra: Mapping[str, str] | None = None,
    implied: Mapping[str, tuple[str, ...]] | None = None,
    without: Iterable[str] = (),
) -> KindPermissions:
    """The default set minus ``without`` plus ``extra``, with ``edit -> view`` and ``manage -> all``."""
    excluded = set(without)
    merged = {k: v for k, v in BASIC_PERMISSIONS.items() if k not in excluded} | dict(extra or {})
    permissions = {name: merged[name] for name in sorted(merged)}
    implications: dict[str, set[str]] = {"edit": {"view"}} if "edit" in permissions else {}
    for name, targets in (implied or {}).items():
        implications.setdefault(name, set()).update(targets)
    implications["manage"] = set(permissions) - {"manage"}
    ordered = {name: tuple(sorted(implications[name])) for name in permissions if implications.get(name)}
    return KindPermissions(MappingProxyType(permissions), MappingProxyType(ordered))


_EXEC = "Execute commands"

#: Kind name -> its permissions. Every targetable kind of docs.controlplane.com/reference/policy, served or not.
PERMISSIONS: Mapping[str, KindPermissions] = MappingProxyType(
    {
        "agent": _entry(
            extra={"use": "Reference the agent from identities"},
            implied={"use": ("view",)},
        ),
        "auditctx": _entry(
            extra={"readAudit": "Read audit events", "writeAudit": "Write audit events"},
            implied={"readAudit": ("view",), "writeAudit": ("view",)},
            without=("delete",),
        ),
        "cloudaccount": _entry(
            extra={"browse": "Browse the cloud account's resources"},
            implied={"browse": ("view",), "edit": ("browse", "view")},
        ),
        "domain": _entry(),
        "group": _entry(),
        "gvc": _entry(extra={"configureLoadBalancer": "Configure the GVC's load balancer"}),
        "identity": _entry(extra={"use": "Link the identity to workloads"}),
        "image": _entry(
            extra={"pull": "Pull the image"},
            implied={"create": ("pull",), "pull": ("view",)},
        ),
        "ipset": _entry(),
        "location": _entry(
            extra={"use": "Place GVCs in the location"},
            implied={"use": ("view",)},
            without=("delete",),
        ),
        "mk8s": _entry(extra={"clusterAdmin": "Administer the cluster"}),
        "org": _entry(
            extra={
                "exec": _EXEC,
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
        "policy": _entry(),
        "quota": _entry(without=("delete",)),
        "secret": _entry(
            extra={"reveal": "Read the secret's values", "use": "Reference the secret from workloads"},
            implied={"edit": ("reveal", "view"), "reveal": ("view",), "use": ("view",)},
        ),
        "serviceaccount": _entry(extra={"addKey": "Add a key to an existing service account"}),
        "task": _entry(),
        "user": _entry(
            extra={"impersonate": "Act as the user", "invite": "Invite users to the org"},
            without=("create",),
        ),
        "volumeset": _entry(),
        "workload": _entry(
            extra={
                "configureLoadBalancer": "Configure the workload's load balancer",
                "connect": "Open an interactive shell in a replica",
                "exec": _EXEC,
                "exec.runCronWorkload": "Force a cron workload to run",
                "exec.stopReplica": "Force a replica to stop",
            },
            implied={"exec": ("exec.runCronWorkload", "exec.stopReplica")},
        ),
    }
)

#: The kinds a policy may name as ``targetKind``.
TARGET_KINDS: frozenset[str] = frozenset(PERMISSIONS)


def permission_fields(kind: str) -> dict[str, Any]:
    """``permissions`` and ``implied`` for a :class:`~plinth.kinds.base.KindSpec`, from the table."""
    entry = PERMISSIONS[kind]
    return {"permissions": entry.permissions, "implied": entry.implied}


def implied_closure(kind: str, granted: Iterable[str]) -> frozenset[str]:
    """Every permission ``granted`` gives on ``kind``, following implications transitively.

    Names the kind does not have are ignored (a stored policy may outlive a permission).
    """
    entry = PERMISSIONS[kind]
    seen: set[str] = set()
    stack = [name for name in granted if name in entry.permissions]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(entry.implied.get(name, ()))
    return frozenset(seen)
