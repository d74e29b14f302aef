"""In which order documents are written: a target before what links to it, from the links they hold.

There is no hand-kept order of kinds. A document *needs* another document of the same run
when it holds a link to it anywhere in its body (tags, name and description aside):

- a full or short link, ``/org/{org}/...`` or ``//...`` (``plinth.meta.parse_link``):
  ``//gvc/prod/identity/runner``, ``/org/acme/secret/db``, ``//location/aws-us-east-1``;
- a ``cpln://secret/NAME[.KEY]`` or ``cpln://volumeset/NAME`` reference (the volume set in
  the document's own GVC);
- and, without any string, the GVC a GVC-scoped item lives in.

:func:`plan` returns the documents in dependency order (each one's *level* is one more than
the deepest level it needs, level 0 needing nothing of the run) and, for each, the positions
of the ones it needs, so that the runner may write the documents of one level at the same
time. Ties keep the order of the files. Links that form a cycle cannot all be honoured: the
documents caught in one are placed after the rest, in file order. Deletes run the same graph
backwards (:func:`reverse_plan`): an item goes only once everything linking to it is gone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from plinth.cli.kindnames import gvc_scoped
from plinth.cli.manifests import Document
from plinth.meta import item_href, parse_link

#: Top-level fields that hold text, never links.
NOT_LINKS = frozenset({"kind", "name", "description", "tags"})
CPLN_URI = "cpln://"


@dataclass(frozen=True, slots=True)
class Step:
    """One document of a plan, the plan positions of the steps it waits for, and its level."""

    document: Document
    needs: tuple[int, ...]
    level: int


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for child in value.values():
            yield from _strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from _strings(child)


def link_targets(document: Document) -> set[str]:
    """The full hrefs of every item ``document`` links to (see the module docstring)."""
    targets: set[str] = set()
    if document.gvc is not None:
        targets.add(item_href(document.org, "gvc", document.gvc))
    for field, value in document.body.items():
        if field in NOT_LINKS:
            continue
        for text in _strings(value):
            href = _href(text, document)
            if href is not None:
                targets.add(href)
    targets.discard(document.href)
    return targets


def _href(text: str, document: Document) -> str | None:
    if text.startswith(CPLN_URI):
        kind, _, rest = text[len(CPLN_URI) :].partition("/")
        if kind == "secret" and rest:
            return item_href(document.org, "secret", rest.split(".", 1)[0])
        if kind == "volumeset" and rest and document.gvc is not None:
            return item_href(document.org, "volumeset", rest, document.gvc)
        return None
    if not text.startswith(("//", "/org/")):
        return None
    link = parse_link(text.split("?", 1)[0], document.org)
    if link is None or (gvc_scoped(link.kind) and link.gvc is None):
        return None
    return link.href


def plan(documents: Sequence[Document]) -> list[Step]:
    """The documents in the order to write them, with what each waits for."""
    position = {document.href: n for n, document in enumerate(documents)}
    needs = [sorted(position[t] for t in link_targets(d) if t in position) for d in documents]
    return _order(documents, needs)


def reverse_plan(documents: Sequence[Document]) -> list[Step]:
    """The documents in the order to delete them: each after everything that links to it."""
    position = {document.href: n for n, document in enumerate(documents)}
    needed_by: list[list[int]] = [[] for _ in documents]
    for n, document in enumerate(documents):
        for target in link_targets(document):
            if target in position:
                needed_by[position[target]].append(n)
    return _order(documents, [sorted(users) for users in needed_by])


def _order(documents: Sequence[Document], needs: list[list[int]]) -> list[Step]:
    """Levels by longest chain of needs (cycles last), then file order; needs renumbered."""
    level: dict[int, int] = {}
    remaining = set(range(len(documents)))
    while remaining:
        ready = [n for n in sorted(remaining) if all(m in level for m in needs[n])]
        if not ready:  # a cycle: the rest go last, in file order
            base = max(level.values(), default=-1) + 1
            for offset, n in enumerate(sorted(remaining)):
                level[n] = base + offset
            break
        for n in ready:
            level[n] = max((level[m] + 1 for m in needs[n]), default=0)
            remaining.discard(n)
    order = sorted(range(len(documents)), key=lambda n: (level[n], n))
    placed = {n: i for i, n in enumerate(order)}
    return [
        Step(documents[n], tuple(sorted(placed[m] for m in needs[n] if placed[m] < placed[n])), level[n]) for n in order
    ]
