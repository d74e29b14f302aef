"""The kind registry: every kind the server knows, in one tuple.

A new kind is a module (or a package, once it has many rules) exporting one ``KindSpec`` with
its conformance ``example``, one entry in ``KINDS``, and its permissions in ``permissions.py``;
``docs/architecture.md`` has the whole checklist.
"""

from __future__ import annotations

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
from plinth.kinds.policy import POLICY
from plinth.kinds.quota import QUOTA
from plinth.kinds.secret import SECRET
from plinth.kinds.serviceaccount import SERVICEACCOUNT
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
