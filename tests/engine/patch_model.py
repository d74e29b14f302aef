"""A reference model of PATCH, written from the contract in ``engine/patch.py``'s docstring
(and docs/api.md, PATCH), not from its code; and Hypothesis strategies for documents and patches.

The model answers either the patched document or :data:`REJECTED` (the server must answer
400). It is deliberately plain: one pass for the plain keys, then one pass per directive kind.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

REJECTED: Any = object()
ORDER = ("$replace/", "$patch/", "$append/", "$drop/")


class _Rejected(Exception):
    pass


def model_patch(target: dict[str, Any], patch: dict[str, Any]) -> Any:
    """``target`` with ``patch`` applied, or :data:`REJECTED`."""
    try:
        return _apply(copy.deepcopy(target), patch)
    except _Rejected:
        return REJECTED


def _kind_of(key: str) -> tuple[str | None, str]:
    for prefix in ORDER:
        if key.startswith(prefix):
            return prefix, key[len(prefix) :]
    return None, key


def _apply(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    # "a plain value replaces; an object merges into an object recursively; null removes;
    # arrays replace the whole array"
    for key, value in patch.items():
        prefix, _ = _kind_of(key)
        if prefix is not None:
            continue
        if value is None:
            doc.pop(key, None)
        elif isinstance(value, dict):
            base = doc.get(key)
            doc[key] = _apply(base if isinstance(base, dict) else {}, value)
        else:
            doc[key] = copy.deepcopy(value)
    # "directives are applied after the plain keys of the same object, in the order
    # $replace, $patch, $append, $drop"
    for prefix in ORDER:
        for key, value in patch.items():
            kind, field = _kind_of(key)
            if kind != prefix:
                continue
            if not field:
                raise _Rejected  # "a directive must name a field"
            if prefix == "$replace/" and field in patch:
                raise _Rejected  # a plain field and its $replace/ in one object
            _directive(doc, prefix, field, value)
    return doc


def _directive(doc: dict[str, Any], prefix: str, field: str, value: Any) -> None:
    current = doc.get(field)
    if prefix == "$replace/":  # "replaces the field wholesale (no merge)"; null removes it
        if value is None:
            doc.pop(field, None)
        else:
            doc[field] = copy.deepcopy(value)
        return
    if not isinstance(value, list):
        raise _Rejected
    if prefix == "$append/":  # "appends the given elements to an array (created when absent)"
        if current is None:
            current = []
        if not isinstance(current, list):
            raise _Rejected
        doc[field] = [*current, *copy.deepcopy(value)]
    elif prefix == "$drop/":  # "from a string array by value, from objects by name, from an object by key"
        if current is None:
            return
        if isinstance(current, dict):
            if not all(isinstance(k, str) for k in value):
                raise _Rejected
            doc[field] = {k: v for k, v in current.items() if k not in value}
        elif isinstance(current, list):
            doc[field] = [e for e in current if not ((e.get("name") in value) if isinstance(e, dict) else (e in value))]
        else:
            raise _Rejected
    else:  # "$patch/": "merges each given object into the element with the same name (unknown: appended)"
        if current is None:
            current = []
        if not isinstance(current, list) or not all(isinstance(v, dict) and "name" in v for v in value):
            raise _Rejected
        merged = copy.deepcopy(current)
        for item in value:
            for i, element in enumerate(merged):
                if isinstance(element, dict) and element.get("name") == item["name"]:
                    merged[i] = _apply(element, item)
                    break
            else:
                merged.append(_apply({}, item))
        doc[field] = merged


# -- strategies ----------------------------------------------------------------------------------

#: Few keys and values, so that patches hit what the document holds, and names collide.
KEYS = ["a", "b", "c", "name"]
NAMES = ["x", "y", "z"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y", "", "a"]))
named = st.fixed_dictionaries({"name": st.sampled_from(NAMES)}, optional={"a": scalars, "b": scalars})


def documents(max_leaves: int = 12) -> st.SearchStrategy[dict[str, Any]]:
    """Stored documents: nested objects, arrays of scalars and of named objects, no directives."""
    values = st.recursive(
        st.one_of(scalars, st.lists(scalars, max_size=3), st.lists(named, max_size=3)),
        lambda inner: st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
        max_leaves=max_leaves,
    )
    return st.dictionaries(st.sampled_from(KEYS), values, max_size=4)


#: Mostly plain keys and directives naming a field; rarely a directive naming none.
PATCH_KEYS = [*KEYS, *KEYS, *(p + k for p in ORDER for k in KEYS), "$append/"]


def _named_patches(depth: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """``$patch/`` elements: a name, merged with a patch that may hold directives itself."""
    return st.lists(
        st.builds(lambda name, rest: {**rest, "name": name}, st.sampled_from(NAMES), patch_objects(depth - 1)),
        max_size=3,
    )


def _value_for(key: str, depth: int) -> st.SearchStrategy[Any]:
    plain = st.one_of(scalars, st.lists(scalars, max_size=3), st.lists(named, max_size=3))
    if depth > 0:
        plain = st.one_of(plain, patch_objects(depth - 1))
    prefix, _ = _kind_of(key)
    if prefix is None or prefix == "$replace/":
        return plain
    if prefix == "$patch/":
        return st.one_of(_named_patches(depth), plain) if depth > 0 else plain
    # $append/ and $drop/: values, names or keys; now and then not an array (rejected)
    return st.one_of(
        st.lists(st.one_of(scalars, named, st.sampled_from(NAMES + KEYS)), max_size=3),
        st.lists(st.sampled_from(NAMES + KEYS), max_size=3),
        plain,
    )


@st.composite
def patch_objects(draw: st.DrawFn, depth: int = 3) -> dict[str, Any]:
    """One object of a PATCH body: plain keys, null, arrays, and directives, nested ``depth`` deep."""
    keys = draw(st.lists(st.sampled_from(PATCH_KEYS), max_size=4, unique=True))
    return {key: draw(_value_for(key, depth)) for key in keys}


def patches() -> st.SearchStrategy[dict[str, Any]]:
    """PATCH bodies: plain keys, null, arrays, and directives at any depth."""
    return patch_objects(3)


@st.composite
def patches_for(draw: st.DrawFn, target: dict[str, Any], depth: int = 3) -> dict[str, Any]:
    """A patch aimed at ``target``: besides random keys, it edits fields the target holds, with
    the directive that fits each (names and values taken from the target), so that merges,
    drops and element patches meet what they act on."""
    patch = draw(patch_objects(0)) if draw(st.integers(0, 3)) == 0 else {}  # now and then, some noise
    for key, value in target.items():
        if not draw(st.booleans()):
            continue
        patch.pop(key, None)
        if isinstance(value, dict):
            action = draw(st.sampled_from(["merge", "replace", "null", "drop"]))
            if action == "merge" and depth > 0:
                patch[key] = draw(patches_for(value, depth - 1))
            elif action == "replace":
                patch[f"$replace/{key}"] = draw(documents(4))
            elif action == "drop":
                patch[f"$drop/{key}"] = draw(st.lists(st.sampled_from([*value, *KEYS]), max_size=3))
            else:
                patch[key] = None
        elif isinstance(value, list):
            names = [e["name"] for e in value if isinstance(e, dict) and "name" in e]
            plain = [e for e in value if not isinstance(e, dict)]
            known = st.sampled_from([*names, *plain, *NAMES])
            action = draw(st.sampled_from(["$drop/", "$append/", "$append/+$drop/", "$patch/", "plain"]))
            if action == "$drop/":
                patch[f"$drop/{key}"] = draw(st.lists(known, max_size=3))
            elif action == "$append/+$drop/":  # the order of the two matters: append first, then drop
                added = draw(st.lists(st.one_of(scalars, named), min_size=1, max_size=2))
                patch[f"$append/{key}"] = added
                patch[f"$drop/{key}"] = [e["name"] if isinstance(e, dict) else e for e in added]
            elif action == "$append/":
                patch[f"$append/{key}"] = draw(st.lists(st.one_of(scalars, named), max_size=2))
            elif action == "$patch/" and depth > 0:
                patch[f"$patch/{key}"] = draw(_named_patches(depth))
            else:
                patch[key] = draw(st.one_of(st.lists(scalars, max_size=2), st.none()))
        else:
            patch[key] = draw(st.one_of(scalars, st.lists(scalars, max_size=2)))
    return patch


@st.composite
def documents_and_patches(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored document, and a patch: aimed at it (mostly) or at random."""
    target = draw(documents())
    patch = draw(st.one_of(patches_for(target), patches()))
    return target, patch
