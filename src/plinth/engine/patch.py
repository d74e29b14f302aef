"""PATCH as the API defines it: a deep merge with directive keys (CLI update/update.js; docs/api.md, PATCH).

At any depth of the patch document:

- a plain value replaces the target's value; an object merges into an object recursively;
- ``null`` removes the field;
- arrays replace the whole array;
- ``$replace/<field>``: the value replaces the field wholesale (no merge);
- ``$drop/<field>``: removes entries: from a string array by value, from an array of objects
  by ``name`` (``{"$drop/keys": ["k1"]}``), from an object by key. With the item's ``org``
  given, a link matches the same item's link in the other form (``//group/x`` drops the
  stored ``/org/{org}/group/x``; a user's email in any case), as links are stored in full;
- ``$append/<field>``: appends the given elements to an array (created when absent);
- ``$patch/<field>``: merges each given object into the array element with the same ``name``
  (elements with an unknown name are appended).

Directives are applied after the plain keys of the same object, in the order
``$replace``, ``$patch``, ``$append``, ``$drop``. A malformed directive is a 400 naming its path,
and so is a field sent both plainly and with ``$replace/`` in the same object (``tags`` and
``$replace/tags``): the plain value would be merged and then overwritten unseen.
"""

from __future__ import annotations

import copy
from typing import Any

from plinth.errors import FieldError, ValidationFailed
from plinth.kinds.links import canonical_link

DIRECTIVES = ("$replace/", "$patch/", "$append/", "$drop/")


def apply_patch(
    target: dict[str, Any], patch: dict[str, Any], kind: str | None = None, org: str | None = None
) -> dict[str, Any]:
    """Return a new document: ``target`` with ``patch`` merged in. Neither input is mutated.

    ``org`` is the item's org: ``$drop`` then matches links in either form."""
    errors: list[FieldError] = []
    result = _merge(_copied(target), patch, "", errors, org)
    if errors:
        raise ValidationFailed(errors, kind)
    return result


#: What :func:`_copied` hands back as it is: immutable.
_ATOMS = frozenset({str, int, float, bool, type(None)})


def _copied(value: Any) -> Any:
    """A deep copy of ``value``, a JSON-shaped document (the stored item, as read): dicts and
    lists rebuilt, immutable leaves shared, anything else through ``copy.deepcopy``. A few
    times faster than ``copy.deepcopy`` of the whole item, which was about 5% of a PATCH's time
    (docs/write-path.md): a stored item is a tree, so there is no shared part to keep shared."""
    kind = type(value)
    if kind is dict:
        return {k: _copied(v) for k, v in value.items()}
    if kind is list:
        return [_copied(v) for v in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _merge(
    target: dict[str, Any], patch: dict[str, Any], prefix: str, errors: list[FieldError], org: str | None = None
) -> dict[str, Any]:
    directives: list[tuple[str, str, Any]] = []
    for key, value in patch.items():
        directive = next((d for d in DIRECTIVES if key.startswith(d)), None)
        if directive is not None:
            directives.append((directive, key[len(directive) :], value))
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            target[key] = _merge(target[key], value, _join(prefix, key), errors, org)
        elif isinstance(value, dict):
            target[key] = _merge({}, value, _join(prefix, key), errors, org)
        else:
            target[key] = copy.deepcopy(value)
    for d, field, _ in directives:
        if d == "$replace/" and field in patch:
            errors.append(FieldError(_join(prefix, d + field), f"cannot be sent with '{field}' in the same object"))
    for directive in DIRECTIVES:
        for d, field, value in directives:
            if d == directive:
                _directive(target, d, field, value, _join(prefix, d + field), errors, org)
    return target


def _directive(
    target: dict[str, Any],
    directive: str,
    field: str,
    value: Any,
    path: str,
    errors: list[FieldError],
    org: str | None = None,
) -> None:
    if not field:
        errors.append(FieldError(path, "a directive must name a field"))
        return
    current = target.get(field)
    if directive == "$replace/":
        if value is None:
            target.pop(field, None)
        else:
            target[field] = copy.deepcopy(value)
        return
    if not isinstance(value, list):
        errors.append(FieldError(path, "must be an array"))
        return
    if directive == "$append/":
        if current is None:
            current = []
        if not isinstance(current, list):
            errors.append(FieldError(path, f"'{field}' is not an array"))
            return
        target[field] = current + copy.deepcopy(value)
    elif directive == "$drop/":
        if current is None:
            return
        if isinstance(current, dict):
            if not all(isinstance(k, str) for k in value):
                errors.append(FieldError(path, f"keys to drop from '{field}' must be strings"))
                return
            drop_keys = set(value)
            target[field] = {k: v for k, v in current.items() if k not in drop_keys}
        elif isinstance(current, list):
            links = {c for c in (_canonical_link(v, org) for v in value) if c is not None}
            drop = _Members(value)
            target[field] = [e for e in current if not _dropped(e, drop, links, org)]
        else:
            errors.append(FieldError(path, f"'{field}' is neither an array nor an object"))
    elif directive == "$patch/":
        if current is None:
            current = []
        if not isinstance(current, list) or not all(isinstance(v, dict) and "name" in v for v in value):
            errors.append(FieldError(path, "must be an array of objects with a name, patching an array"))
            return
        merged = [copy.deepcopy(e) for e in current]
        # The first entry of each name, found by a lookup rather than a scan per patched entry
        # (the work stays linear in the array and the patch; docs/api.md, "Limits").
        first: dict[Any, int] = {}
        for i, e in enumerate(merged):
            if isinstance(e, dict) and _hashable(e.get("name")):
                first.setdefault(e.get("name"), i)
        for patch_item in value:
            name = patch_item["name"]
            if _hashable(name):
                index = first.get(name)
            else:
                index = next((i for i, e in enumerate(merged) if isinstance(e, dict) and e.get("name") == name), None)
            if index is None:
                merged.append(_merge({}, patch_item, path, errors, org))
                if _hashable(name):
                    first[name] = len(merged) - 1
            else:
                merged[index] = _merge(merged[index], patch_item, path, errors, org)
        target[field] = merged


def _canonical_link(value: Any, org: str | None) -> str | None:
    """The full form of a link of ``org`` (a user's email lowercased), or ``None``."""
    if org is None or not isinstance(value, str):
        return None
    return canonical_link(value, org)


def _hashable(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


class _Members:
    """Membership in a list of JSON values: a set lookup for scalars, a scan only for the
    objects and arrays among them (``1 == 1.0 == True`` as for the list's own ``in``)."""

    def __init__(self, values: list[Any]) -> None:
        self._scalars = {v for v in values if _hashable(v)}
        self._others = [v for v in values if not _hashable(v)]

    def __contains__(self, value: Any) -> bool:
        if _hashable(value):
            return value in self._scalars
        return value in self._others


def _dropped(element: Any, drop: _Members, links: set[str], org: str | None) -> bool:
    if isinstance(element, dict):
        return element.get("name") in drop
    if element in drop:
        return True
    canonical = _canonical_link(element, org) if links else None
    return canonical is not None and canonical in links
