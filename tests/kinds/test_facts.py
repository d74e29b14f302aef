"""The generated table of kind facts (``plinth/kindfacts.py``, the console's ``templates.json``)
is what the kind declarations say: regenerated here and compared, so a kind added or changed
without ``python -m plinth.kinds.facts`` fails, naming the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from plinth import kindfacts
from plinth.kinds import KINDS
from plinth.kinds.facts import COMMAND, main, outputs, plural


@pytest.mark.parametrize("path", list(outputs()), ids=lambda p: p.name)
def test_the_generated_file_is_fresh(path: Path) -> None:
    assert path.read_text() == outputs()[path], f"{path.name} is stale: run {COMMAND}"


def test_check_says_nothing_is_stale() -> None:
    assert main(["--check"]) == 0


def test_the_table_reads_as_the_registry() -> None:
    assert set(kindfacts.KINDS) == {kind.name for kind in KINDS}
    assert {kind.name for kind in KINDS if kind.scope == "gvc"} == kindfacts.GVC_SCOPED
    assert {kindfacts.PLURALS[plural(kind)] for kind in kindfacts.KINDS} == set(kindfacts.KINDS)
    assert all(kindfacts.SHORT_NAMES[short] == kind.name for kind in KINDS for short in kind.presentation.short_names)


def test_plurals_follow_english() -> None:
    assert [plural(kind) for kind in ("policy", "identity", "gvc", "key", "quota")] == [
        "policies",
        "identities",
        "gvcs",
        "keys",
        "quotas",
    ]
