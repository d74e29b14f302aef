"""``plinth rest get <list path> --watch`` (``-w``) and ``--watch-only``: the server's watch
stream (docs/watch.md) printed a change at a time, until Ctrl-C (exit 0).

- ``--watch`` starts with the current items (``sendInitialEvents=true``, each printed as
  ``ADDED``); ``--watch-only`` starts now.
- Output: ``text`` is one table row per change, the event first, then the kind's columns;
  ``json`` (and ``json-slim``) one JSON object a line, ``{"type", "resourceVersion", "object"}``;
  ``yaml`` (and ``yaml-slim``) one YAML document per change; ``names`` the event and the name.
  ``tf`` and ``crd`` have no stream form.
- A dropped connection, a server shutting down or a cut-off for reading too slowly is
  resumed from the last version received (an event's or a bookmark's), so nothing is printed
  twice or missed; when the server no longer holds that version (410) the watch starts over
  from the current items, saying so on standard error. A revoked key or a lost right (401,
  403) ends it with the error, as any request would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlencode

from plinth.cli.errors import InputError
from plinth.cli.output.base import RenderContext
from plinth.cli.state import RunState
from plinth.client import ApiClient
from plinth.client.errors import TransportError
from plinth.errors import APIError

STREAM_FORMATS = ("text", "json", "json-slim", "yaml", "yaml-slim", "names")
#: Errors in an ERROR event after which the watch resumes (the server shut down, the stream fell
#: behind) rather than stops.
RESUMABLE = frozenset({"unavailable", "watch_too_slow"})
#: Seconds between attempts to resume, doubling up to the last.
RESUME_WAITS = (0.2, 0.5, 1.0, 2.0, 5.0)
LIST_AGAIN = "list_again"
START_OVER = "The server no longer holds the last version seen: watching again from the current items.\n"


class ResumeFromScratch(Exception):
    """The server no longer holds the version the watch would resume from."""


class EventPrinter:
    """Prints each change in the chosen ``-o`` format (see the module docstring)."""

    def __init__(self, output: str, ctx: RenderContext, out: IO[str]):
        if output not in STREAM_FORMATS:
            raise InputError(f"--watch prints {', '.join(STREAM_FORMATS)}; not {output}")
        self._output = output
        self._ctx = ctx
        self._out = out
        self._table: Any = None

    def change(self, event: dict[str, Any]) -> None:
        item = event.get("object")
        kind, fmt = str(item.get("kind", "")) if isinstance(item, dict) else "", self._output
        if fmt == "text":
            from plinth.cli.output import table, text

            if self._table is None:
                border = table.NORC if self._ctx.color else table.RAMAC
                self._table = table.StreamedTable(text.watch_header(kind), border)
            self._write(self._table.row(text.watch_row(kind, event["type"], item, self._ctx)))
        elif fmt == "names":
            name = item.get("name", "") if isinstance(item, dict) else ""
            self._write(f"{event['type']} {name}\n")
        else:
            from plinth.cli.output.keyorder import sort_deep
            from plinth.cli.output.structured import slim
            from plinth.client.jsvalues import stringify

            obj = sort_deep(slim(item) if fmt.endswith("-slim") else item)
            shown = {"type": event["type"], "resourceVersion": event.get("resourceVersion"), "object": obj}
            if fmt.startswith("json"):
                self._write(stringify(shown) + "\n")
            else:
                from plinth.cli.output import jsyaml

                self._write("---\n" + jsyaml.dump(shown))

    def end(self) -> None:
        if self._table is not None:
            self._write(self._table.end())

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()


def watch_path(path: str, version: str | None, initial: bool) -> str:
    """``path`` with the watch's parameters added to any it has."""
    params = {"watch": "true"}
    if version is not None:
        params["resourceVersion"] = version
    elif initial:
        params["sendInitialEvents"] = "true"
    return path + ("&" if "?" in path else "?") + urlencode(params)


def events(client: ApiClient, path: str, headers: list[tuple[str, str]]) -> Iterator[dict[str, Any]]:
    prepared = client.prepare("GET", path, None, [("Accept", "application/x-ndjson"), *headers])
    for line in client.stream_lines(prepared):
        if line.strip():
            yield json.loads(line)


def run_watch(
    state: RunState,
    client: ApiClient,
    path: str,
    headers: list[tuple[str, str]],
    printer: EventPrinter,
    initial: bool,
) -> None:
    """Print changes until Ctrl-C, resuming as the module docstring says."""
    version: str | None = None
    failures = 0
    try:
        while True:
            try:
                for event in events(client, watch_path(path, version, initial), headers):
                    kind = event.get("type")
                    if kind == "ERROR":
                        _ended_with(event.get("object"))
                    version = str(event.get("resourceVersion", version))
                    failures = 0
                    if kind != "BOOKMARK":
                        printer.change(event)
            except (TransportError, _Resumable):
                pass
            except APIError as error:
                if error.status == 410:
                    state.env.stderr.write(START_OVER)
                    version, initial = None, True
                elif error.status != 503:  # 503: the server is starting or stopping; try again
                    raise
            except ResumeFromScratch:
                state.env.stderr.write(START_OVER)
                version, initial = None, True
            state.env.sleep(RESUME_WAITS[min(failures, len(RESUME_WAITS) - 1)])
            failures += 1
    except KeyboardInterrupt:
        pass
    finally:
        printer.end()


class _Resumable(Exception):
    pass


def _ended_with(body: Any) -> None:
    """What an ERROR event means for the watch: resume, start over, or stop with the error."""
    code = body.get("code") if isinstance(body, dict) else None
    if code in RESUMABLE:
        raise _Resumable(code)
    if code == LIST_AGAIN:
        raise ResumeFromScratch()
    from plinth.client.errors import Response, error_from_response

    status = int(body.get("status", 500)) if isinstance(body, dict) else 500
    raise error_from_response(Response(status, "", [], json.dumps(body).encode()))
