"""Kinds of the platform that live in a GVC but that Plinth does not run: ``workload`` and
``identity``. They are declared so that reading them tells the truth, and nothing more:

- a list (``/org/{org}/gvc/{gvc}/workload``, or org-wide ``/org/{org}/workload``) is empty, a
  query finds nothing, and an item is a 404 ``not_found`` like any missing item;
- every write is a 405: no verb but ``get`` and ``list`` is declared, so nothing is ever stored.

The official CLI needs the lists: ``cpln gvc delete --force`` lists a GVC's workloads and
identities (and deletes them) before its volume sets, whose deletion it then waits on until a GET
answers 404, and only then deletes the GVC. Links to workloads and identities (a domain's routes,
a policy's targets and principals) are checked for their shape only, as before.
"""

from __future__ import annotations

from plinth.kinds.base import KindSpec
from plinth.kinds.permissions import permission_fields

READ_ONLY_VERBS = frozenset({"get", "list"})

WORKLOAD = KindSpec(name="workload", scope="gvc", verbs=READ_ONLY_VERBS, **permission_fields("workload"))
IDENTITY = KindSpec(name="identity", scope="gvc", verbs=READ_ONLY_VERBS, **permission_fields("identity"))
