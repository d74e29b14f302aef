"""Where a run's endpoint, token and format defaults come from (issue 4, docs/cli.md, Profiles and settings).

Precedence, highest first, each level skipped when empty:

- token:    ``--token``, ``$PLINTH_TOKEN``, the profile's ``request.token``, none;
- endpoint: ``--endpoint``, ``$PLINTH_ENDPOINT``, the profile's ``request.endpoint``,
  ``http://127.0.0.1:8080``;
- output, color, ts, max: the flag, the profile's ``format``, the built-in default.

A run without a token is allowed (the official CLI refuses it): the server answers 401 if it
needs one, which is the clearer message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plinth.cli.env import CliEnv
from plinth.cli.profiles import DEFAULT_ENDPOINT, Profile, ProfileStore


@dataclass(frozen=True, slots=True)
class RequestFlags:
    """The request and format flags as parsed; ``None`` means "not given"."""

    profile: str | None = None
    token: str | None = None
    endpoint: str | None = None
    insecure: bool | None = None
    output: str | None = None
    color: bool | None = None
    ts: str | None = None
    max: int | None = None
    verbose: bool = False
    debug: bool = False


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved values a run uses, with where the token and endpoint came from (for ``-v``)."""

    endpoint: str
    token: str | None
    insecure: bool
    timeout: float | None
    output: str
    output_given: str | None
    color: bool
    ts: str | None
    max: int
    verbose: bool
    debug: bool
    profile: Profile | None
    notes: tuple[str, ...] = ()


def resolve(env: CliEnv, flags: RequestFlags) -> Settings:
    store = ProfileStore(env.config_dir)
    profile = store.select(flags.profile, env.environ.get("PLINTH_PROFILE") or None)
    request: dict[str, Any] = profile.request if profile else {}
    formats: dict[str, Any] = profile.format if profile else {}
    notes: list[str] = []
    if not flags.profile and env.environ.get("PLINTH_PROFILE"):
        notes.append(f'Using profile "{env.environ["PLINTH_PROFILE"]}" from environment variable "PLINTH_PROFILE"')

    token = flags.token or env.environ.get("PLINTH_TOKEN") or request.get("token") or None
    if flags.token:
        notes.append('Using token from argument "--token"')
    elif env.environ.get("PLINTH_TOKEN"):
        notes.append('Using token from environment variable "PLINTH_TOKEN"')
    elif token:
        notes.append("Using token from the profile")

    endpoint = flags.endpoint or env.environ.get("PLINTH_ENDPOINT") or request.get("endpoint") or DEFAULT_ENDPOINT
    if not flags.endpoint and env.environ.get("PLINTH_ENDPOINT"):
        notes.append(f'Using endpoint "{endpoint}" from environment variable "PLINTH_ENDPOINT"')

    insecure = flags.insecure if flags.insecure is not None else bool(request.get("insecure", False))
    timeout = request.get("timeout")
    color_default = formats.get("color", True)
    return Settings(
        endpoint=endpoint,
        token=token,
        insecure=insecure,
        timeout=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else 30.0,
        output=flags.output or formats.get("output") or "text",
        output_given=flags.output,
        color=(flags.color if flags.color is not None else bool(color_default)) and env.is_terminal,
        ts=flags.ts or formats.get("ts") or None,
        max=flags.max if flags.max is not None else int(formats.get("max", 50)),
        verbose=flags.verbose or bool(env.environ.get("PLINTH_DEBUG")),
        debug=flags.debug,
        profile=profile,
        notes=tuple(notes),
    )


def context_value(env: CliEnv, settings: Settings, flag: str | None, name: str) -> str | None:
    """``--org``/``--gvc`` (``name``): the flag, else ``$PLINTH_ORG``/``$PLINTH_GVC``, else the
    profile's ``context``; ``None`` when none of them says."""
    if flag:
        return flag
    from_env = env.environ.get(f"PLINTH_{name.upper()}")
    if from_env:
        return from_env
    value = settings.profile.context.get(name) if settings.profile is not None else None
    return str(value) if value else None
