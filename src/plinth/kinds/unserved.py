"""Kinds of the platform that live in a GVC but that Plinth does not serve yet: ``identity``.
It is declared so that reading it tells the truth, and nothing more:

- a list (``/org/{org}/gvc/{gvc}/identity``, or org-wide ``/org/{org}/identity``) is empty, a
  query finds nothing, and an item is a 404 ``not_found`` like any missing item;
- every write is a 405: no verb but ``get`` and ``list`` is declared, so nothing is ever stored.

The official CLI needs the lists: ``cpln gvc delete --force`` lists a GVC's identities (and
deletes them) before its volume sets. Links to identities (a workload's ``identityLink``, a
policy's targets and principals) are checked for their shape only.
"""

from __future__ import annotations

from plinth.kinds.base import KindSpec
from plinth.kinds.permissions import permission_fields

READ_ONLY_VERBS = frozenset({"get", "list"})

IDENTITY = KindSpec(name="identity", scope="gvc", verbs=READ_ONLY_VERBS, **permission_fields("identity"))
