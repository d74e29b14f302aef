"""Profiles: named sets of endpoint, token, org, gvc and format defaults, one JSON file each.

Layout (mirrors the official CLI's, docs/cli.md, Profiles and settings)::

    <config dir>/profiles/<name>.json    mode 0600
    <config dir>/profiles/default        the default profile's bare name, no newline
    <config dir>, <config dir>/profiles  mode 0700

The config dir is resolved by ``plinth.cli.env.default_config_dir``. Which profile a run
uses: ``--profile``, else ``$PLINTH_PROFILE``, else the ``default`` file, else the only
profile when exactly one exists, else none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plinth.cli.errors import ProfileError

DEFAULT_ENDPOINT = "http://127.0.0.1:8080"
DEFAULT_FORMAT: dict[str, Any] = {"output": "text", "ts": "age", "max": 50, "color": True}
PROFILE_NAME_HINT = "Run 'plinth profile get' to see available profiles."


@dataclass
class Profile:
    """One profile as stored; ``request.token`` is a secret and is never printed."""

    name: str
    context: dict[str, Any] = field(default_factory=dict)
    request: dict[str, Any] = field(default_factory=dict)
    format: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "context": self.context, "request": self.request, "format": self.format}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Profile:
        return cls(
            name=str(data.get("name", "")),
            context=dict(data.get("context") or {}),
            request=dict(data.get("request") or {}),
            format=dict(data.get("format") or {}),
        )


class ProfileStore:
    """Reads and writes profiles under ``config_dir``; creates folders owner-only."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir
        self.folder = config_dir / "profiles"

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json"))

    def exists(self, name: str) -> bool:
        return self._path(name).is_file()

    def load(self, name: str) -> Profile:
        path = self._path(name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProfileError(f"Profile '{name}' does not exist.\n\n{PROFILE_NAME_HINT}") from None
        except (OSError, ValueError) as error:
            raise ProfileError(f"Profile '{name}' cannot be read ({path}): {error}") from error
        profile = Profile.from_json(data)
        profile.name = name
        return profile

    def save(self, profile: Profile) -> None:
        self._ensure_folders()
        path = self._path(profile.name)
        temporary = path.with_suffix(".json.tmp")
        # Created 0600 from the start, so the token is never readable by others, even briefly.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(profile.to_json(), handle, indent=2)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
        if self.default_name() is None:
            self.set_default(profile.name)

    def delete(self, name: str) -> None:
        path = self._path(name)
        if not path.is_file():
            raise ProfileError(f"Profile {name} does not exist")
        path.unlink()
        if self.default_name() == name:
            (self.folder / "default").unlink(missing_ok=True)

    def default_name(self) -> str | None:
        try:
            name = (self.folder / "default").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return name or None

    def set_default(self, name: str) -> None:
        if not self.exists(name):
            raise ProfileError(f"Profile {name} does not exist")
        self._ensure_folders()
        path = self.folder / "default"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(name)

    def select(self, flag: str | None, environ_name: str | None) -> Profile | None:
        """The profile a run uses (module docstring order); a named but missing one is an error."""
        if flag:
            return self.load(flag)
        if environ_name:
            if not self.exists(environ_name):
                raise ProfileError(
                    f"Profile '{environ_name}' does not exist.\n\n"
                    "The profile was specified by the PLINTH_PROFILE environment variable.\n\n"
                    "To fix this, either:\n"
                    "  - Update PLINTH_PROFILE to a valid profile name, or\n"
                    "  - Unset PLINTH_PROFILE and set a default profile with 'plinth profile set-default <name>'\n\n"
                    + PROFILE_NAME_HINT
                )
            return self.load(environ_name)
        default = self.default_name()
        if default:
            if not self.exists(default):
                raise ProfileError(
                    f"Profile '{default}' does not exist.\n\n"
                    f"It is named as the default in {self.folder / 'default'}.\n\n"
                    "To fix this, set another default with 'plinth profile set-default <name>'.\n\n" + PROFILE_NAME_HINT
                )
            return self.load(default)
        names = self.names()
        if len(names) == 1:
            return self.load(names[0])
        return None

    def _path(self, name: str) -> Path:
        if not valid_profile_name(name):
            raise ProfileError(f"Invalid profile name {name!r}")
        return self.folder / f"{name}.json"

    def _ensure_folders(self) -> None:
        for folder in (self.config_dir, self.folder):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(folder, 0o700)


def new_profile(
    name: str, endpoint: str | None = None, token: str | None = None, org: str | None = None, gvc: str | None = None
) -> Profile:
    """A profile with the defaults ``profile create`` writes."""
    context: dict[str, Any] = {}
    if org:
        context["org"] = org
    if gvc:
        context["gvc"] = gvc
    request: dict[str, Any] = {"endpoint": endpoint or DEFAULT_ENDPOINT, "insecure": False, "timeout": 30}
    if token:
        request["token"] = token
    return Profile(name=name, context=context, request=request, format=dict(DEFAULT_FORMAT))


def valid_profile_name(name: str) -> bool:
    """A profile name is a file name in the profiles folder: not empty, no ``/``, no leading dot."""
    return bool(name) and "/" not in name and not name.startswith(".")


def ensure_local_profile(
    endpoint: str, token: str, org: str, config_dir: Path | None = None, name: str = "local"
) -> bool:
    """Create the profile ``name`` (made the default) for a server ``plinth serve --init-profile NAME``
    started (``make run``: ``local``).

    Only when no profile exists yet, so a user's own setup is never touched. Returns whether
    it created the profile. ``config_dir`` defaults to the process environment's.
    """
    if config_dir is None:
        from plinth.cli.env import default_config_dir

        config_dir = default_config_dir(os.environ)
    store = ProfileStore(config_dir)
    if store.names():
        return False
    store.save(new_profile(name, endpoint=endpoint, token=token, org=org))
    store.set_default(name)
    return True
