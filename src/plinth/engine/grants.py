"""What the org's policies answer to the questions a status asks (``KindSpec.grant_questions``),
and which statuses a policy write refreshes.

A workload reads the secrets it references through its identity, which must hold ``reveal`` on
each (docs.controlplane.com/reference/secret): its status asks, for each reference, whether the identity holds it. The
answer comes from the same policy decisions that authorize requests (``auth/policy.py``), read
from a policy set cached per access generation, so asking costs no store read on most writes.

Only a policy can change an answer (groups hold users and service accounts, never
identities), so after a committed write or delete of a policy that binds an identity, the
statuses that depend on the items it targets (before and after the write) are made right with
:meth:`StatusInputs.settle_dependants`, as if those items had changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from plinth.auth.generation import GenerationWatcher
from plinth.engine.access import AccessControl
from plinth.engine.render import href_of
from plinth.kinds.base import GrantQuestion, Item, KindSpec
from plinth.meta import parse_link
from plinth.storage.base import Storage
from plinth.storage.query import ListRequest
from plinth.storage.scan import every_record

POLICY_KIND = "policy"
IDENTITY_SEGMENT = "/identity/"
TARGETS_PAGE = 500


class Grants:
    """Answers grant questions for statuses, from a per-process cache of policy sets."""

    def __init__(self, storage: Storage, kinds: Mapping[str, KindSpec]) -> None:
        self._storage = storage
        self._kinds = kinds
        self._control = AccessControl(storage, kinds, GenerationWatcher(storage))

    async def answer(
        self, org: str, questions: Iterable[GrantQuestion], resolved: Mapping[str, Item | None]
    ) -> dict[GrantQuestion, bool]:
        """Each question's answer; a target's ``targetQuery`` is judged on ``resolved``."""
        asked = list(questions)
        if not asked:
            return {}
        policies = await self._control.cached_policy_set(org)
        out: dict[GrantQuestion, bool] = {}
        for q in asked:
            identities = policies.identities(q.principal, None)
            grant = policies.allowed(identities, q.permission, q.kind, q.target, lambda q=q: resolved.get(q.target))  # type: ignore[misc]
            out[q] = grant is not None
        return out

    def expire(self) -> None:
        """The next answer reads the access generation again (a policy was just written here)."""
        self._control.expire()

    async def targets_changed_by(self, org: str, policies: Iterable[Item | None]) -> dict[str, list[str]]:
        """The items whose grants to identities a policy write may have changed: by kind, the
        hrefs the policy targeted before or after it (every item of the kind for ``target: all``
        or a ``targetQuery``). Empty when neither version binds an identity."""
        versions = [p for p in policies if p is not None]
        if not any(IDENTITY_SEGMENT in link for p in versions for link in _principals(p)):
            return {}
        out: dict[str, set[str]] = {}
        for policy in versions:
            kind = str(policy.get("targetKind", ""))
            hrefs = out.setdefault(kind, set())
            if policy.get("target") == "all" or policy.get("targetQuery") is not None:
                hrefs |= await self._every(org, kind)
            for link in policy.get("targetLinks") or []:
                parsed = parse_link(link, org)
                if parsed is not None and parsed.org == org:
                    hrefs.add(parsed.href)
        return {kind: sorted(hrefs) for kind, hrefs in out.items() if hrefs}

    async def _every(self, org: str, kind: str) -> set[str]:
        spec = self._kinds.get(kind)
        if spec is None:  # a policy may target a kind Plinth does not serve: it holds no items
            return set()
        request = ListRequest(org, kind, None, TARGETS_PAGE)
        return {
            href_of(spec, org, r.key.parent or None, r.key.name) for r in await every_record(self._storage, request)
        }


def _principals(policy: Item) -> list[str]:
    return [link for b in policy.get("bindings") or [] for link in b.get("principalLinks") or []]
