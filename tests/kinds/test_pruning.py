"""Rules run on what is valid of a spec, and their findings land at the paths as sent."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from plinth.engine.pipeline import build_candidate
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext, KindSpec, Rules, Schema
from plinth.kinds.pruning import parse_path, prune_to_valid, render_path
from plinth.kinds.spec_model import SpecModel
from plinth.kinds.validation import validate_model

CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z")


class Entry(SpecModel):
    name: str
    size: Annotated[int, Field(ge=1)]


class Spec(SpecModel):
    entries: list[Entry]
    mode: str | None = None


def repeated_names(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    """A cross-field rule: an entry's name repeats an earlier one."""
    seen: set[str] = set()
    errors = []
    for i, entry in enumerate(item["spec"]["entries"]):
        if entry["name"] in seen:
            errors.append(FieldError(f"spec.entries[{i}].name", "repeats an earlier entry"))
        seen.add(entry["name"])
    if item["spec"].get("mode") == "strict" and len(item["spec"]["entries"]) > 1:
        errors.append(FieldError("spec.entries", "strict mode takes one entry"))
    return errors


KIND = KindSpec(
    name="thing", scope="org", schema=Schema(spec_model=Spec, spec_required=True), rules=Rules(validate=repeated_names)
)


def errors_for(spec: dict[str, Any]) -> list[tuple[str, str]]:
    _, errors = build_candidate(KIND, {"spec": spec}, None, CTX, "thing")
    return [(e.path, e.message) for e in errors]


def test_paths_parse_and_render_back() -> None:
    assert parse_path(".entries[3].name") == ["entries", 3, "name"]
    assert render_path(["entries", 3, "name"], "spec") == "spec.entries[3].name"


def test_a_rule_finding_after_a_removed_entry_is_reported_at_its_index_as_sent() -> None:
    spec = {"entries": [{"name": "a", "size": 1}, {"name": "b", "size": 0}, {"name": "a", "size": 2}]}
    found = errors_for(spec)
    assert ("spec.entries[1].size", "Input should be greater than or equal to 1") in found
    assert ("spec.entries[2].name", "repeats an earlier entry") in found
    assert len(found) == 2


def test_findings_about_a_removed_part_are_left_out() -> None:
    # The invalid entry is taken out, so "strict mode takes one entry" (about the list it was
    # in) would judge a list the client did not send: it is not reported.
    spec = {"mode": "strict", "entries": [{"name": "a", "size": 1}, {"name": "b"}]}
    assert errors_for(spec) == [("spec.entries[1].size", "is required")]


def test_no_rules_run_when_nothing_valid_is_left() -> None:
    assert errors_for({"entries": "none"}) == [("spec.entries", "Input should be a valid list")]


def test_pruning_keeps_the_valid_rest_and_says_what_went() -> None:
    data = {"entries": [{"name": "a", "size": 0}, {"name": "b", "size": 1}], "extra": True}
    _, errors = validate_model(Spec, data, "spec")
    kept = prune_to_valid(Spec, data, errors, "spec")
    assert kept is not None
    spec, pruned = kept
    assert spec == {"entries": [{"name": "b", "size": 1}]}
    assert pruned.original(["entries", 0, "name"]) == ["entries", 1, "name"]
    assert pruned.concerns_gone(["entries", 0, "size"]) and not pruned.concerns_gone(["entries", 1])
    assert data["entries"][0] == {"name": "a", "size": 0}  # the body as sent is not touched


def test_entries_taken_out_over_several_rounds_map_back_to_their_paths_as_sent() -> None:
    # Round one takes out the bad sizes; round two the entries they leave without a size.
    spec = {
        "entries": [
            {"name": "a", "size": 1},
            {"name": "b", "size": 0},
            {"name": "a", "size": 2},
            {"name": "c", "size": "x"},
            {"name": "a", "size": 3},
        ]
    }
    found = errors_for(spec)
    assert ("spec.entries[2].name", "repeats an earlier entry") in found
    assert ("spec.entries[4].name", "repeats an earlier entry") in found
    assert {path for path, _ in found} == {
        "spec.entries[1].size",
        "spec.entries[3].size",
        "spec.entries[2].name",
        "spec.entries[4].name",
    }


def test_a_path_maps_back_through_every_list_it_crosses() -> None:
    data = {"entries": [{"name": "x", "size": 0}, {"name": "y", "size": 1}, {"name": "z", "size": 0}], "mode": 5}
    _, errors = validate_model(Spec, data, "spec")
    kept = prune_to_valid(Spec, data, errors, "spec")
    assert kept is not None
    spec, pruned = kept
    assert spec == {"entries": [{"name": "y", "size": 1}]}
    assert pruned.original(["entries", 0]) == ["entries", 1]
    assert pruned.original(["entries", 0, "name"]) == ["entries", 1, "name"]
    assert pruned.concerns_gone(["mode"]) and pruned.concerns_gone(["entries"])  # holds a part taken out
    assert not pruned.concerns_gone(["entries", 1, "name"])
