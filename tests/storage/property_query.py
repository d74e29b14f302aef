"""Property: random filters and sorts give, page by page, what ``evaluate.py`` says they should,
listed org-wide or under one parent, in pages of 1 to 4.

Items and filters are drawn from small vocabularies (a few paths and tags, values that
collide often) so that terms match some items and not others, and ties are common.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plinth.storage.base import Storage
from plinth.storage.evaluate import matches, sort_key
from plinth.storage.query import OPS, Filter, ListRequest, Sort, Term
from tests.aio import RunAsync
from tests.storage.records import KIND, body, create, list_all, make_record, names, new_org

PATHS = [("spec", "a"), ("spec", "b"), ("description",), ("spec",), ("spec", "a", "deeper")]
TAG_NAMES = ["team", "tier", "app.io/x"]
PARENTS = ["", "g1", "g2"]
# Patterns Python's re and PostgreSQL's ~ read alike.
PATTERNS = ["^a", "b$", "a.b", "[aA]1", "A|b", "^$", "1", "\\.", "a*b", "é", "^-", "0$"]

# Mostly a few common values, so that equal values and ties are frequent.
COMMON_STRINGS = ["", "a", "A", "ab", "b", "a.b", "1", "é"]
strings = st.one_of(st.sampled_from(COMMON_STRINGS), st.text(alphabet="aAb1._%é\\ ", max_size=3))
numbers = st.one_of(st.integers(-2, 2), st.sampled_from([0.5, 1.5, 2.0, -2.5]))
scalars = st.one_of(strings, numbers, st.booleans(), st.none())
json_values = st.one_of(scalars, st.just({"deeper": 1}), st.just([1, "a"]))
specs = st.one_of(
    st.fixed_dictionaries({}, optional={"a": json_values, "b": json_values}),
    scalars,
)
docs = st.fixed_dictionaries(
    {},
    optional={
        "spec": specs,
        "description": json_values,
        "tags": st.dictionaries(st.sampled_from(TAG_NAMES), scalars, max_size=3),
    },
)
items = st.lists(st.tuples(st.sampled_from(PARENTS), docs), min_size=3, max_size=10)


@st.composite
def terms(draw: st.DrawFn) -> Term:
    op = draw(st.sampled_from(OPS))
    value = draw(st.sampled_from(PATTERNS) if op in ("~", "=~") else scalars)
    target = draw(st.sampled_from(["path", "tag", "parent"]))
    if target == "parent":
        return Term(op, draw(st.sampled_from([*PARENTS, None])), parent=True)
    if target == "tag":
        return Term(op, value, tag=draw(st.sampled_from(TAG_NAMES)))
    return Term(op, value, path=draw(st.sampled_from(PATHS)))


sorts = st.one_of(
    st.builds(Sort, st.sampled_from([*PATHS, *(("tags", t) for t in TAG_NAMES)]), st.booleans()),
    st.none(),
)
filters = st.builds(
    Filter,
    match=st.sampled_from(["all", "any", "none"]),
    terms=st.lists(terms(), max_size=3).map(tuple),  # no terms: everything matches
    sort=sorts,
)
#: Where the list looks: across every parent (an org-wide listing), or under one (a GVC).
scopes = st.sampled_from([None, *PARENTS])
page_sizes = st.integers(1, 4)


def run_filters_agree_with_evaluator(store: Storage, run_async: RunAsync, max_examples: int = 150) -> None:
    """Each example stores its items in a fresh org, then lists them in pages of 3."""

    @settings(max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(items=items, flt=filters, scope=scopes, limit=page_sizes)
    def agree(items: list[tuple[str, dict[str, Any]]], flt: Filter, scope: str | None, limit: int) -> None:
        run_async(_compare(store, items, flt, scope, limit))

    agree()


async def _compare(
    store: Storage, items: list[tuple[str, dict[str, Any]]], flt: Filter, scope: str | None, limit: int
) -> None:
    org = new_org()
    records = [make_record(org, f"r{i}", doc, parent=parent) for i, (parent, doc) in enumerate(items)]
    if records:
        await create(store, records)
    in_scope = [r for r in records if scope is None or r.key.parent == scope]
    selected = [r for r in in_scope if matches(flt, body(r), r.key.parent)]
    expected = sorted(selected, key=lambda r: sort_key(flt.sort, body(r), r.key.parent, r.key.name))
    listed = await list_all(store, ListRequest(org, KIND, scope, limit=limit, filter=flt))
    assert names(listed) == names(expected)
