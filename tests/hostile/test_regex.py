"""Regular expressions in queries run in linear time, on both stores, whoever sends them
(docs/api.md, "Queries" and "Limits").

The issue's cases: a ``~`` term ran Python's backtracking ``re``: a key with no permissions
held a SQLite server for seconds with one list query, and a query watch held the server on
every matching write.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hostile.answering import assert_kept_answering, while_hostile
from tests.support.server import ServerProcess
from tests.support.watching import WatchReader

#: Exponential for a backtracking engine on a run of 'a' with no 'b' after it.
CATASTROPHIC = "(a*)*b"
RUN = "a" * 40
PATTERN_MAX = 256


def _query(pattern: Any, prop: str = "description") -> dict[str, Any]:
    return {"spec": {"terms": [{"op": "~", "property": prop, "value": pattern}]}}


@pytest.fixture(scope="module")
def bait(api: httpx.Client) -> Iterator[str]:
    """A GVC whose description is a long run of one letter."""
    assert api.post("/org/acme/gvc", json={"name": "hostile-bait", "description": RUN}).status_code == 201
    yield "hostile-bait"


def test_a_catastrophic_pattern_from_a_key_without_permissions_stalls_nothing(
    server: ServerProcess, nobody: httpx.Client, bait: str
) -> None:
    outcome = while_hostile(
        server, lambda: nobody.post("/org/acme/gvc/-query", json=_query(CATASTROPHIC)), "/org/acme/gvc"
    )
    for r in assert_kept_answering(outcome, 200):
        assert r.json()["items"] == []


def test_a_catastrophic_pattern_is_answered_correctly(api: httpx.Client, bait: str) -> None:
    r = api.post("/org/acme/gvc/-query", json=_query(CATASTROPHIC))
    assert r.status_code == 200 and r.json()["items"] == []
    r = api.post("/org/acme/gvc/-query", json=_query("(a*)*$"))
    assert bait in [i["name"] for i in r.json()["items"]]


def test_a_query_watch_with_a_catastrophic_pattern_stalls_no_write(server: ServerProcess, api: httpx.Client) -> None:
    target = "hostile-watched"
    assert api.post("/org/acme/gvc", json={"name": target, "description": RUN}).status_code == 201
    with WatchReader(server.url, "/org/acme/gvc/-query", server.key, method="POST", body=_query(CATASTROPHIC)) as w:
        assert w.status == 200
        w.next()  # the first bookmark: the watch is live
        descriptions = iter([f"{RUN}{i}" for i in range(100)])
        outcome = while_hostile(
            server,
            lambda: api.patch(f"/org/acme/gvc/{target}", json={"description": next(descriptions)}),
            "/org/acme/gvc",
        )
        assert_kept_answering(outcome, 200)


def test_a_pattern_longer_than_the_bound_is_400_naming_the_term(api: httpx.Client) -> None:
    r = api.post("/org/acme/gvc/-query", json=_query("a" * (PATTERN_MAX + 1)))
    assert r.status_code == 400, r.text
    errors = r.json()["details"]["errors"]
    assert [e["path"] for e in errors] == ["spec.terms[0].value"]
    assert str(PATTERN_MAX) in errors[0]["message"]
    assert api.post("/org/acme/gvc/-query", json=_query("a" * PATTERN_MAX)).status_code == 200


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", "(?=a)a", "(?<!b)a", "a{1001}", "a{256}", "[", "(a", r"\ba", r"a\z", r"\p{L}", "(?P<n>a)", "a(?i)a"],
)
def test_patterns_outside_the_safe_syntax_are_400_on_every_store(api: httpx.Client, pattern: str) -> None:
    # Back-references and look-arounds need backtracking; PostgreSQL would run them, RE2
    # refuses them; other escapes and flags mean different things to the two engines, or
    # exist in one only. Neither store takes any of them, so a query means the same on both.
    r = api.post("/org/acme/gvc/-query", json=_query(pattern))
    assert r.status_code == 400, r.text
    assert [e["path"] for e in r.json()["details"]["errors"]] == ["spec.terms[0].value"]


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("^a+$", True),
        (r"^\w{40}$", True),
        ("(?i)^A", True),
        ("[[:alpha:]]+", True),
        ("^b", False),
        ("a|b", True),
        (r"^(?:a\.?)+$", True),
        (r"\Aa", True),
        ("a.a", True),
    ],
)
def test_ordinary_patterns_match_alike_on_both_stores(api: httpx.Client, bait: str, pattern: str, found: bool) -> None:
    r = api.post("/org/acme/gvc/-query", json=_query(pattern))
    assert r.status_code == 200, r.text
    assert (bait in [i["name"] for i in r.json()["items"]]) is found


def test_a_non_string_value_is_searched_as_its_text(api: httpx.Client) -> None:
    r = api.post("/org/acme/gvc/-query", json=_query(5, "version"))
    assert r.status_code == 200, r.text
