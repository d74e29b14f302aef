"""Integers beyond 2^53 compare exactly in queries (issue 21, defect 7, "Info").

PostgreSQL compared every JSON number as a double, so 2^53 + 1 read as 2^53: a term could match
the wrong item or miss the right one, silently, and differently from SQLite (whose JSON functions
answer integers as 64-bit integers). Both stores now compare integers exactly (docs/api.md,
"Queries").
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.authz_support import every_item, ok
from tests.support.server import ServerProcess

TWO53 = 2**53
NUMBERS = {"num-below": TWO53 - 1, "num-at": TWO53, "num-above": TWO53 + 1, "num-far": 2**62 + 1}


@pytest.fixture(scope="module")
def tagged(server: ServerProcess, api: httpx.Client) -> str:
    for name, value in NUMBERS.items():
        ok(api.post(f"/org/{server.org}/gvc", json={"name": name, "tags": {"big": value}}), 201)
    return f"/org/{server.org}/gvc/-query"


def _names(api: httpx.Client, path: str, op: str, value: Any) -> set[str]:
    body = {"spec": {"match": "all", "terms": [{"op": op, "tag": "big", "value": value}]}}
    return {i["name"] for i in every_item(api, api.post(path, json=body))}


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        (">", TWO53, {"num-above", "num-far"}),
        (">=", TWO53 + 1, {"num-above", "num-far"}),
        ("<", TWO53 + 1, {"num-below", "num-at"}),
        ("<=", TWO53, {"num-below", "num-at"}),
        (">", 2**62, {"num-far"}),
        ("<", 2**62 + 1, {"num-below", "num-at", "num-above"}),
        ("=", TWO53 + 1, {"num-above"}),
    ],
)
def test_integers_beyond_2_53_compare_exactly(
    api: httpx.Client, tagged: str, op: str, value: int, expected: set[str]
) -> None:
    assert _names(api, tagged, op, value) == expected
