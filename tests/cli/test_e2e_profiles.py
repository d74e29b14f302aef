"""Profiles and where the endpoint and token come from (issue 4), through the real entry point."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from plinth.cli.profiles import ProfileStore, ensure_local_profile
from tests.cli.conftest import PlinthCli
from tests.support.server import ServerProcess, start_server


def bare(cli: PlinthCli) -> PlinthCli:
    """The same home, but no --endpoint/--token flags: settings must come from profiles or env."""
    return PlinthCli(home=cli.home)


def test_profile_lifecycle_files_and_modes(cli: PlinthCli, server: ServerProcess) -> None:
    run = bare(cli)
    made = run("profile", "create", "p1", "--endpoint", server.url, "--token", server.key, "--org", "acme")
    assert made.code == 0, made.stderr
    root = cli.home / "plinth"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "profiles").stat().st_mode) == 0o700
    profile_file = root / "profiles" / "p1.json"
    assert stat.S_IMODE(profile_file.stat().st_mode) == 0o600
    assert (root / "profiles" / "default").read_text() == "p1"  # the first profile becomes the default
    stored = json.loads(profile_file.read_text())
    assert stored["request"] == {"endpoint": server.url, "insecure": False, "timeout": 30, "token": server.key}
    assert stored["format"]["color"] is False  # created without a terminal

    assert run("rest", "get", "/org/acme", "-o", "names").stdout == "acme\n"

    run("profile", "create", "p2", "--endpoint", "http://127.0.0.1:9", "--output", "json")
    listed = run("profile", "get", "-o", "json")
    shown = {p["name"]: p for p in json.loads(listed.stdout)}
    assert shown["p1"]["request"]["token"] == "******"
    assert server.key not in listed.stdout
    table = run("profile", "get")
    assert table.stdout.splitlines()[1].split("|")[1].strip() == "PROFILE"

    assert run("profile", "set-default", "p2").code == 0
    assert (root / "profiles" / "default").read_text() == "p2"
    missing = run("profile", "set-default", "zzz")
    assert (missing.code, missing.stderr) == (1, "Profile zzz does not exist\n\n")

    updated = run("profile", "update", "p1", "--org", "other")
    assert updated.code == 0
    assert json.loads(profile_file.read_text())["context"] == {"org": "other", "gvc": ""}

    assert run("profile", "delete", "p2").code == 0
    assert not (root / "profiles" / "p2.json").exists()


def test_precedence_flag_over_env_over_profile(cli: PlinthCli, server: ServerProcess) -> None:
    run = bare(cli)
    run("profile", "create", "main", "--endpoint", "http://127.0.0.1:9", "--token", "profile-token")
    env_endpoint = {"PLINTH_ENDPOINT": server.url}
    # token from the profile is wrong for this server: 401
    assert json.loads(run("rest", "get", "/org/acme", "-o", "json", env=env_endpoint).stderr)[0]["status"] == 401
    # PLINTH_TOKEN beats the profile
    good = run("rest", "get", "/org/acme", "-o", "names", "-v", env={**env_endpoint, "PLINTH_TOKEN": server.key})
    assert good.stdout == "acme\n"
    assert 'Using token from environment variable "PLINTH_TOKEN"' in good.stderr
    assert f'Using endpoint "{server.url}" from environment variable "PLINTH_ENDPOINT"' in good.stderr
    # --token beats PLINTH_TOKEN
    flag = run(
        "rest", "get", "/org/acme", "-o", "names", "--token", server.key, env={**env_endpoint, "PLINTH_TOKEN": "wrong"}
    )
    assert flag.stdout == "acme\n"
    # --endpoint beats PLINTH_ENDPOINT
    flag_endpoint = run(
        "rest",
        "get",
        "/org/acme",
        "-o",
        "names",
        "--endpoint",
        server.url,
        "--token",
        server.key,
        env={"PLINTH_ENDPOINT": "http://127.0.0.1:9"},
    )
    assert flag_endpoint.stdout == "acme\n"


def test_profile_chosen_by_flag_then_env_then_default(cli: PlinthCli, server: ServerProcess) -> None:
    run = bare(cli)
    run("profile", "create", "good", "--endpoint", server.url, "--token", server.key)
    run("profile", "create", "bad", "--endpoint", server.url, "--token", "nope", "--default")
    assert json.loads(run("rest", "get", "/org/acme", "-o", "json").stderr)[0]["status"] == 401
    assert run("rest", "get", "/org/acme", "-o", "names", env={"PLINTH_PROFILE": "good"}).stdout == "acme\n"
    assert (
        run("rest", "get", "/org/acme", "-o", "names", "--profile", "good", env={"PLINTH_PROFILE": "bad"}).stdout
        == "acme\n"
    )
    missing = run("rest", "get", "/org/acme", "--profile", "nope")
    assert missing.code == 1
    assert missing.stderr == "Profile 'nope' does not exist.\n\nRun 'plinth profile get' to see available profiles.\n\n"
    from_env = run("rest", "get", "/org/acme", env={"PLINTH_PROFILE": "nope"})
    assert "specified by the PLINTH_PROFILE environment variable" in from_env.stderr


def test_profile_format_defaults_apply_and_flags_override(cli: PlinthCli, server: ServerProcess) -> None:
    run = bare(cli)
    run("profile", "create", "fmt", "--endpoint", server.url, "--token", server.key, "--output", "yaml")
    assert run("rest", "get", "/org/acme").stdout.startswith("kind: org\nname: acme\n")
    assert run("rest", "get", "/org/acme", "-o", "names").stdout == "acme\n"


def test_nothing_configured_uses_the_local_default_endpoint_and_fails_fast(tmp_path: Path) -> None:
    import socket

    import pytest

    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8080)) == 0:
            pytest.skip("something is listening on 127.0.0.1:8080 (a `make run` server?)")
    run = PlinthCli(home=tmp_path)("rest", "get", "/org/acme", "-o", "json", env={"PLINTH_TOKEN": "t"})
    assert run.code == 1
    error = json.loads(run.stderr)[0]
    # Nothing listens on 127.0.0.1:8080 in the test environment; the retries give up within seconds.
    assert error["code"] == "ECONNREFUSED"
    assert error["message"] == "connect ECONNREFUSED 127.0.0.1:8080"


def test_ensure_local_profile_only_when_no_profile_exists(tmp_path: Path) -> None:
    assert ensure_local_profile("http://127.0.0.1:8080", "key-1", "acme", config_dir=tmp_path) is True
    store = ProfileStore(tmp_path)
    local = store.load("local")
    assert (local.request["endpoint"], local.request["token"], local.context["org"]) == (
        "http://127.0.0.1:8080",
        "key-1",
        "acme",
    )
    assert store.default_name() == "local"
    assert ensure_local_profile("http://127.0.0.1:9999", "key-2", "other", config_dir=tmp_path) is False
    assert store.load("local").request["token"] == "key-1"


def test_serve_init_profile_saves_the_profile_it_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``plinth serve --init-profile dev`` saves ``dev`` (not ``local``), makes it the default, and says so."""
    config_home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    monkeypatch.delenv("PLINTH_HOME", raising=False)
    server = start_server(tmp_path / "data", extra_args=("--init-profile", "dev"))
    try:
        store = ProfileStore(config_home / "plinth")
        assert store.names() == ["dev"]
        assert store.default_name() == "dev"
        dev = store.load("dev")
        assert (dev.request["endpoint"], dev.request["token"], dev.context["org"]) == (server.url, server.key, "acme")
        assert f"Created the CLI profile 'dev' for {server.url}" in server.log_lines()
    finally:
        server.stop()


def test_serve_refuses_an_init_profile_name_the_store_cannot_hold(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="exited early") as failed:
        start_server(tmp_path / "data", extra_args=("--init-profile", "team/dev"))
    assert "--init-profile: invalid profile name 'team/dev'" in str(failed.value)
    assert not (tmp_path / "data" / "bootstrap-admin.key").exists()
