"""``/metrics``: the Prometheus text format, for every worker process of this server.

The metrics themselves are defined in ``plinth.metrics``; this module labels requests with their
route template (:func:`route_of`), records them (:class:`RequestMeter`), and answers scrapes
(:func:`scrape`), which add up the values of every process of the server (the multiprocess
directory ``plinth serve`` sets up) or, without one, of this process.

Who may scrape (docs/operations.md, "Metrics") is a setting: by default a scrape must carry
``Authorization: Bearer <token>``, the token being the contents of ``--metrics-token-file``; with
no token configured ``/metrics`` answers 401 saying how to enable it. ``--metrics-public``
serves it to anyone who can reach the port. Not an API key: Prometheus then holds a credential
that can read counts, and nothing else.
"""

from __future__ import annotations

import functools
import hmac
import os
import re
from pathlib import Path

from prometheus_client import REGISTRY as PROCESS_REGISTRY
from prometheus_client import CollectorRegistry, generate_latest, multiprocess

from plinth.engine.requestinfo import RequestInfo, parse_path
from plinth.errors import APIError, Unauthorized
from plinth.kinds import REGISTRY
from plinth.metrics import HTTP_REQUESTS, HistogramTally, flush, histogram_tally
from plinth.server import exporters, system

PATH = "/metrics"
#: The classic text format, which every Prometheus reads (the names and labels need no escaping).
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
#: The route of a path no route serves (a typo, a scanner): one label value for them all.
OTHER = "other"
#: Methods labelled as themselves; any other is ``OTHER`` (httptools accepts dozens).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: Actions every kind has (``kinds/base.py``, ``KindAction``), as their paths read.
COMMON_ACTIONS = frozenset({"-query", "-eventlog", "-accessreport", "-schema/permissions"})
#: A live gauge's file in the multiprocess directory: ``gauge_livesum_<pid>.db``.
_LIVE_FILE = re.compile(r"gauge_live\w*?_(\d+)\.db$")
NOT_CONFIGURED = (
    "Metrics need a token: start the server with --metrics-token-file FILE (Prometheus sends its "
    "contents as a bearer token), or with --metrics-public to serve them without one"
)


def _action_route(info: RequestInfo) -> str | None:
    """The template of the action part of a path (``-command/{id}``), or ``None`` when no
    action the kind declares (or every kind has) matches it."""
    assert info.action is not None
    segments = [("" if info.sub else "-") + info.action, *info.action_args]
    shown = "/".join(segments)
    if shown in COMMON_ACTIONS:
        return shown
    kind = REGISTRY.get(info.kind)
    for action in kind.actions if kind is not None else ():
        declared = action.path.split("/")
        if action.on_item != info.is_item or len(declared) != len(segments):
            continue
        if all(d == s or (d.startswith("{") and d.endswith("}")) for d, s in zip(declared, segments, strict=True)):
            return action.path
    return None


@functools.lru_cache(maxsize=10_000)
def route_of(path: str) -> str:
    """The route template of ``path``: names become ``{org}``, ``{gvc}``, ``{name}``, a
    declared action's parameters stay as declared; ``other`` for a path no route serves."""
    if path in system.OPEN_PATHS or path == PATH:
        return path
    prefix = ""
    exporter = exporters.exporter_of(path)
    if exporter is not None:
        prefix = path[: len(path) - len(exporter[1])]
        path = exporter[1]
    try:
        info = parse_path(path)
    except APIError:
        return OTHER
    if info.kind not in REGISTRY:
        return OTHER
    if info.org is None:
        route = "/org"
    elif info.kind == "org" and info.name is not None:
        route = "/org/{org}"
    else:
        route = "/org/{org}" + ("/gvc/{gvc}" if info.gvc is not None else "") + f"/{info.kind}"
        route += "/{name}" if info.is_item else ""
    if info.action is not None:
        action = _action_route(info)
        if action is None:
            return OTHER
        route += "/" + action
    return prefix + route


def status_class(status: int) -> str:
    return f"{status // 100}xx"


class RequestMeter:
    """Tallies each answered request (``plinth.metrics.HistogramTally``). The tally of a
    ``(method, path, status)`` is looked up once and kept: a dictionary lookup per request
    instead of labelling the path anew (the label sets are bounded: methods x route templates
    x status classes; the table of paths is too)."""

    def __init__(self) -> None:
        self._tallies: dict[tuple[str, str, int], HistogramTally] = {}

    def record(self, method: str, path: str, status: int, seconds: float) -> None:
        key = (method, path, status)
        tally = self._tallies.get(key)
        if tally is None:
            if len(self._tallies) >= 10_000:
                self._tallies.clear()
            shown = method if method in METHODS else OTHER
            tally = self._tallies[key] = histogram_tally(HTTP_REQUESTS, shown, route_of(path), status_class(status))
        tally.observe(seconds)


def allowed(token: str | None, expected: str | None, public: bool) -> None:
    """Raise :class:`Unauthorized` unless this scrape may read the metrics."""
    if public:
        return
    if expected is None:
        raise Unauthorized(NOT_CONFIGURED)
    if token is None or not hmac.compare_digest(token.encode(), expected.encode()):
        raise Unauthorized("Send the metrics token: 'Authorization: Bearer <contents of --metrics-token-file>'")


def scrape() -> bytes:
    """Every process's metrics, added up, in the Prometheus text format (this process's
    tallies flushed first; the others' are at most ``plinth.metrics.FLUSH_S`` behind)."""
    flush()
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not directory:
        return generate_latest(PROCESS_REGISTRY)
    forget_dead_workers(Path(directory))
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=directory)
    return generate_latest(registry)


def forget_dead_workers(directory: Path) -> None:
    """Drop the live gauges (open connections, watchers) of worker processes that are gone: a
    worker that crashed, and that uvicorn replaced, must not count its last connections for
    ever. Their counters stay: a total never goes back."""
    for path in directory.glob("gauge_live*.db"):
        found = _LIVE_FILE.search(path.name)
        if found is None:
            continue
        pid = int(found.group(1))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, str(directory))
        except PermissionError:
            pass  # alive, and someone else's: not ours to judge


def process_stopping() -> None:
    """This process stops: its tallies go to the shared values, and its live gauges leave the
    sum now rather than at the next scrape."""
    flush()
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        multiprocess.mark_process_dead(os.getpid(), directory)
