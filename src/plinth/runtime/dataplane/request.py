"""A data-plane session's request: its first text message (docs/runtime.md, "The data plane").

The official CLI sends ``{requestVersion, token, org, gvc, pod, container, stdin, tty, quiet,
command?, shell?, width?, height?, writeReceivedBytes?}`` (``terminal-server/terminal-server.js``
of 3.10.1); cpln-py sends ``{token, org, gvc, pod, container, command}``, ``command`` a string it
split on spaces. ``command`` runs as argv, with no shell; ``shell`` is split as a shell would
split that line, and run the same way.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import orjson

#: The largest terminal width or height taken (anything else keeps the previous size).
MAX_SIZE = 10_000


class BadRequest(ValueError):
    """The first message is not a request this data plane can run."""


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """What to run where: ``pod`` is the replica, ``container`` ``None`` for its first;
    ``shell`` says ``argv`` came from a shell line (audited as ``connect``); ``count_bytes`` is
    the CLI's ``writeReceivedBytes`` (a ``cp`` upload)."""

    token: str
    org: str
    gvc: str
    pod: str
    container: str | None
    argv: tuple[str, ...]
    shell: bool
    stdin: bool
    tty: bool
    width: int
    height: int
    count_bytes: bool


def _name(doc: dict[str, Any], key: str, required: bool = True) -> str:
    value = doc.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value or "/" in value or len(value) > 253:
        raise BadRequest(f"'{key}' must be a name")
    return value


def size_field(doc: dict[str, Any], key: str, default: int) -> int:
    """A terminal dimension, or ``default`` when it is missing or not a sensible number."""
    value = doc.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_SIZE:
        return value
    return default


def parse_request(text: str) -> SessionRequest:
    """The session's request from its first message; :class:`BadRequest` saying what is wrong."""
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise BadRequest("the first message must be the session's JSON request") from None
    if not isinstance(doc, dict):
        raise BadRequest("the first message must be a JSON object")
    token = doc.get("token")
    if not isinstance(token, str) or not token:
        raise BadRequest("'token' is missing")
    token = token.removeprefix("Bearer ")
    command, shell = doc.get("command"), doc.get("shell")
    if isinstance(command, str):
        command = command.split()  # cpln-py sends a string split on spaces
    if command:
        if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
            raise BadRequest("'command' must be a list of strings")
        argv, is_shell = tuple(command), False
    elif isinstance(shell, str) and shell.strip():
        try:
            argv, is_shell = tuple(shlex.split(shell)), True
        except ValueError as exc:
            raise BadRequest(f"'shell' cannot be split: {exc}") from None
    else:
        raise BadRequest("neither 'command' nor 'shell' says what to run")
    tty = doc.get("tty") is True
    return SessionRequest(
        token=token,
        org=_name(doc, "org"),
        gvc=_name(doc, "gvc"),
        pod=_name(doc, "pod"),
        container=_name(doc, "container", required=False) or None,
        argv=argv,
        shell=is_shell,
        stdin=doc.get("stdin") is True or tty,
        tty=tty,
        width=size_field(doc, "width", 80),
        height=size_field(doc, "height", 24),
        count_bytes=doc.get("writeReceivedBytes") is True,
    )
