"""What should run, as the public API says: a cache of an org's GVCs, workloads, domains
(for the gateway), locations (for ``locationQuery`` placements) and secrets (their GET form,
without values: a new ``version`` means a new value to reveal), kept by
list and watch over HTTP, the way a kubelet's informer keeps the Kubernetes API's objects.

The controller is a *client* of Plinth: it holds a key (a Bearer token) and reads
``GET /org/{org}/gvc``, ``GET /org/{org}/workload`` (a GVC-scoped kind listed at the org
reads it across every GVC) and ``GET /org/{org}/domain`` with ``?watch=true``
(docs/watch.md). It never imports the engine or the store, so the same controller can run
beside, or away from, the server.

Per kind, one stream:

- **List and watch in one request.** With no position yet (the start, a 410, the periodic
  relist) the stream is opened with ``sendInitialEvents=true``: every current item as
  ``ADDED``, then a ``BOOKMARK`` with ``initialEventsEnd``. The items collected until that
  bookmark *replace* the cache at once, so an item deleted while nobody watched drops out, and
  a half-read list is never seen by the loop.
- **Resuming.** After that, each event and bookmark's ``resourceVersion`` is the position; a
  stream that ends (the server restarting, a network error, an ``ERROR`` event such as 503 at
  shutdown) is opened again from it, after a short back-off, so no change is missed.
- **410** (``list_again``: the position is older than the server's change log, or newer than
  anything it held, e.g. a store restored from an export) drops the position: the next stream
  lists again.
- **The safety net.** Every ``relist_interval_s`` the stream is closed and opened again with
  ``sendInitialEvents=true``, so a cache that drifted for any reason (a bug, a lost event) is
  made whole, and the loop is woken to compare the engine with it again.

Every change of the cache (and every relist) calls ``on_change``: the loop's wake-up. The
cache is read only between awaits, on the loop's own event loop, so it needs no lock.

**Locations.** :func:`gvc_locations` gives a GVC's ``spec.staticPlacement.locationLinks``
(last path segment, in order); what its ``locationQuery`` selects is asked of the server by
``placement.PlacementCache``, again whenever the watched locations change or a relist happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from plinth.runtime.controller.plan import self_parts

log = logging.getLogger(__name__)

#: How often the whole list is read again, whatever the stream said (the safety net).
RELIST_INTERVAL_S = 300.0
#: Back-off between attempts to open a stream that failed, doubling up to the maximum.
RETRY_MIN_S, RETRY_MAX_S = 0.2, 5.0
#: A stream silent this long is taken for dead: the server sends a bookmark every 20 s by default.
READ_TIMEOUT_S = 60.0


class ListAgain(Exception):
    """The server answered 410: the position is unknown to its change log."""


def gvc_locations(gvc: Mapping[str, Any]) -> list[str]:
    """A GVC's locations for the controller: its ``staticPlacement.locationLinks`` (last path
    segment), in order, each once. ``locationQuery`` is ``placement.PlacementCache``'s."""
    placement = (gvc.get("spec") or {}).get("staticPlacement") or {}
    links = placement.get("locationLinks") or []
    return list(dict.fromkeys(str(link).rstrip("/").rsplit("/", 1)[-1] for link in links))


def _gvc_key(doc: Mapping[str, Any]) -> str:
    return str(doc["name"])


def _workload_key(doc: Mapping[str, Any]) -> tuple[str, str]:
    parts = self_parts(doc)  # /org/{org}/gvc/{gvc}/workload/{name}
    return parts[3], str(doc["name"])


class _Stream:
    """One kind's list-and-watch stream and the cache it keeps (module docstring)."""

    def __init__(
        self,
        informer: Informer,
        path: str,
        key: Callable[[Mapping[str, Any]], Any],
        resource_version: str | None,
    ) -> None:
        self.informer = informer
        self.path = path
        self.key = key
        self.items: dict[Any, dict[str, Any]] = {}
        self.version = resource_version
        self.synced = asyncio.Event()
        self.lists = 0  # how many full lists were applied (for tests and logs)

    async def run(self) -> None:
        backoff = RETRY_MIN_S
        listed_at = time.monotonic()
        while True:
            if self.version is None:  # this stream lists: the relist interval starts again
                listed_at = time.monotonic()
            remaining = max(0.0, self.informer.relist_interval_s - (time.monotonic() - listed_at))
            try:
                async with asyncio.timeout(remaining):
                    await self._stream()
                backoff = RETRY_MIN_S  # the server ended a healthy stream: resume at once
                continue
            except TimeoutError:
                log.debug("%s: periodic relist", self.path)
                self.version = None
                continue
            except ListAgain:
                log.info("%s: position %s unknown to the server (410): listing again", self.path, self.version)
                self.version = None
                continue
            except Exception as exc:  # any failure of a stream is retried, never fatal
                log.warning("%s: watch failed (%s); retrying in %.1f s", self.path, exc, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, RETRY_MAX_S)

    async def _stream(self) -> None:
        params = {"watch": "true"}
        initial: dict[Any, dict[str, Any]] | None = None
        if self.version is None:
            params["sendInitialEvents"] = "true"
            initial = {}
        else:
            params["resourceVersion"] = self.version
        async with self.informer.client.stream("GET", self.path, params=params) as response:
            if response.status_code == 410:
                raise ListAgain()
            if response.status_code != 200:
                body = (await response.aread()).decode(errors="replace")[:500]
                raise ValueError(f"HTTP {response.status_code}: {body}")
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                kind = event.get("type")
                if kind == "ERROR":
                    error = event.get("object") or {}
                    if error.get("status") == 410:
                        raise ListAgain()
                    raise ValueError(f"the server ended the watch: {error.get('status')} {error.get('message')}")
                version = event.get("resourceVersion")
                if kind == "BOOKMARK":
                    if initial is not None and event.get("initialEventsEnd"):
                        self.items = initial
                        initial = None
                        self.lists += 1
                        self.synced.set()
                        self.informer.changed()
                    if version is not None and initial is None:
                        self.version = str(version)
                    continue
                doc = event.get("object") or {}
                target = initial if initial is not None else self.items
                if kind in ("ADDED", "MODIFIED"):
                    target[self.key(doc)] = doc
                elif kind == "DELETED":
                    target.pop(self.key(doc), None)
                if initial is None:
                    if version is not None:
                        self.version = str(version)
                    self.informer.changed()


class Informer:
    """An org's GVCs and workloads as the API serves them (module docstring).

    ``base_url`` is the server's URL, ``token`` a key allowed to view the org's GVCs and
    workloads. ``on_change`` is called (on the event loop) after every change to the cache.
    ``resource_version`` resumes every stream from a known position (a 410 falls back to a list).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        org: str,
        *,
        on_change: Callable[[], None] = lambda: None,
        relist_interval_s: float = RELIST_INTERVAL_S,
        verify: bool | str = True,
        resource_version: str | None = None,
    ) -> None:
        self.org = org
        self.relist_interval_s = relist_interval_s
        self.on_change = on_change
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/x-ndjson"},
            timeout=httpx.Timeout(10.0, read=READ_TIMEOUT_S),
            verify=verify,
        )
        self._gvcs = _Stream(self, f"/org/{org}/gvc", _gvc_key, resource_version)
        self._workloads = _Stream(self, f"/org/{org}/workload", _workload_key, resource_version)
        self._domains = _Stream(self, f"/org/{org}/domain", _gvc_key, resource_version)
        self._locations = _Stream(self, f"/org/{org}/location", _gvc_key, resource_version)
        self._secrets = _Stream(self, f"/org/{org}/secret", _gvc_key, resource_version)
        self._volume_sets = _Stream(self, f"/org/{org}/volumeset", _workload_key, resource_version)
        self._streams = (
            self._gvcs,
            self._workloads,
            self._domains,
            self._locations,
            self._secrets,
            self._volume_sets,
        )

    @property
    def gvcs(self) -> Mapping[str, dict[str, Any]]:
        """GVCs by name."""
        return self._gvcs.items

    @property
    def workloads(self) -> Mapping[tuple[str, str], dict[str, Any]]:
        """Workloads by ``(gvc, name)``."""
        return self._workloads.items

    @property
    def domains(self) -> Mapping[str, dict[str, Any]]:
        """Domains by name (for the gateway's routes)."""
        return self._domains.items

    @property
    def locations(self) -> Mapping[str, dict[str, Any]]:
        """Locations by name (a GVC's ``locationQuery`` selects among them)."""
        return self._locations.items

    @property
    def secrets(self) -> Mapping[str, dict[str, Any]]:
        """Secrets by name, as a GET shows them: type and version, never a value."""
        return self._secrets.items

    @property
    def volume_sets(self) -> Mapping[tuple[str, str], dict[str, Any]]:
        """Volume sets by ``(gvc, name)`` (their volumes go when they go: ``volumes.py``)."""
        return self._volume_sets.items

    def locations_state(self) -> tuple[Any, ...]:
        """Changes whenever a location changes or any kind is listed again: when a
        ``locationQuery`` must be asked again."""
        return (self.lists, tuple(sorted((name, doc.get("version")) for name, doc in self.locations.items())))

    @property
    def synced(self) -> bool:
        """Whether every kind has been listed at least once (before that the cache is not the
        truth: a loop that acted on it would remove everything)."""
        return all(stream.synced.is_set() for stream in self._streams)

    @property
    def lists(self) -> int:
        """Full lists applied so far, every kind together."""
        return sum(stream.lists for stream in self._streams)

    async def wait_synced(self) -> None:
        for stream in self._streams:
            await stream.synced.wait()

    def changed(self) -> None:
        try:
            self.on_change()
        except Exception:  # a wake-up must never end the stream
            log.exception("on_change failed")

    async def run(self) -> None:
        """Keep the cache until cancelled; closes the HTTP client on the way out."""
        try:
            async with asyncio.TaskGroup() as group:
                for stream in self._streams:
                    group.create_task(stream.run())
        finally:
            with contextlib.suppress(Exception):
                await self.client.aclose()
