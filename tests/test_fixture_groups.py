"""``tests/conftest.py``'s ``fixture_group``: the group a test joins under ``--dist loadgroup`` is
the one xdist's scheduler reads back (no ``]`` after the ``@``), per module and per parameter of
its module fixtures, and a test without a module fixture joins none."""

from __future__ import annotations

import pytest
from xdist.scheduler.loadgroup import LoadGroupScheduling

from tests.conftest import fixture_group


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def scheduled_scope(item: pytest.Item, group: str) -> str:
    """What xdist's loadgroup scheduler makes of the id a worker reports for ``item`` in ``group``."""
    return LoadGroupScheduling._split_scope(None, f"{item.nodeid}@{group}")  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["a]b", "c@d"])  # ids with the characters xdist splits on
def test_a_module_fixture_makes_one_group_per_module_and_parameter(
    request: pytest.FixtureRequest, shared: str, case: str
) -> None:
    group = fixture_group(request.node)
    index = ["sqlite", "postgres"].index(shared)
    assert group == f"tests/test_fixture_groups.py:shared={index}"
    assert scheduled_scope(request.node, group) == group


def test_a_test_without_module_fixtures_joins_no_group(request: pytest.FixtureRequest) -> None:
    assert fixture_group(request.node) is None
