"""The ``-v`` log lines and the ``--debug`` wire transcript, on standard error (docs/cli.md, Debugging).

Every entry starts with the local time as ``toLocaleTimeString()`` prints it in en-US
(``2:49:26 PM``). The transcript shows each attempt: request line, host, the headers the
client set (the token masked to its first and last three characters), the JSON body, then
the status, the response headers lower-cased as received, and the body.
"""

from __future__ import annotations

from datetime import datetime
from typing import IO, Any

from plinth.client import PreparedRequest, Response
from plinth.client.jsvalues import parse_json, stringify

HIDDEN_HEADERS = frozenset({"content-type", "content-length"})


def clock_text(moment: datetime) -> str:
    local = moment.astimezone()
    hour = local.hour % 12 or 12
    return f"{hour}:{local:%M:%S} {'AM' if local.hour < 12 else 'PM'}"


def mask_token(value: str) -> str:
    token = value.split("Bearer ", 1)[1] if value.startswith("Bearer ") else value
    return f"{token[:3]}...{token[-3:]}"


class Transcript:
    """Writes log lines and wire entries to ``stream`` with the time from ``now``."""

    def __init__(self, stream: IO[str], now: Any, verbose: bool, wire: bool) -> None:
        self.stream = stream
        self.now = now
        self.verbose = verbose
        self.wire = wire

    def log(self, message: str) -> None:
        if self.verbose:
            self._entry(message)

    def request(self, prepared: PreparedRequest) -> None:
        if not self.wire:
            return
        from urllib.parse import urlsplit

        headers = []
        for name, value in prepared.headers:
            if name.lower() in HIDDEN_HEADERS or not value:
                continue
            headers.append(f"{name}: {mask_token(value) if name.lower() == 'authorization' else value}")
        body = stringify(prepared.json_body, indent=2) if prepared.json_body not in (None, "", 0, False) else ""
        self._entry(
            f">>>>\n> {prepared.method} {prepared.path}\n> Host: {urlsplit(prepared.url).hostname}\n> "
            + "\n> ".join(headers)
            + f"\n\n{body}\n>>>>>>>"
        )

    def response(self, prepared: PreparedRequest, response: Response) -> None:
        if not self.wire:
            return
        headers = "\n< ".join(f"{name}: {value}" for name, value in response.headers)
        self._entry(f"<<<<\n< {response.status} {response.reason}\n< {headers}\n\n{_body_text(response)}\n<<<<<<<<")

    def _entry(self, message: str) -> None:
        self.stream.write(f"{clock_text(self.now())} {message}\n")
        self.stream.flush()


def _body_text(response: Response) -> str:
    if not response.body:
        return ""
    text = response.text
    try:
        parsed = parse_json(text)
    except ValueError:
        return text
    if isinstance(parsed, dict | list):
        return stringify(parsed, indent=2)
    # Like axios' parsed ``data``: a JSON string shows unquoted, a bare number or boolean not at all.
    return parsed if isinstance(parsed, str) else ""
