"""Every ``rest`` verb through the real entry point against a real server (issue 4, Tests)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import PlinthCli

ORG = "/org/acme"


def create_domain(cli: PlinthCli, name: str, description: str = "made by a test") -> dict:
    run = cli(
        "rest",
        "create",
        f"{ORG}/domain",
        "-f",
        "-",
        "-o",
        "json",
        stdin=f"name: {name}\ndescription: {description}\nspec:\n  dnsMode: cname\n",
    )
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


def test_create_follows_location_and_prints_the_item(cli: PlinthCli, unique: str) -> None:
    item = create_domain(cli, f"{unique}.example.com")
    assert item["kind"] == "domain"
    assert item["name"] == f"{unique}.example.com"
    assert item["version"] == 1
    assert {"rel": "self", "href": f"{ORG}/domain/{unique}.example.com"} in item["links"]


def test_get_list_names_and_text_table(cli: PlinthCli, unique: str) -> None:
    create_domain(cli, f"{unique}.example.com", "listed")
    names = cli("rest", "get", f"{ORG}/domain", "-o", "names", "--max", "0")
    assert names.code == 0
    assert f"{unique}.example.com" in names.stdout.splitlines()
    table = cli("rest", "get", f"{ORG}/domain/{unique}.example.com", "--ts", "iso")
    header = [cell.strip() for cell in table.stdout.splitlines()[1].split("|")[1:-1]]
    assert header == ["NAME", "DESCRIPTION", "TAGS"]
    row = [cell.strip() for cell in table.stdout.splitlines()[3].split("|")[1:-1]]
    assert row == [f"{unique}.example.com", "listed", ""]
    assert table.stdout.startswith("+") and table.stdout.endswith("+\n\n")


def test_max_follows_next_links_into_one_list(cli: PlinthCli, unique: str) -> None:
    for n in range(3):
        create_domain(cli, f"p{n}.{unique}.example.com")
    everything = cli("rest", "get", f"{ORG}/domain?limit=1", "--max", "0", "-o", "json")
    items = json.loads(everything.stdout)["items"]
    assert len(items) >= 3
    assert everything.stderr == ""
    two = cli("rest", "get", f"{ORG}/domain?limit=1", "--max", "2", "-o", "json")
    merged = json.loads(two.stdout)
    assert [i["name"] for i in merged["items"]] == [i["name"] for i in items[:2]]
    assert not any(link["rel"] == "next" for link in merged["links"])
    assert two.stderr == (
        "Note: More records are available. Showing first 2 results. Use --max 0 to fetch all records.\n"
    )


def test_patch_from_file_put_post_and_delete(cli: PlinthCli, unique: str, tmp_path: Path) -> None:
    name = f"{unique}.example.com"
    create_domain(cli, name)
    patch_file = tmp_path / "patch.yaml"
    patch_file.write_text("description: patched from a file\ntags:\n  team: web\n")
    patched = cli("rest", "patch", f"{ORG}/domain/{name}", "-f", str(patch_file), "-o", "yaml")
    assert patched.code == 0, patched.stderr
    doc = yaml.safe_load(patched.stdout)
    assert (doc["description"], doc["tags"], doc["version"]) == ("patched from a file", {"team": "web"}, 2)

    put = cli(
        "rest",
        "put",
        f"{ORG}/domain/{name}",
        "-f",
        "-",
        "-o",
        "json-slim",
        stdin=json.dumps({"name": name, "description": "replaced", "spec": {"dnsMode": "cname"}}),
    )
    assert put.code == 0, put.stderr
    assert json.loads(put.stdout)["description"] == "replaced"
    assert "version" not in json.loads(put.stdout)

    posted = cli("rest", "post", f"{ORG}/domain", "-f", "-", stdin=f"name: post.{name}\n")
    assert posted.code == 0, posted.stderr

    deleted = cli("rest", "delete", f"{ORG}/domain/{name}", "-o", "json")
    assert (deleted.code, deleted.stdout) == (0, "\n")
    gone = cli("rest", "get", f"{ORG}/domain/{name}", "-o", "yaml")
    assert gone.code == 1
    assert gone.stdout == ""
    error = yaml.safe_load(gone.stderr)
    assert error[0]["status"] == 404 and error[0]["code"] == "not_found"
    assert gone.stderr.endswith("\n\n\n")


def test_server_validation_error_is_printed_as_json_with_exit_1(cli: PlinthCli, unique: str) -> None:
    run = cli("rest", "create", f"{ORG}/domain", "-f", "-", stdin="name: not a domain name\n")
    assert run.code == 1
    assert run.stdout == ""
    assert json.loads(run.stderr)[0]["status"] == 400


def test_names_reports_errors_instead_of_swallowing_them(cli: PlinthCli) -> None:
    run = cli("rest", "get", f"{ORG}/domain/missing.example.com", "-o", "names")
    assert run.code == 1
    assert json.loads(run.stderr)[0]["code"] == "not_found"


def test_missing_input_file_and_usage_errors(cli: PlinthCli) -> None:
    no_file = cli("rest", "patch", f"{ORG}/domain/x.example.com")
    assert (no_file.code, no_file.stderr) == (1, "No input file provided\n\n")
    usage = cli("rest", "get")
    assert usage.code == 2
    assert "Missing argument 'PATH'" in usage.stderr
    assert "Usage: plinth rest get [OPTIONS] PATH" in usage.stderr
    assert usage.stdout == ""


def test_verbose_and_debug_go_to_stderr_with_the_token_masked(cli: PlinthCli) -> None:
    run = cli("rest", "get", ORG, "-v", "-d", "-o", "json")
    assert run.code == 0
    assert json.loads(run.stdout)["name"] == "acme"
    assert 'Using token from argument "--token"' in run.stderr
    assert f"> GET {ORG}\n" in run.stderr
    assert f"Authorization: {cli.token[:3]}...{cli.token[-3:]}\n" in run.stderr  # type: ignore[index]
    assert cli.token not in run.stderr  # type: ignore[operator]
    assert "< 200 OK" in run.stderr


def test_header_option_overrides_a_built_in_header(cli: PlinthCli) -> None:
    run = cli("rest", "get", ORG, "-H", "Authorization: Bearer wrong", "-o", "json")
    assert run.code == 1
    assert json.loads(run.stderr)[0]["status"] == 401
