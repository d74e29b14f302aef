"""The shape of ``KindSpec`` (``kinds/base.py``): small documented declarations, and one list of
what a status reads, which the engine reads alone to know which statuses a write refreshes."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from plinth.engine.dependencies import dependants_of, linked_kinds, linkers, questions, reads_placements, runtime
from plinth.kinds import REGISTRY
from plinth.kinds.base import (
    Access,
    AsksGrants,
    KindSpec,
    Lifecycle,
    Presentation,
    ReadsLinked,
    ReadsLinkers,
    ReadsPlacements,
    ReadsRuntime,
    ReadsSelected,
    Rules,
    Schema,
    Status,
)

DECLARATIONS = (Schema, Rules, Status, Lifecycle, Access, Presentation)
DEPENDENCIES = (ReadsLinked, ReadsLinkers, ReadsSelected, ReadsPlacements, AsksGrants, ReadsRuntime)
LOCATION_QUERY = ("gvc", "spec.staticPlacement.locationQuery")


def test_a_kind_is_its_name_scope_and_one_declaration_per_concern() -> None:
    names = [f.name for f in dataclasses.fields(KindSpec)]
    assert names == [
        "name",
        "scope",
        "schema",
        "rules",
        "status",
        "lifecycle",
        "access",
        "presentation",
        "actions",
        "example",
    ]
    minimal = KindSpec(name="thing", scope="org")
    assert minimal.presentation.title == "Thing"
    assert (minimal.schema, minimal.rules, minimal.status) == (Schema(), Rules(), Status())
    assert minimal.status.depends_on == () and minimal.access.verbs == frozenset(
        {"get", "list", "create", "replace", "patch", "delete"}
    )


@pytest.mark.parametrize("declaration", DECLARATIONS + DEPENDENCIES, ids=lambda c: c.__name__)
def test_every_declaration_and_each_of_its_fields_is_documented(declaration: type) -> None:
    doc = inspect.getdoc(declaration) or ""
    assert len(doc) > 80, f"{declaration.__name__}: say its contract in its docstring"
    assert dataclasses.is_dataclass(declaration)
    assert declaration.__dataclass_params__.frozen  # type: ignore[attr-defined]
    source = inspect.getsource(declaration)
    for f in dataclasses.fields(declaration):
        commented = re.search(rf"#:[^\n]*\n(\s*#:[^\n]*\n)*\s*{f.name}:", source) is not None
        assert f"``{f.name}" in doc or commented, f"{declaration.__name__}.{f.name} is not documented"


def test_the_hook_contracts_say_when_the_engine_calls_them_relative_to_the_commit() -> None:
    for declaration in (Rules, Status, Lifecycle):
        assert "commit" in (inspect.getdoc(declaration) or ""), declaration.__name__
    assert "before the commit" in (inspect.getdoc(Status) or "")


def _names(kinds: tuple[KindSpec, ...]) -> set[str]:
    return {k.name for k in kinds}


def test_the_registry_refreshes_the_statuses_it_always_did() -> None:
    """The dependencies each served kind declares, and which statuses a write of each kind
    refreshes through them: the ones the separate declarations before the one list gave."""
    linking = {name: _names(dependants_of(REGISTRY, name).linking) for name in REGISTRY}
    assert {n: k for n, k in linking.items() if k} == {
        "gvc": {"ipset", "workload", "domain", "volumeset"},
        "workload": {"ipset", "domain"},
        "secret": {"workload"},
    }
    linked = {name: _names(dependants_of(REGISTRY, name).linked) for name in REGISTRY}
    assert {n: k for n, k in linked.items() if k} == {"workload": {"volumeset"}}
    selectors = {name: dependants_of(REGISTRY, name).selectors for name in REGISTRY}
    assert {n: s for n, s in selectors.items() if s} == {"location": (LOCATION_QUERY,)}
    assert {k.name for k in REGISTRY.values() if reads_placements(k)} == {"workload", "domain", "volumeset"}
    assert {k.name for k in REGISTRY.values() if runtime(k) is not None} == {"workload"}
    assert {k.name for k in REGISTRY.values() if k.status.reads(AsksGrants)} == {"workload"}
    assert linked_kinds(REGISTRY["volumeset"]) == {"gvc"} and linkers(REGISTRY["volumeset"]) == {"workload"}


def test_the_dependency_list_alone_says_what_depends_on_a_kind() -> None:
    def asks(item: dict[str, object], org: str) -> tuple[()]:
        return ()

    watcher = KindSpec(
        name="watcher",
        scope="org",
        status=Status(
            depends_on=(
                ReadsLinked(frozenset({"thing"})),
                ReadsLinked(frozenset({"other"})),
                ReadsLinkers(frozenset({"thing"})),
                ReadsSelected(kind="thing", holder="holder", path="spec.query"),
                AsksGrants(asks),
            )
        ),
    )
    kinds = {"thing": KindSpec(name="thing", scope="org"), "watcher": watcher}
    found = dependants_of(kinds, "thing")
    assert (found.linking, found.linked, found.selectors) == ((watcher,), (watcher,), (("holder", "spec.query"),))
    assert dependants_of(kinds, "other").linking == (watcher,) and dependants_of(kinds, "other").linked == ()
    assert dependants_of(kinds, "watcher") == dependants_of(kinds, "nothing") == dependants_of({}, "thing")
    assert linked_kinds(watcher) == {"thing", "other"} and questions(watcher, {}, "acme") == ()
    assert not reads_placements(watcher) and runtime(watcher) is None
