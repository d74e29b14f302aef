"""Which statuses read what: the one reading of every kind's ``Status.depends_on``.

A kind declares what its status reads besides the item in one list (``kinds/base.py``,
:class:`~plinth.kinds.base.Status`); the engine finds every status a write may change, and
what to put in a status's ``KindContext``, here and nowhere else:

- :func:`dependants_of`: for a write or delete of an item of one kind, the kinds whose statuses
  read such items through a link or as their parent (:class:`ReadsLinked`), the kinds whose
  statuses read which such items link to them (:class:`ReadsLinkers`), and the queries held by
  items others read that may select such items (:class:`ReadsSelected`);
- :func:`linkers`, :func:`reads_placements`, :func:`questions`, :func:`runtime`: what one
  kind's own status reads (``ctx.referrers``, ``ctx.placements``, ``ctx.grants``,
  ``ctx.reported`` and the runtime's blockers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from plinth.kinds.base import (
    AsksGrants,
    GrantQuestion,
    Item,
    KindSpec,
    ReadsLinked,
    ReadsLinkers,
    ReadsPlacements,
    ReadsRuntime,
    ReadsSelected,
)


@dataclass(frozen=True, slots=True)
class Dependants:
    """The statuses a write or delete of an item of one kind may change, by how they read it."""

    #: Kinds whose statuses read the items of the changed kind they link to or live in.
    linking: tuple[KindSpec, ...]
    #: Kinds whose statuses read which items of the changed kind link to them.
    linked: tuple[KindSpec, ...]
    #: ``(holder kind, dotted path)``: queries that may select items of the changed kind, held
    #: by items whose readers (``ReadsLinked`` the holder) read what they select.
    selectors: tuple[tuple[str, str], ...]


#: :func:`dependants_of`'s answers, by the changed kind's name and the identity of every served
#: kind. Each entry keeps those kinds alive, so an identity cannot be reused while it is cached.
_DEPENDANTS: dict[tuple[str, tuple[int, ...]], tuple[tuple[KindSpec, ...], Dependants]] = {}
#: Entries kept before the memo starts afresh (engines over other kind sets: tests).
_DEPENDANTS_MAX = 1024


def dependants_of(kinds: Mapping[str, KindSpec], changed: str) -> Dependants:
    """What depends on items of the kind named ``changed``, from every kind's declarations.

    Remembered per set of kinds: a write asks several times (before and after its commit) and
    the answer depends on the declarations alone, which cannot change (``KindSpec`` and
    ``Status`` are frozen); working it out anew took a third of a PATCH's time in the engine
    (docs/write-path.md)."""
    served = tuple(kinds.values())
    memo_key = (changed, tuple(map(id, served)))
    found = _DEPENDANTS.get(memo_key)
    if found is not None:
        return found[1]
    if len(_DEPENDANTS) >= _DEPENDANTS_MAX:
        _DEPENDANTS.clear()
    answer = _dependants_of(kinds, changed)
    _DEPENDANTS[memo_key] = (served, answer)
    return answer


def _dependants_of(kinds: Mapping[str, KindSpec], changed: str) -> Dependants:
    linking = tuple(k for k in kinds.values() if changed in linked_kinds(k))
    linked = tuple(k for k in kinds.values() if changed in linkers(k))
    selectors: dict[tuple[str, str], None] = {}
    for kind in kinds.values():
        for dep in kind.status.reads(ReadsSelected):
            if dep.kind == changed:
                selectors[(dep.holder, dep.path)] = None
    return Dependants(linking, linked, tuple(selectors))


def linked_kinds(kind: KindSpec) -> frozenset[str]:
    """The kinds whose items ``kind``'s status reads through its links or as its parent."""
    return frozenset().union(*(d.kinds for d in kind.status.reads(ReadsLinked)))


def linkers(kind: KindSpec) -> frozenset[str]:
    """The kinds whose links to an item of ``kind`` its status reads (``ctx.referrers``)."""
    return frozenset().union(*(d.kinds for d in kind.status.reads(ReadsLinkers)))


def reads_placements(kind: KindSpec) -> bool:
    """Whether ``kind``'s status reads where GVCs are placed (``ctx.placements``)."""
    return bool(kind.status.reads(ReadsPlacements))


def questions(kind: KindSpec, item: Item, org: str) -> tuple[GrantQuestion, ...]:
    """What ``item``'s status asks the org's policies (``ctx.grants``)."""
    return tuple(q for d in kind.status.reads(AsksGrants) for q in d.questions(item, org))


def runtime(kind: KindSpec) -> ReadsRuntime | None:
    """How ``kind``'s status reads the runtime (``ctx.reported``), or ``None``: it does not."""
    found = kind.status.reads(ReadsRuntime)
    return found[0] if found else None
