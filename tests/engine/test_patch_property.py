"""PATCH (``engine/patch.py``) against the reference model in ``patch_model.py``, on random
documents and patches with directives at any depth."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import event, given, settings

from plinth.engine.patch import apply_patch
from plinth.errors import ValidationFailed
from tests.engine.patch_model import REJECTED, documents, documents_and_patches, model_patch


@settings(max_examples=600, deadline=None)
@given(case=documents_and_patches())
def test_patch_agrees_with_the_model(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    target, patch = case
    before_target, before_patch = copy.deepcopy(target), copy.deepcopy(patch)
    expected = model_patch(target, patch)
    event("rejected" if expected is REJECTED else "applied")
    if expected is REJECTED:
        with pytest.raises(ValidationFailed):
            apply_patch(target, patch)
    else:
        assert apply_patch(target, patch) == expected
    assert (target, patch) == (before_target, before_patch), "an input was mutated"


@settings(max_examples=300, deadline=None)
@given(target=documents())
def test_an_empty_patch_changes_nothing(target: dict[str, Any]) -> None:
    assert apply_patch(target, {}) == target


@settings(max_examples=300, deadline=None)
@given(target=documents(), replacement=documents())
def test_replace_at_the_top_is_the_replacement(target: dict[str, Any], replacement: dict[str, Any]) -> None:
    assert apply_patch({"spec": target}, {"$replace/spec": replacement}) == {"spec": replacement}


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": None}}, {"a": {"c": 2}}),
        ({"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        ({"a": {"k": [{"name": "x", "v": 1}]}}, {"a": {"$patch/k": [{"name": "x", "w": 2}]}},
         {"a": {"k": [{"name": "x", "v": 1, "w": 2}]}}),
        ({"k": ["a", "b"]}, {"$drop/k": ["a"], "$append/k": ["c"]}, {"k": ["b", "c"]}),  # append, then drop
        ({"k": [{"name": "x"}, {"name": "y"}]}, {"$drop/k": ["x"]}, {"k": [{"name": "y"}]}),
        ({"t": {"a": 1, "b": 2}}, {"$drop/t": ["a"]}, {"t": {"b": 2}}),
        ({"k": [1]}, {"$replace/k": [9], "$append/k": [10]}, {"k": [9, 10]}),  # replace, then append
    ],
)  # fmt: skip
def test_documented_examples(target: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert model_patch(target, patch) == expected
    assert apply_patch(target, patch) == expected
