"""Queries are bounded, and mean the same on both stores whatever numbers they hold
(docs/api.md, "Queries" and "Limits").

The issue's cases: SQLite answered 500 for a query of 999 or more terms (its expression tree
has a bound), and for an integer of 2^63 or more in a term's value or in a cursor (it cannot
bind one); PostgreSQL answered 200.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

TERMS_MAX = 100
BIG = 2**63  # one past SQLite's largest integer
HUGE = 2**64 - 1  # the largest integer the server's JSON decoder takes
NUMBERS = {"n-one": 1, "n-2e62": 2**62, "n-2e63": BIG, "n-huge": HUGE, "n-minus": -(2**63) - 1}


def _term(value: Any, op: str = "=") -> dict[str, Any]:
    return {"op": op, "property": "spec.sidecar.envoy.n", "value": value}


def _query(*terms: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"spec": {"terms": list(terms), **spec}}


def _names(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {i["name"] for i in r.json()["items"]}


@pytest.fixture(scope="module")
def numbered(api: httpx.Client) -> Iterator[None]:
    """GVCs holding big numbers in a free-form part of their spec (an Envoy filter's settings)."""
    for name, n in NUMBERS.items():
        body = {"name": name, "spec": {"sidecar": {"envoy": {"n": n}}}}
        assert api.post("/org/acme/gvc", json=body).status_code == 201
    yield


@pytest.mark.parametrize("count", [TERMS_MAX + 1, 999, 5000])
def test_more_terms_than_the_bound_are_400_naming_the_terms(api: httpx.Client, count: int) -> None:
    terms = [{"property": "name", "value": f"g{i}"} for i in range(count)]
    for match in ("all", "any"):
        r = api.post("/org/acme/gvc/-query", json=_query(*terms, match=match))
        assert r.status_code == 400, r.text
        errors = r.json()["details"]["errors"]
        assert [e["path"] for e in errors] == ["spec.terms"] and str(TERMS_MAX) in errors[0]["message"]


def test_the_bound_itself_is_served(api: httpx.Client) -> None:
    terms = [{"op": "!=", "property": "name", "value": f"g{i}"} for i in range(TERMS_MAX)]
    for match in ("all", "any", "none"):
        r = api.post("/org/acme/gvc/-query", json=_query(*terms, match=match))
        assert r.status_code == 200, r.text


def test_a_stored_query_holds_at_most_the_bound(api: httpx.Client, unique: str) -> None:
    terms = [{"property": "name", "value": f"l{i}"} for i in range(TERMS_MAX + 1)]
    body = {"name": unique, "spec": {"staticPlacement": {"locationQuery": {"spec": {"terms": terms}}}}}
    r = api.post("/org/acme/gvc", json=body)
    assert r.status_code == 400, r.text
    assert "spec.staticPlacement.locationQuery.spec.terms" in {e["path"] for e in r.json()["details"]["errors"]}


@pytest.mark.usefixtures("numbered")
@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (_term(BIG, ">="), {"n-2e63", "n-huge"}),
        (_term(BIG, "<"), {"n-one", "n-2e62", "n-minus"}),
        (_term(HUGE), {"n-huge"}),
        (_term(HUGE, "!="), {"n-one", "n-2e62", "n-2e63", "n-minus"}),
        (_term(-(2**63) - 1, "<="), {"n-minus"}),
        (_term(-(2**63) - 1, ">"), {"n-one", "n-2e62", "n-2e63", "n-huge"}),
        (_term(2**62, "="), {"n-2e62"}),
    ],
)
def test_integers_beyond_64_bits_compare_as_numbers_on_both_stores(
    api: httpx.Client, term: dict[str, Any], expected: set[str]
) -> None:
    found = _names(api.post("/org/acme/gvc/-query", json=_query(term, _term(None, "exists"))))
    assert found & set(NUMBERS) == expected


@pytest.mark.usefixtures("numbered")
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_paging_a_sort_through_big_integers_follows_every_cursor(api: httpx.Client, order: str) -> None:
    # Each page's cursor holds the last item's sort value: here 2^63 and 2^64 - 1 too.
    query = _query(_term(None, "exists"), sort={"by": "spec.sidecar.envoy.n", "order": order})
    r = api.post("/org/acme/gvc/-query", params={"limit": 1}, json=query)
    seen: list[str] = []
    for _ in range(len(NUMBERS) + 2):  # bounded: one page per item, and the last
        assert r.status_code == 200, r.text
        seen += [i["name"] for i in r.json()["items"]]
        nxt = [link["href"] for link in r.json()["links"] if link["rel"] == "next"]
        if not nxt:
            break
        r = api.get(nxt[0])
    ascending = ["n-minus", "n-one", "n-2e62", "n-2e63", "n-huge"]
    assert seen == (ascending if order == "asc" else ascending[::-1])
