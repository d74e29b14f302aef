"""``plinth.cli.output.jsyaml`` ports js-yaml's dumper, so it carries js-yaml's MIT notice, word for
word the licence the console's vendored copy of js-yaml ships with."""

from __future__ import annotations

from pathlib import Path

import plinth.cli.output.jsyaml as jsyaml
import plinth.console

LICENSE = Path(plinth.console.__file__).parent / "static" / "vendor" / "js-yaml.LICENSE"


def comment_text(source: str) -> str:
    """The text of the module's ``#`` comment lines, with the marker removed."""
    lines = [line.strip() for line in source.splitlines()]
    return "\n".join(line[1:].removeprefix(" ") for line in lines if line.startswith("#"))


def test_the_port_carries_js_yaml_licence_notice_word_for_word() -> None:
    notice = LICENSE.read_text().strip()
    assert "Copyright (C) 2011-2015 by Vitaly Puzrin" in notice
    assert notice in comment_text(Path(jsyaml.__file__).read_text())
