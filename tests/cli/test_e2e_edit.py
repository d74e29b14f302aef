"""``plinth rest edit`` with EDITOR set to small scripts, against a real server (issue 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.conftest import PlinthCli
from tests.cli.test_e2e_rest import ORG, create_domain


def editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.sh"
    script.write_text("#!/bin/sh\nset -e\n" + body)
    script.chmod(0o755)
    return str(script)


def current(cli: PlinthCli, name: str) -> dict:
    return json.loads(cli("rest", "get", f"{ORG}/domain/{name}", "-o", "json").stdout)


def test_changed_field_is_patched_with_the_version_read(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    script = editor(tmp_path, "sed -i 's/^description: .*/description: edited in vi/' \"$1\"\n")
    run = cli("rest", "edit", f"{ORG}/domain/{name}", "-o", "json", env={"VISUAL": script, "EDITOR": "false"})
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["description"] == "edited in vi"
    assert current(cli, name)["version"] == 2


def test_unchanged_file_sends_nothing(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    run = cli("rest", "edit", f"{ORG}/domain/{name}", env={"EDITOR": editor(tmp_path, "true\n")})
    assert (run.code, run.stdout) == (0, "Resource was not modified. No changes have been submitted\n\n")
    assert current(cli, name)["version"] == 1


def test_bad_yaml_reopens_with_the_problem_then_the_fix_is_sent(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    seen = tmp_path / "second-round.yaml"
    script = editor(
        tmp_path,
        f"""
if [ ! -f "{tmp_path}/round1" ]; then
  touch "{tmp_path}/round1"
  printf 'broken: [unclosed\\n' >> "$1"
else
  cp "$1" "{seen}"
  sed -i -e '/^broken:/d' -e 's/^description: .*/description: fixed/' "$1"
fi
""",
    )
    run = cli("rest", "edit", f"{ORG}/domain/{name}", "-o", "json", env={"EDITOR": script})
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["description"] == "fixed"
    reopened = seen.read_text()
    assert reopened.startswith(f"# You are about to PATCH {ORG}/domain/{name}\n")
    assert "# The changes could not be applied." in reopened
    assert '"<editor>"' in reopened
    assert "broken: [unclosed" in reopened  # the user's text is kept, not reset


def test_rejected_patch_reopens_and_giving_up_keeps_the_file(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    script = editor(
        tmp_path,
        f"""
if [ ! -f "{tmp_path}/round1" ]; then
  touch "{tmp_path}/round1"
  sed -i 's/dnsMode: cname/dnsMode: bogus/' "$1"
fi
""",
    )
    run = cli("rest", "edit", f"{ORG}/domain/{name}", env={"EDITOR": script})
    assert run.code == 1
    kept = re.search(r"Your edits are kept in (\S+)", run.stderr)
    assert kept is not None, run.stderr
    text = Path(kept.group(1)).read_text()
    assert "dnsMode: bogus" in text
    assert "spec.dnsMode" in text  # the server's field error is listed at the top
    assert current(cli, name)["spec"]["dnsMode"] == "cname"


def test_concurrent_change_is_refused_not_overwritten(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    other = cli.environ()
    script = editor(
        tmp_path,
        f"""
printf 'description: changed meanwhile\\n' | env PYTHONPATH="{other["PYTHONPATH"]}" "{__import__("sys").executable}" \\
  -m plinth rest patch {ORG}/domain/{name} -f - --endpoint {cli.endpoint} --token {cli.token} -o names >/dev/null
sed -i 's/^description: .*/description: my edit/' "$1"
""",
    )
    run = cli("rest", "edit", f"{ORG}/domain/{name}", env={"EDITOR": script})
    assert run.code == 1
    assert "changed by someone else" in run.stderr
    assert "Your edits are kept in" in run.stderr
    assert current(cli, name)["description"] == "changed meanwhile"


def test_editor_failure_stops_without_patching(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    run = cli("rest", "edit", f"{ORG}/domain/{name}", env={"EDITOR": editor(tmp_path, "exit 3\n")})
    assert (run.code, run.stderr) == (1, "Editor did not exit cleanly\n\n")
    assert current(cli, name)["version"] == 1
