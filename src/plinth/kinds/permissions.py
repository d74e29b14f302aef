"""The shared vocabulary of permissions: the basic set, how a kind declares its own, and closure.

Each kind declares what a policy may grant on it with the kind (``**declare_permissions(...)``
in its ``KindSpec``; a kind with exactly the basic set declares nothing). Kinds a policy may
target that Plinth does not serve yet declare theirs in ``kinds/unserved.py``, so a policy
written for the official platform (docs.controlplane.com/reference/policy, "kinds with
permission schemas") applies unchanged. The registry (``plinth.kinds.PERMISSIONS``) gathers
both, and the policy kind validates bindings against it, so a permission exists in one place.

Sources, in order of preference: the confirmed tables of docs.controlplane.com/reference/policy (policy, serviceaccount,
auditctx); the vendor's own access-control runbook (controlplane-com/ai-plugin ``skills/access-control``, whose
permission matrix lists workload, secret, identity, image, org, user and gvc in full); otherwise the default
set ``create, delete, edit, manage, view``. Each kind's module says where its own set differs.

Implications are direct (``image``: ``create`` -> ``pull`` -> ``view``); :func:`implied_closure`
follows them transitively. The rules every declaration keeps (:func:`declare_permissions`
applies them): ``edit`` implies ``view``; ``manage`` implies every other permission of the kind;
an extra permission implies nothing unless a source says so. ``manage`` is not listed among its
own implications.
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


def kind_permissions(
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


#: The description of ``exec``, shared by the kinds that have it (org, workload).
EXEC_DESCRIPTION = "Execute commands"


def declare_permissions(
    extra: Mapping[str, str] | None = None,
    implied: Mapping[str, tuple[str, ...]] | None = None,
    without: Iterable[str] = (),
) -> dict[str, Any]:
    """A kind's ``permissions`` and ``implied`` fields (``KindSpec(..., **declare_permissions(...))``):
    the basic set minus ``without`` plus ``extra``, with ``edit -> view`` and ``manage -> all``."""
    entry = kind_permissions(extra, implied, without)
    return {"permissions": entry.permissions, "implied": entry.implied}


def target_permissions() -> Mapping[str, KindPermissions]:
    """Every kind a policy may target -> its permissions: the registry's ``PERMISSIONS``.

    Imported when called: the registry imports every kind, and every kind imports this module.
    """
    from plinth.kinds import PERMISSIONS

    return PERMISSIONS


def implied_closure(kind: str, granted: Iterable[str]) -> frozenset[str]:
    """Every permission ``granted`` gives on ``kind``, following implications transitively.

    Names the kind does not have are ignored (a stored policy may outlive a permission).
    """
    entry = target_permissions()[kind]
    seen: set[str] = set()
    stack = [name for name in granted if name in entry.permissions]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(entry.implied.get(name, ()))
    return frozenset(seen)
