"""Validate what is valid of a body: drop the parts a schema refuses, and say where they were.

The write pipeline reports every problem at once. When a spec has schema errors, the kind's
rules cannot run on it as sent, but they can run on what is left once the offending parts are
taken out: an invalid leaf goes, and so does an object missing a required field (climbing
to the object's own slot, a list entry or a key), until the rest passes the schema. The
rules' findings are then mapped back to the paths of the body as sent (a list entry taken
out shifts the ones after it) and kept unless they concern a part that was taken out.

The work is linear in the body (docs/api.md, "Limits"): each round resolves every part to take
out before changing anything, empties each list it touches in one pass, and remembers, per
list, which entries as sent are left; a path maps back in one walk of its parts, and whether a
finding concerns a part taken out is a few set lookups. (Replaying every earlier removal for
each new one made a body of a few thousand wrong entries hold a worker for seconds.)
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
Path = tuple[Part, ...]


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
    #: For each list entries were taken out of (by its path as sent): the index as sent of each
    #: entry left, in order, and how many entries it had as sent.
    kept: dict[Path, tuple[list[int], int]] = field(default_factory=dict)
    #: Where the parts taken out were, in the paths of the body as sent.
    gone: set[Path] = field(default_factory=set)
    #: Every prefix of a path in ``gone`` (itself included, and the empty path).
    _under: set[Path] = field(default_factory=set)

    def original(self, parts: list[Part]) -> list[Part]:
        """A path of the pruned body as a path of the body as sent."""
        out: list[Part] = []
        for part in parts:
            if isinstance(part, int) and self.kept:
                mapping = self.kept.get(tuple(out))
                if mapping is not None:
                    left, length = mapping
                    part = left[part] if 0 <= part < len(left) else part + length - len(left)
            out.append(part)
        return out

    def concerns_gone(self, parts: list[Part]) -> bool:
        """Whether a finding at ``parts`` (sent-body path) is about a part taken out: one of
        them, inside one, or about something holding one."""
        path = tuple(parts)
        return path in self._under or any(path[:i] in self.gone for i in range(len(path)))

    def _mark_gone(self, path: Path) -> None:
        self.gone.add(path)
        for i in range(len(path), -1, -1):
            if path[:i] in self._under:
                break  # and so are all shorter prefixes
            self._under.add(path[:i])

    def take_out(self, targets: set[Path]) -> bool:
        """Take out the parts at ``targets`` (paths of the pruned body as it is now); ``False``
        when one is the whole body (nothing would be left)."""
        if () in targets:
            return False
        keys: list[tuple[dict[str, Any], str]] = []
        entries: dict[int, tuple[list[Any], Path, set[int]]] = {}
        # Resolve everything first: no removal of this round moves another one's target.
        for target in targets:
            parent = _node(self.data, target[:-1])
            last = target[-1]
            self._mark_gone(tuple(self.original(list(target))))
            if isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
                at = entries.get(id(parent))
                if at is None:
                    at = entries[id(parent)] = (parent, tuple(self.original(list(target[:-1]))), set())
                at[2].add(last)
            elif isinstance(parent, dict) and isinstance(last, str):
                keys.append((parent, last))
        for node, key in keys:
            node.pop(key, None)
        for items, list_path, indices in entries.values():
            left, length = self.kept.get(list_path, (list(range(len(items))), len(items)))
            items[:] = [v for i, v in enumerate(items) if i not in indices]
            self.kept[list_path] = ([o for i, o in enumerate(left) if i not in indices], length)
        return True


def _node(data: Any, parts: Path) -> Any:
    """The node at ``parts``, or ``None`` when it is gone (taken out with an ancestor)."""
    node = data
    for part in parts:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def prune_to_valid(
    model: type[BaseModel], data: Any, errors: list[FieldError], prefix: str
) -> tuple[dict[str, Any], Pruned] | None:
    """The model's dump of ``data`` without the parts ``errors`` name, or ``None`` when
    nothing valid is left (or the errors are not about parts that can be taken out)."""
    if not isinstance(data, dict):
        return None
    pruned = Pruned(copy.deepcopy(data))
    for _ in range(MAX_ROUNDS):
        if not pruned.take_out({tuple(_target(e, prefix)) for e in errors}):
            return None
        dumped, errors = validate_model(model, pruned.data, prefix)
        if dumped is not None:
            return dumped, pruned
    return None


def _target(error: FieldError, prefix: str) -> list[Part]:
    parts = parse_path(error.path.removeprefix(prefix))
    # A missing field cannot be taken out: its object must go instead.
    return parts[:-1] if error.message == "is required" else parts
