"""Plinth's output, byte for byte, against goldens recorded from the official CLI (and from
Plinth for the behaviours it deliberately does better). See ``golden_cases`` for the list."""

from __future__ import annotations

import pytest

from tests.cli.golden_cases import CASES, Case
from tests.cli.golden_runner import golden_path, load_golden, run_case


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_output_matches_golden(case: Case) -> None:
    assert golden_path(case).exists(), f"no golden for {case.name}: run tests/cli/record_goldens.py"
    expected = load_golden(case)
    actual = run_case(case, "plinth")
    assert actual.stderr == expected.stderr
    assert actual.stdout == expected.stdout
    assert actual.exit == expected.exit
    assert actual.edit_file == expected.edit_file
