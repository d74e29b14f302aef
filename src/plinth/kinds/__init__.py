"""The kind registry: every kind the server knows, in one tuple.

A new kind is a module (or a package, once it has many rules) exporting one ``KindSpec`` with
its conformance ``example`` and its permissions, and one entry in ``KINDS``; then
``python -m plinth.kinds.facts`` regenerates what clients know of the kinds.
``docs/architecture.md`` has the whole checklist.

:data:`PERMISSIONS` is what a policy may grant on each kind it may target: the served kinds'
declarations and the kinds not served yet (``kinds/unserved.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from plinth.kinds.agent import AGENT
from plinth.kinds.auditctx import AUDITCTX
from plinth.kinds.base import KindSpec
from plinth.kinds.cloudaccount import CLOUDACCOUNT
from plinth.kinds.domain import DOMAIN
from plinth.kinds.group import GROUP
from plinth.kinds.gvc import GVC
from plinth.kinds.identity import IDENTITY
from plinth.kinds.image import IMAGE
from plinth.kinds.ipset import IPSET
from plinth.kinds.location import LOCATION
from plinth.kinds.org import ORG
from plinth.kinds.permissions import KindPermissions
from plinth.kinds.policy import POLICY
from plinth.kinds.quota import QUOTA
from plinth.kinds.secret import SECRET
from plinth.kinds.serviceaccount import SERVICEACCOUNT
from plinth.kinds.unserved import UNSERVED_TARGETS
from plinth.kinds.user import USER
from plinth.kinds.volumeset import VOLUMESET
from plinth.kinds.workload import WORKLOAD

KINDS: tuple[KindSpec, ...] = (
    ORG,
    GVC,
    DOMAIN,
    VOLUMESET,
    USER,
    SERVICEACCOUNT,
    GROUP,
    POLICY,
    WORKLOAD,
    SECRET,
    IDENTITY,
    LOCATION,
    IPSET,
    AUDITCTX,
    CLOUDACCOUNT,
    AGENT,
    IMAGE,
    QUOTA,
)
REGISTRY: dict[str, KindSpec] = {kind.name: kind for kind in KINDS}

_TARGETS = {kind.name: KindPermissions(kind.access.permissions, kind.access.implied) for kind in KINDS} | dict(
    UNSERVED_TARGETS
)
#: Kind name -> its permissions, for every kind a policy may target (served or not).
PERMISSIONS: Mapping[str, KindPermissions] = MappingProxyType({name: _TARGETS[name] for name in sorted(_TARGETS)})
#: The kinds a policy may name as ``targetKind``.
TARGET_KINDS: frozenset[str] = frozenset(PERMISSIONS)
