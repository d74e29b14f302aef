"""Kinds a policy may target that Plinth does not serve yet, and their permissions.

docs.controlplane.com/reference/policy lists the kinds with permission schemas; a policy written
for the official platform (``targetKind: mk8s``) must apply here unchanged, so these kinds have
permissions before they have a ``KindSpec``. When one is served, its declaration moves into its
own module (``**declare_permissions(...)``) and its entry leaves this table (a test refuses a
kind declared in both places).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from plinth.kinds.permissions import KindPermissions, kind_permissions

UNSERVED_TARGETS: Mapping[str, KindPermissions] = MappingProxyType(
    {
        "mk8s": kind_permissions(extra={"clusterAdmin": "Administer the cluster"}),
        "task": kind_permissions(),
    }
)
