"""What the org's policies answer to the questions a status asks (its ``AsksGrants`` dependency),
and which statuses a write of a grant-giving item (a policy) refreshes: an engine extension.

A workload reads the secrets it references through its identity, which must hold ``reveal`` on
each (docs.controlplane.com/reference/secret): its status asks, for each reference, whether the identity holds it. The
answer comes from the same policy decisions that authorize requests (``auth/policy.py``), read
from the process's policy-set cache (``access.AccessControl``, shared with authorization), so
asking costs no store read on most writes.

Only a grant-giving item can change an answer (groups hold users and service accounts, never
identities), so after a committed write or delete of one whose kind declares
``KindSpec.access.grant_targets``, the statuses that depend on the items it targets (before and after
the write) are made right, as if those items had changed. An item whose own status asked
makes it right again after its commit, with the policies read anew, unless the access
generation has not moved since the policy sets its answers came from were read: then no policy
can have been written in between, and its stored status is already right.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import replace

import orjson

from plinth.engine.access import AccessControl
from plinth.engine.address import Address
from plinth.engine.dependencies import questions as asked
from plinth.engine.extensions import DependantFilter, Extension, ExtensionHost, ExtensionStore, WriteChange
from plinth.kinds.base import GrantQuestion, GrantTargets, Item, KindContext, KindSpec
from plinth.meta import parse_link
from plinth.storage.base import StorageError
from plinth.storage.query import ListRequest

TARGETS_PAGE = 500

#: The access generations of the policy sets that grant questions were answered from in this
#: task since its last settle: a request's task builds its write (asking) and then settles it,
#: so :meth:`Grants.after_commit` learns what its status was computed under. Answers given to
#: other statuses in the same task only add generations, which can only make a settle happen.
_ANSWERED_UNDER: ContextVar[set[str | None] | None] = ContextVar("plinth_grants_answered_under", default=None)


class Grants(Extension):
    """Answers grant questions for statuses; settles them after grant-giving writes."""

    def __init__(self, host: ExtensionHost) -> None:
        self._host = host
        self._records: ExtensionStore = host.records
        self._kinds: Mapping[str, KindSpec] = host.kinds
        self._control: AccessControl = host.policies

    async def status_inputs(self, kind: KindSpec, item: Item, ctx: KindContext) -> KindContext:
        """``ctx.grants``: the answers to the questions the status of ``item`` asks."""
        questions = asked(kind, item, ctx.org)
        if not questions:
            return ctx
        return replace(ctx, grants=await self.answer(ctx.org, questions, ctx.resolved))

    async def answer(
        self, org: str, questions: Iterable[GrantQuestion], resolved: Mapping[str, Item | None]
    ) -> dict[GrantQuestion, bool]:
        """Each question's answer; a target's ``targetQuery`` is judged on ``resolved``."""
        asked = list(questions)
        if not asked:
            return {}
        policies, generation = await self._control.labelled_policy_set(org)
        under = _ANSWERED_UNDER.get()
        if under is None:
            under = set()
            _ANSWERED_UNDER.set(under)
        under.add(generation)
        out: dict[GrantQuestion, bool] = {}
        for q in asked:
            identities = policies.identities(q.principal, None)
            grant = policies.allowed(identities, q.permission, q.kind, q.target, lambda q=q: resolved.get(q.target))  # type: ignore[misc]
            out[q] = grant is not None
        return out

    async def after_commit(self, change: WriteChange) -> None:
        """After a grant-giving write: the statuses its targets feed; after a write of an item
        whose status asked: its own status, with the policies read anew (a policy written
        meanwhile may have settled its dependants before this item was stored), unless the
        store's access generation is still the one every answer of this task came from."""
        if change.kind.access.grant_targets is not None:
            await self._settle_targets(change)
        item = change.after
        under = _ANSWERED_UNDER.get()
        _ANSWERED_UNDER.set(None)
        # Whether it asked first: it costs no I/O, where the generation is a store read (and
        # a write that asked nothing may still hold answers its dependants' statuses got).
        if item is None or not asked(change.kind, item, change.org):
            return
        if under and under == {await self._control.generation_now()}:
            return  # no policy written since the answers were read: the stored status holds
        self._control.expire()
        await self._host.settle_own(change.kind, change.org, change.key, change.href, item, change.now)

    async def _settle_targets(self, change: WriteChange) -> None:
        org = change.org
        self._control.expire()  # the commit moved the access generation: read the new policies
        try:
            targets = await self.targets_changed_by(change.kind, org, (change.before, change.after))
        except StorageError as exc:
            if exc.code != "unavailable":
                raise
            return
        only = _asking_any_of(_bound_identities(change), org)
        for kind_name, hrefs in targets.items():
            kind = self._kinds.get(kind_name)
            if kind is None:
                continue
            for href in hrefs:
                link = parse_link(href, org)
                if link is None:
                    continue
                key = Address(kind, org, link.gvc, link.name).key
                record = await self._records.get(key, fresh=True)
                if record is not None:  # the dependants of a missing item already say so
                    item = orjson.loads(record.doc)
                    await self._host.settle_dependants(kind, org, href, link.name, item, change.now, only)

    async def targets_changed_by(
        self, kind: KindSpec, org: str, versions: Iterable[Item | None]
    ) -> dict[str, list[str]]:
        """The items whose grants to identities a write of a ``kind`` item may have changed: by
        kind, the hrefs it targeted before or after (``KindSpec.access.grant_targets``). Empty when
        neither version binds an identity."""
        assert kind.access.grant_targets is not None
        declared = [kind.access.grant_targets(v, org) for v in versions if v is not None]
        if not any(t.binds_identity for t in declared):
            return {}
        out: dict[str, set[str]] = {}
        for targets in declared:
            hrefs = out.setdefault(targets.kind, set())
            if targets.every:
                hrefs |= await self._every(org, targets.kind)
            hrefs.update(targets.hrefs)
        return {kind: sorted(hrefs) for kind, hrefs in out.items() if hrefs}

    async def _every(self, org: str, kind: str) -> set[str]:
        spec = self._kinds.get(kind)
        if spec is None:  # a policy may target a kind Plinth does not serve: it holds no items
            return set()
        request = ListRequest(org, kind, None, TARGETS_PAGE)
        return {Address.stored(spec, r.key).href for r in await self._records.every(request)}


def _bound_identities(change: WriteChange) -> set[str] | None:
    """The hrefs of the identities the write's item grants to, before or after it (its kind's
    ``grant_targets``; groups hold users and service accounts, never identities). ``None``: a
    link that does not parse, so every dependant is settled."""
    assert change.kind.access.grant_targets is not None
    bound: set[str] = set()
    for version in (change.before, change.after):
        if version is None:
            continue
        for link in change.kind.access.grant_targets(version, change.org).identities:
            parsed = parse_link(link, change.org) if isinstance(link, str) else None
            if parsed is None:
                return None
            bound.add(parsed.href)
    return bound


def _asking_any_of(identities: set[str] | None, org: str) -> DependantFilter | None:
    """Which dependants' statuses a grant to ``identities`` can change: those asking a question
    about one of them (a workload whose identity it is). Only a question's answer can change
    when a policy does, and it asks about its principal alone."""
    if identities is None:
        return None

    def asks(kind: KindSpec, item: Item) -> bool:
        for question in asked(kind, item, org):
            parsed = parse_link(question.principal, org)
            if parsed is None or parsed.href in identities:
                return True
        return False

    return asks


__all__ = ["GrantTargets", "Grants"]
