"""Validate what is valid of a body: drop the parts a schema refuses, and say where they were.

The write pipeline reports every problem at once. When a spec has schema errors, the kind's
rules cannot run on it as sent, but they can run on what is left once the offending parts are
taken out: an invalid leaf goes, and so does an object missing a required field (climbing
to the object's own slot, a list entry or a key), until the rest passes the schema. The
rules' findings are then mapped back to the paths of the body as sent (a list entry taken
out shifts the ones after it) and kept unless they concern a part that was taken out.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from plinth.errors import FieldError
from plinth.kinds.validation import validate_model

#: Rounds of pruning before giving up (each round takes out every part one error names).
MAX_ROUNDS = 8

_PART = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")
Part = str | int


def parse_path(path: str) -> list[Part]:
    """``containers[0].ports`` -> ``["containers", 0, "ports"]``."""
    return [int(index) if index else name for name, index in _PART.findall(path)]


def render_path(parts: list[Part], prefix: str) -> str:
    out = prefix
    for part in parts:
        out = f"{out}[{part}]" if isinstance(part, int) else (f"{out}.{part}" if out else part)
    return out


@dataclass
class Pruned:
    """What is left of a body, and how its paths map back to the body as sent."""

    data: dict[str, Any]
    #: (list path, index) of every list entry taken out, in order, in the paths of the time.
    removals: list[tuple[tuple[Part, ...], int]] = field(default_factory=list)
    #: Where the parts taken out were, in the paths of the body as sent.
    gone: list[tuple[Part, ...]] = field(default_factory=list)

    def original(self, parts: list[Part]) -> list[Part]:
        """A path of the pruned body as a path of the body as sent."""
        out = list(parts)
        for list_path, index in reversed(self.removals):
            depth = len(list_path)
            if tuple(out[:depth]) != list_path or len(out) <= depth:
                continue
            at = out[depth]
            if isinstance(at, int) and at >= index:
                out[depth] = at + 1
        return out

    def concerns_gone(self, parts: list[Part]) -> bool:
        """Whether a finding at ``parts`` (sent-body path) is about a part taken out."""
        return any(tuple(parts[: len(g)]) == g or tuple(g[: len(parts)]) == tuple(parts) for g in self.gone)


def _remove(data: Any, parts: list[Part], pruned: Pruned) -> bool:
    """Take out the node at ``parts``; ``False`` when it is the whole body (nothing left)."""
    if not parts:
        return False
    node = data
    for part in parts[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return True  # already gone with an ancestor
    last = parts[-1]
    pruned.gone.append(tuple(pruned.original(parts)))
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        del node[last]
        pruned.removals.append((tuple(parts[:-1]), last))
    elif isinstance(node, dict) and isinstance(last, str):
        node.pop(last, None)
    return True


def prune_to_valid(
    model: type[BaseModel], data: Any, errors: list[FieldError], prefix: str
) -> tuple[dict[str, Any], Pruned] | None:
    """The model's dump of ``data`` without the parts ``errors`` name, or ``None`` when
    nothing valid is left (or the errors are not about parts that can be taken out)."""
    if not isinstance(data, dict):
        return None
    pruned = Pruned(copy.deepcopy(data))
    for _ in range(MAX_ROUNDS):
        # Deepest first, and list entries from the back, so earlier removals do not move later ones.
        targets = sorted({tuple(_target(e, prefix)) for e in errors}, key=_removal_order, reverse=True)
        for target in targets:
            if not _remove(pruned.data, list(target), pruned):
                return None
        dumped, errors = validate_model(model, pruned.data, prefix)
        if dumped is not None:
            return dumped, pruned
    return None


def _target(error: FieldError, prefix: str) -> list[Part]:
    parts = parse_path(error.path.removeprefix(prefix))
    # A missing field cannot be taken out: its object must go instead.
    return parts[:-1] if error.message == "is required" else parts


def _removal_order(parts: tuple[Part, ...]) -> tuple[Any, ...]:
    return tuple((1, p) if isinstance(p, int) else (0, p) for p in parts)
