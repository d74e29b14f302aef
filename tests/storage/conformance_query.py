"""Conformance checks for listing: keyset paging, sorting and every query op of ``query.py``.

Expected results are written out from the semantics in ``query.py``; each case is also
checked against ``evaluate.py``, so the oracle the property test trusts is itself pinned.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from plinth.storage.base import Record, Storage
from plinth.storage.evaluate import matches, sort_key, sort_value
from plinth.storage.query import Filter, ListRequest, Op, Scalar, Sort, Term
from tests.storage.records import KIND, body, create, expect_error, list_all, make_record, names, new_org

# -- paging ---------------------------------------------------------------------------------


async def run_keyset_paging_org_wide(store: Storage) -> None:
    org = new_org()
    parents = ["", "gvc-a", "gvc-b", "gvc-c"]
    records = [make_record(org, f"item-{i:03d}", parent=parents[i % 4]) for i in range(250)]
    # Code point order, not a locale's: "Zeta" < "_under" < "alpha" < "émile".
    records += [make_record(org, name) for name in ("Zeta", "_under", "alpha", "émile")]
    random.Random(7).shuffle(records)
    noise = [make_record(org, "item-000", kind="other"), make_record(new_org(), "item-001")]
    await create(store, records + noise)

    listed = await list_all(store, ListRequest(org, KIND, None, limit=7))
    keys = [(r.key.parent, r.key.name) for r in listed]
    assert len(keys) == len(set(keys)) == len(records)
    assert keys == sorted((r.key.parent, r.key.name) for r in records)


async def run_keyset_paging_within_one_parent(store: Storage) -> None:
    org = new_org()
    records = [make_record(org, f"item-{i:03d}", parent=("gvc-a", "gvc-b")[i % 2]) for i in range(250)]
    random.Random(11).shuffle(records)
    await create(store, records)
    listed = await list_all(store, ListRequest(org, KIND, "gvc-b", limit=7))
    expected = sorted(r.key.name for r in records if r.key.parent == "gvc-b")
    assert names(listed) == expected
    assert {r.key.parent for r in listed} == {"gvc-b"}


SORT_VALUES: list[Any] = [3, 1, 2, 2.0, 2, -1, 10, "b", "a", "a", "B", "é", True, False, True, None, {"x": 1}, [1]]


async def run_keyset_paging_sorted_by_a_json_path(store: Storage) -> None:
    org = new_org()
    records = []
    for copy, parent in enumerate(("", "gvc-a")):
        records += [
            make_record(org, f"v{copy}-{i:02d}", {"spec": {"rank": v}}, parent=parent)
            for i, v in enumerate(SORT_VALUES)
        ]
        records += [make_record(org, f"m{copy}-{i}", {"spec": {}}, parent=parent) for i in range(3)]
    random.Random(3).shuffle(records)
    await create(store, records)
    absent = {r.key.name for r in records if sort_value(body(r), ("spec", "rank")) is None}

    for descending in (False, True):
        sort = Sort(("spec", "rank"), descending)
        listed = await list_all(store, ListRequest(org, KIND, None, limit=4, filter=Filter(sort=sort)))
        expected = sorted(records, key=lambda r, s=sort: sort_key(s, body(r), r.key.parent, r.key.name))
        assert names(listed) == names(expected)
        values = [sort_value(body(r), sort.path) for r in listed]
        if descending:
            assert values[0] == "é" and set(names(listed)[-len(absent) :]) == absent
        else:
            assert set(names(listed)[: len(absent)]) == absent and values[-1] == "é"
        # Ties (2 and 2.0 are one value) keep parent-then-name order in both directions.
        twos = [(r.key.parent, r.key.name) for r, v in zip(listed, values, strict=True) if v == 2]
        assert twos == sorted(twos) and len(twos) == 6


# -- query ops ------------------------------------------------------------------------------

VALUES: dict[str, Any] = {
    "s-abc": "abc",
    "s-abd": "abd",
    "s-upper": "ABC",
    "s-pct": "50%_off",
    "s-date": "2024-05-01T00:00:00Z",
    "n-1": 1,
    "n-5": 5,
    "n-5f": 5.0,
    "n-2-5": 2.5,
    "n-neg": -1,
    "b-true": True,
    "b-false": False,
    "z-null": None,
    "o-obj": {"a": 1},
    "a-arr": [1],
}
ALL = {*VALUES, "m-missing"}
STRINGS = {"s-abc", "s-abd", "s-upper", "s-pct", "s-date"}
NUMBERS = {"n-1", "n-5", "n-5f", "n-2-5", "n-neg"}
WITH_TEXT = STRINGS | NUMBERS | {"b-true", "b-false"}
MATCHES: tuple[Literal["all", "any", "none"], ...] = ("all", "any", "none")


def v(op: Op, value: Scalar = None) -> Term:
    return Term(op, value, path=("spec", "v"))


VALUE_CASES: list[tuple[Term, set[str]]] = [
    # strings
    (v("=", "abc"), {"s-abc"}),
    (v("!=", "abc"), ALL - {"s-abc"}),
    (v(">", "abc"), {"s-abd"}),
    (v(">=", "abc"), {"s-abc", "s-abd"}),
    (v("<", "B"), {"s-upper", "s-pct", "s-date"}),
    (v("<=", "ABC"), {"s-upper", "s-pct", "s-date"}),
    (v("<", "2024-06-01"), {"s-date"}),
    (v(">", "0"), STRINGS),
    (v("~", "^ab"), {"s-abc", "s-abd"}),
    (v("=~", "C$"), {"s-upper"}),
    (v("contains", "%_"), {"s-pct"}),
    (v("contains", "B"), {"s-upper"}),
    # numbers
    (v("=", 5), {"n-5", "n-5f"}),
    (v("=", 5.0), {"n-5", "n-5f"}),
    (v("!=", 5), ALL - {"n-5", "n-5f"}),
    (v(">", 2), {"n-5", "n-5f", "n-2-5"}),
    (v(">=", 2.5), {"n-5", "n-5f", "n-2-5"}),
    (v("<", 1), {"n-neg"}),
    (v("<=", 1), {"n-neg", "n-1"}),
    (v("=", "5"), set()),
    (v("~", "^5"), {"n-5", "n-5f", "s-pct"}),
    (v("contains", "."), {"n-5f", "n-2-5"}),
    (v("contains", "1"), {"n-1", "n-neg", "s-date"}),
    # booleans
    (v("=", True), {"b-true"}),
    (v("=", False), {"b-false"}),
    (v("!=", True), ALL - {"b-true"}),
    (v("=", 1), {"n-1"}),
    (v(">", True), set()),
    (v("<=", False), set()),
    (v("~", "^tr"), {"b-true"}),
    (v("contains", "als"), {"b-false"}),
    # null, missing, objects and arrays
    (v("=", None), {"z-null"}),
    (v("!=", None), ALL - {"z-null"}),
    (v("exists"), ALL - {"m-missing"}),
    (v("!exists"), {"m-missing"}),
    (v(">", None), set()),
    (v("contains", ""), WITH_TEXT),
    (v("~", ""), WITH_TEXT),
    (v("~", "a"), {"s-abc", "s-abd", "b-false"}),  # not o-obj: objects have no text form
]


async def run_query_ops_on_values(store: Storage) -> None:
    org = new_org()
    records = {name: make_record(org, name, {"spec": {"v": value}}) for name, value in VALUES.items()}
    records["m-missing"] = make_record(org, "m-missing", {"spec": {}})
    await create(store, list(records.values()))
    for term, expected in VALUE_CASES:
        await _expect(store, org, Filter(terms=(term,)), expected, records)


def tag(name: str, op: Op, value: Scalar = None) -> Term:
    return Term(op, value, tag=name)


TAGS: dict[str, dict[str, Any] | None] = {
    "t-str": {"team": "core", "tier": "1"},
    "t-bool": {"team": "edge", "flag": True},
    "t-boolstr": {"flag": "true"},
    "t-num": {"tier": 1},
    "t-numf": {"tier": 1.5},
    "t-empty": {"team": ""},
    "t-null": {"team": None},
    "t-dotted": {"app.kubernetes.io/name": "web"},
    "t-none": None,
}
TEAM_TAGGED = {"t-str", "t-bool", "t-empty", "t-null"}

TAG_CASES: list[tuple[Term, set[str]]] = [
    (tag("team", "=", "core"), {"t-str"}),
    (tag("team", "!=", "core"), set(TAGS) - {"t-str"}),
    (tag("flag", "=", True), {"t-bool", "t-boolstr"}),
    (tag("flag", "=", "true"), {"t-bool", "t-boolstr"}),
    (tag("flag", "=", False), set()),
    (tag("tier", "=", 1), {"t-str", "t-num"}),
    (tag("tier", "=", "1"), {"t-str", "t-num"}),
    (tag("tier", "=", 1.5), {"t-numf"}),
    (tag("tier", ">", 1), {"t-numf"}),
    (tag("tier", ">=", "1"), {"t-str"}),
    (tag("team", "=", None), {"t-empty"}),
    (tag("team", "exists"), TEAM_TAGGED),
    (tag("team", "!exists"), set(TAGS) - TEAM_TAGGED),
    (tag("app.kubernetes.io/name", "=", "web"), {"t-dotted"}),
    (tag("team", "~", "^e"), {"t-bool"}),
    (tag("team", "contains", "or"), {"t-str"}),
    (tag("flag", "=~", "^true$"), {"t-bool", "t-boolstr"}),
]


async def run_query_ops_on_tags(store: Storage) -> None:
    org = new_org()
    records = {name: make_record(org, name, {"tags": tags} if tags is not None else {}) for name, tags in TAGS.items()}
    await create(store, list(records.values()))
    for term, expected in TAG_CASES:
        await _expect(store, org, Filter(terms=(term,)), expected, records)


async def run_query_match_all_any_none(store: Storage) -> None:
    org = new_org()
    records = {name: make_record(org, name, {"spec": {"v": value}}) for name, value in VALUES.items()}
    records["m-missing"] = make_record(org, "m-missing", {"spec": {}})
    await create(store, list(records.values()))
    ends = v("~", "d$|C$")  # s-abd, s-upper
    has_b = v("contains", "b")  # s-abc, s-abd
    await _expect(store, org, Filter("all", (ends, has_b)), {"s-abd"}, records)
    await _expect(store, org, Filter("any", (ends, has_b)), {"s-abc", "s-abd", "s-upper"}, records)
    # Items without the property match no term, so "none" keeps them.
    await _expect(store, org, Filter("none", (ends, has_b)), ALL - {"s-abc", "s-abd", "s-upper"}, records)
    await _expect(store, org, Filter("none", (v("=", "abc"),)), ALL - {"s-abc"}, records)
    for match in MATCHES:
        await _expect(store, org, Filter(match), ALL, records)


async def run_query_parent_term(store: Storage) -> None:
    org = new_org()
    placed = {"p0": "", "p1": "gvc-1", "p2": "gvc-1", "p3": "gvc-2"}
    records = {name: make_record(org, name, parent=parent) for name, parent in placed.items()}
    await create(store, list(records.values()))

    def gvc(op: Op, value: str) -> Filter:
        return Filter(terms=(Term(op, value, parent=True),))

    await _expect(store, org, gvc("=", "gvc-1"), {"p1", "p2"}, records)
    await _expect(store, org, gvc("!=", "gvc-1"), {"p0", "p3"}, records)
    await _expect(store, org, gvc("=", ""), {"p0"}, records)
    await _expect(store, org, gvc(">", "a"), set(), records)
    within = await list_all(store, ListRequest(org, KIND, "gvc-1", 10, filter=gvc("=", "gvc-2")))
    assert within == []


async def run_query_the_backend_cannot_run_is_invalid(store: Storage) -> None:
    org = new_org()
    await create(store, [make_record(org, "alpha", {"spec": {"v": "("}})])
    unbalanced = Filter(terms=(v("~", "("),))
    await expect_error("invalid", store.list_page(ListRequest(org, KIND, None, 10, filter=unbalanced)))
    quoted = Filter(terms=(Term("exists", path=("spec", 'a"b')),))
    await expect_error("invalid", store.list_page(ListRequest(org, KIND, None, 10, filter=quoted)))


async def _expect(store: Storage, org: str, flt: Filter, expected: set[str], records: Mapping[str, Record]) -> None:
    listed = names(await list_all(store, ListRequest(org, KIND, None, limit=5, filter=flt)))
    assert set(listed) == expected, f"{flt}: listed {sorted(listed)}, expected {sorted(expected)}"
    assert len(listed) == len(set(listed))
    oracle = {name for name, r in records.items() if matches(flt, body(r), r.key.parent)}
    assert oracle == expected, f"evaluate.py on {flt}: {sorted(oracle)}, expected {sorted(expected)}"


CHECKS: list[Callable[[Storage], Awaitable[None]]] = [
    run_keyset_paging_org_wide,
    run_keyset_paging_within_one_parent,
    run_keyset_paging_sorted_by_a_json_path,
    run_query_ops_on_values,
    run_query_ops_on_tags,
    run_query_match_all_any_none,
    run_query_parent_term,
    run_query_the_backend_cannot_run_is_invalid,
]
