"""Running a ``plinth rest`` verb: options in, one request (or a few) out, the answer printed.

``run_rest`` is the whole behaviour of the seven subcommands; ``commands/rest.py`` only declares their
options. Failures are raised, never printed: ``main`` reports them (the ``RunState`` tells it
which ``-o`` the user asked for).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plinth import __version__
from plinth.cli.body import load_document, parse_headers, read_text
from plinth.cli.debug import Transcript
from plinth.cli.errors import CliError, InputError
from plinth.cli.output import get_formatter
from plinth.cli.output.base import Formatter, RenderContext
from plinth.cli.settings import RequestFlags, Settings, resolve
from plinth.cli.state import RunState
from plinth.client import ApiClient, RetryPolicy
from plinth.errors import NotFound

NO_INPUT_FILE = "No input file provided"
MORE_RECORDS = "Note: More records are available. Showing first {n} results{default}. Use --max 0 to fetch all records."


@dataclass(frozen=True, slots=True)
class RestCall:
    """One ``plinth rest <verb> <path>`` invocation as parsed."""

    verb: str
    path: str
    flags: RequestFlags
    file: str | None = None
    headers: tuple[str, ...] = ()
    #: ``get --watch`` (``all``: the current items first) or ``--watch-only`` (``only``).
    watch: str | None = None


def user_agent() -> str:
    import platform

    return f"plinth-cli {__version__}/ python {platform.python_version()}"


def open_client(state: RunState, settings: Settings) -> ApiClient:
    """The run's client; ``-v`` and ``--debug`` lines go to the run's transcript."""
    return connector(state, settings)()


def connector(state: RunState, settings: Settings) -> Callable[[], ApiClient]:
    """A factory of clients for the run (one per thread of ``plinth apply``), all of one session
    and all writing to one transcript, which is set up (``Starting session``) at once."""
    env = state.env
    transcript = Transcript(env.stderr, env.now, settings.verbose, settings.debug)
    state.transcript = transcript
    session_id = str(uuid.uuid4())
    transcript.log(f"Starting session {session_id}")
    for note in settings.notes:
        transcript.log(note)

    def connect() -> ApiClient:
        client = env.make_client(
            endpoint=settings.endpoint,
            token=settings.token,
            insecure=settings.insecure,
            timeout=settings.timeout,
            user_agent=user_agent(),
            retry=RetryPolicy(),
            sleep=env.sleep,
            session_id=session_id,
        )
        client.on_request.append(transcript.request)
        client.on_response.append(transcript.response)
        client.on_request.append(lambda prepared: _log_retry(transcript, prepared))
        return client

    return connect


def _log_retry(transcript: Transcript, prepared: Any) -> None:
    if prepared.attempt > 1:
        transcript.log(f"Retrying {prepared.method} {prepared.path} (attempt {prepared.attempt})")


def run_rest(state: RunState, call: RestCall) -> None:
    state.error_output = call.flags.output
    settings = resolve(state.env, call.flags)
    state.color = settings.color
    formatter = get_formatter(settings.output)
    headers = parse_headers(call.headers)
    client = open_client(state, settings)
    try:
        more = False
        if call.watch is not None:
            from plinth.cli.rest_watch import EventPrinter, run_watch

            printer = EventPrinter(settings.output, render_context(state, settings), state.env.stdout)
            run_watch(state, client, call.path, headers, printer, initial=call.watch == "all")
            return
        if call.verb == "get":
            doc = client.request("GET", call.path, extra_headers=headers).json()
            doc, more = collect_pages(client, doc, settings.max, headers)
        elif call.verb in ("post", "put"):
            body = _load_body(state, call, required=False)
            doc = client.request(call.verb.upper(), call.path, body, headers).json()
        elif call.verb == "patch":
            doc = client.request("PATCH", call.path, _load_body(state, call, required=True), headers).json()
        elif call.verb == "create":
            doc = _create(client, call.path, _load_body(state, call, required=True), headers)
        elif call.verb == "delete":
            client.request("DELETE", call.path, extra_headers=headers)
            state.env.stdout.write("\n")
            return
        elif call.verb == "edit":
            from plinth.cli.editor import run_edit

            edited = run_edit(state.env, client, call.path, headers, settings)
            if edited is None:
                return
            doc = edited
        else:  # pragma: no cover - click only offers the verbs above
            raise CliError(f"unknown verb {call.verb}")
        write_document(state, client, formatter, doc, settings)
        if more:
            note_more(state, settings, call.flags)
    finally:
        client.close()


def _load_body(state: RunState, call: RestCall, required: bool) -> Any:
    if not call.file:
        if required:
            raise InputError(NO_INPUT_FILE)
        return None
    text = read_text(call.file, state.env.stdin)
    return load_document(text, "<stdin>" if call.file == "-" else call.file)


def _create(client: ApiClient, path: str, body: Any, headers: list[tuple[str, str]]) -> Any:
    """POST, then GET the ``Location`` the server named (resolved against the endpoint).

    Without a ``Location`` the official CLI GETs the bare endpoint; Plinth prints the POST's
    own answer instead, which is the more useful of the two.
    """
    created = client.request("POST", path, body, headers)
    location = created.header("Location")
    if not location:
        return created.json()
    return client.request("GET", location).json()


def next_link(page: Any) -> str | None:
    links = page.get("links") if isinstance(page, dict) else None
    for link in links if isinstance(links, list) else []:
        if isinstance(link, dict) and link.get("rel") == "next" and isinstance(link.get("href"), str):
            return str(link["href"])
    return None


def collect_pages(client: ApiClient, doc: Any, limit: int, headers: list[tuple[str, str]]) -> tuple[Any, bool]:
    """Follow ``next`` links until ``limit`` items (all of them when ``limit`` < 1).

    Returns the merged list and whether more items exist than were kept. A single page is
    returned untouched unless it holds more than ``limit`` items; a merged list loses its
    ``next`` link (the pages it points at are already in it).
    """
    is_list = isinstance(doc, dict) and doc.get("kind") in ("list", "queryresult")
    if not (is_list and isinstance(doc.get("items"), list)):
        return doc, False
    items = list(doc["items"])
    page, pages, seen = doc, 1, set()
    while not (limit >= 1 and len(items) >= limit):
        link = next_link(page)
        if link is None or link in seen:
            break
        seen.add(link)
        page = client.request("GET", link, extra_headers=headers).json()
        pages += 1
        items.extend(page.get("items") or [] if isinstance(page, dict) else [])
    more = limit >= 1 and (len(items) > limit or next_link(page) is not None)
    if pages == 1 and not (limit >= 1 and len(items) > limit):
        return doc, more
    merged = dict(doc)
    merged["items"] = items[:limit] if limit >= 1 else items
    if pages > 1 and isinstance(doc.get("links"), list):
        merged["links"] = [link for link in doc["links"] if not (isinstance(link, dict) and link.get("rel") == "next")]
    return merged, more


def render_context(state: RunState, settings: Settings) -> RenderContext:
    from plinth.cli.output.timestamps import locale_from_environ

    environ = state.env.environ
    return RenderContext(
        color=settings.color,
        ts=settings.ts,
        now=state.env.now(),
        tz=environ.get("TZ"),
        locale=locale_from_environ(environ),
    )


def write_document(state: RunState, client: ApiClient, formatter: Formatter, doc: Any, settings: Settings) -> None:
    """Render ``doc`` (or, for tf/crd, what its exporter returns) and print it with a newline."""
    ctx = render_context(state, settings)
    if formatter.export_service is not None:
        exported = fetch_export(client, doc, formatter.export_service)
        text = "" if exported is None else formatter.render(exported, ctx)
    elif isinstance(doc, str):
        text = doc
    elif doc is None:
        text = ""
    else:
        text = formatter.render(doc, ctx)
    state.env.stdout.write(text + "\n")
    state.env.stdout.flush()


def self_link(doc: Any) -> str:
    links = doc.get("links") if isinstance(doc, dict) else None
    if not isinstance(links, list):
        raise CliError("Cannot export: the response has no links (only API items and lists can be exported)")
    for link in links:
        if isinstance(link, dict) and link.get("rel") == "self" and isinstance(link.get("href"), str):
            return str(link["href"])
    raise CliError("Cannot export: the response has no self link")


def fetch_export(client: ApiClient, doc: Any, service: str) -> Any:
    """GET ``{exporter}{self link}``, the exporter being named by ``/discovery`` (docs/cli.md, Output formats)."""
    link = self_link(doc)
    base = client.endpoint
    try:
        discovery = client.request("GET", "/discovery", authenticated=False, notify=False).json()
    except NotFound:
        discovery = None  # a server without discovery serves its exporters itself
    endpoints = discovery.get("endpoints") if isinstance(discovery, dict) else None
    if isinstance(endpoints, dict) and isinstance(endpoints.get(service), str):
        base = endpoints[service]
    return client.request("GET", link, base=base).json()


def note_more(state: RunState, settings: Settings, flags: RequestFlags) -> None:
    from plinth.cli.output.color import YELLOW, paint

    default = " (default)" if flags.max is None else ""
    note = MORE_RECORDS.format(n=settings.max, default=default)
    state.env.stderr.write((paint(note, YELLOW) if settings.color else note) + "\n")
