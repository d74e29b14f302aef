"""``plinth profile create|update|get|delete|set-default`` (the official CLI's, docs/cli.md, Profiles and settings).

``create`` and ``update`` are the same command (the official CLI aliases them): options given
are stored, others keep their value (or the default for a new profile). Changing ``--org``
without ``--gvc`` clears the stored gvc, which belonged to the old org.
"""

from __future__ import annotations

from typing import Any

import click

from plinth.cli.errors import ProfileError
from plinth.cli.profiles import Profile, ProfileStore, new_profile
from plinth.cli.state import RunState

MASKED_TOKEN = "******"


def _store() -> tuple[RunState, ProfileStore]:
    state: RunState = click.get_current_context().find_root().obj
    return state, ProfileStore(state.env.config_dir)


def _update(name: str, options: dict[str, Any]) -> None:
    state, store = _store()
    profile = store.load(name) if store.exists(name) else new_profile(name)
    if options["org"] is not None:
        profile.context["org"] = options["org"]
        if options["gvc"] is None:
            profile.context["gvc"] = ""
    if options["gvc"] is not None:
        profile.context["gvc"] = options["gvc"]
    for key in ("token", "endpoint", "insecure"):
        if options[key] is not None:
            profile.request[key] = options[key]
    for option, key in (("output", "output"), ("color", "color"), ("ts", "ts"), ("max_items", "max")):
        if options[option] is not None:
            profile.format[key] = options[option]
    if "color" not in profile.format or (options["color"] is None and not store.exists(name)):
        # A profile made from a script should not colour output by default (the official CLI does the same).
        profile.format["color"] = state.env.is_terminal
    store.save(profile)
    if options["make_default"]:
        store.set_default(name)


def profile_options(function: Any) -> Any:
    from plinth.cli.output import FORMAT_NAMES

    decorators = [
        click.argument("name"),
        click.option("--default", "make_default", is_flag=True, help="Make this the default profile"),
        click.option("--org", help="Default org"),
        click.option("--gvc", help="Default gvc"),
        click.option("--token", help="Bearer token (a service account key)"),
        click.option("--endpoint", help="API endpoint, e.g. http://127.0.0.1:8080"),
        click.option("--insecure/--secure", "-k", "insecure", default=None, help="Accept self-signed certificates"),
        click.option("--output", "-o", type=click.Choice(FORMAT_NAMES), help="Default output format"),
        click.option("--color/--no-color", default=None, help="Colour output on a terminal"),
        click.option("--ts", type=click.Choice(("iso", "local", "age")), help="Default timestamp rendering"),
        click.option("--max", "max_items", type=int, help="Default --max"),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


@click.group("profile", help="Manage connection profiles")
def profile_group() -> None:
    pass


@profile_group.command("update", help="Create or update a profile")
@profile_options
def update_command(name: str, **options: Any) -> None:
    _update(name, options)


@profile_group.command("create", help="Create or update a profile (same as update)")
@profile_options
def create_command(name: str, **options: Any) -> None:
    _update(name, options)


@profile_group.command("get", help="Show profiles ('.' means the default one)")
@click.argument("names", nargs=-1)
@click.option("--output", "-o", type=click.Choice(("text", "json", "yaml")), default="text")
def get_command(names: tuple[str, ...], output: str) -> None:
    state, store = _store()
    default = store.default_name()
    wanted = [default if n == "." else n for n in names] or store.names()
    profiles = [store.load(name) for name in wanted if name]
    active = _active_name(state, store)
    state.env.stdout.write(render_profiles(profiles, default, active, output) + "\n")


def _active_name(state: RunState, store: ProfileStore) -> str | None:
    try:
        selected = store.select(None, state.env.environ.get("PLINTH_PROFILE") or None)
    except ProfileError:
        return None
    return selected.name if selected else None


def render_profiles(profiles: list[Profile], default: str | None, active: str | None, output: str) -> str:
    if output in ("json", "yaml"):
        shown = []
        for profile in profiles:
            data = profile.to_json()
            if data["request"].get("token"):
                data["request"] = {**data["request"], "token": MASKED_TOKEN}
            shown.append(data)
        from plinth.cli.output.base import RenderContext
        from plinth.cli.output.structured import to_json, to_yaml

        return (to_json if output == "json" else to_yaml)(shown, RenderContext())
    from plinth.cli.output.table import draw

    rows = [["PROFILE", "DEFAULT", "ACTIVE", "ENDPOINT", "ORG", "GVC", "OUTPUT", "TIMESTAMPS"]]
    for profile in profiles:
        rows.append(
            [
                profile.name,
                "*" if profile.name == default else "",
                "*" if profile.name == active else "",
                str(profile.request.get("endpoint", "")),
                str(profile.context.get("org", "")),
                str(profile.context.get("gvc", "")),
                str(profile.format.get("output", "")),
                str(profile.format.get("ts", "")),
            ]
        )
    return draw(rows)


@profile_group.command("delete", help="Delete profiles")
@click.argument("names", nargs=-1, required=True)
def delete_command(names: tuple[str, ...]) -> None:
    _, store = _store()
    for name in names:
        store.delete(name)


@profile_group.command("set-default", help="Make a profile the default")
@click.argument("name")
def set_default_command(name: str) -> None:
    _, store = _store()
    store.set_default(name)
