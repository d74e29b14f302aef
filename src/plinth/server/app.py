"""The ASGI application: authentication seam -> engine dispatch -> one error renderer.

No framework sits between uvicorn and the engine: a request is parsed once, authenticated from
a per-process cache, served from stored bytes, and logged as one JSON line. Middleware order,
such as it is: errors outermost (every failure becomes ``{status, message, code, details, id}``),
then open paths, then authentication, then the rate limit (per principal; per client IP for
open paths other than the health probes, and for failed authentication), then the body, then
the engine.

A PostgreSQL store that cannot be reached at start does not stop the process: it serves
``/healthz`` (alive) and answers ``/readyz`` and the API with 503 until the store answers, then
opens it (migrating, and bootstrapping a new store) and serves. Behind a load balancer a replica
that starts before its database joins by itself instead of crash-looping (docs/api.md,
"Durability and availability").
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from prometheus_client import Counter

from plinth.auth.authn import KeyAuthenticator
from plinth.auth.generation import GenerationWatcher
from plinth.auth.jwks import KeyCache, file_loader, issuer_loader
from plinth.auth.oidc import IdTokenVerifier, OidcAuthenticator, is_jwt
from plinth.auth.principal import Principal
from plinth.engine.access import AccessControl
from plinth.engine.requestinfo import RequestInfo, parse_path
from plinth.engine.service import Engine
from plinth.engine.standard import standard_extensions
from plinth.engine.watch_hub import WatchHub
from plinth.errors import MethodNotAllowed, ServiceUnavailable, TooManyRequests, Unauthorized
from plinth.kinds import REGISTRY
from plinth.metrics import FLUSH_S, RATE_LIMITED, WATCHERS, announce_build
from plinth.metrics import flush as flush_metrics
from plinth.runtime import make_runtime
from plinth.sealing import Sealer
from plinth.server import bootstrap as first_start
from plinth.server import console, exporters, metrics, protocol, runtime_reports, system, watch_stream
from plinth.server.accesslog import AccessLog
from plinth.server.draining import Drain
from plinth.server.errors import render_error
from plinth.server.http import Request, decode_json, read_body
from plinth.server.metrics import RequestMeter
from plinth.server.ratelimit import RateLimiter, retry_after
from plinth.server.reply import Reply, Services
from plinth.server.routes import dispatch
from plinth.server.settings import Settings
from plinth.server.signing import SigningCache
from plinth.storage import open_storage
from plinth.storage.base import Storage, StorageError
from plinth.storage.migrate import StoreTooNew
from plinth.storage.sqlite_remote import CommitterAddress

WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
LIMITED_PRINCIPALS = RATE_LIMITED.labels("principal")
LIMITED_ADDRESSES = RATE_LIMITED.labels("address")
#: Seconds between attempts to open a store that was unreachable at start, growing to the max.
OPEN_RETRY_FIRST_S = 0.25
OPEN_RETRY_MAX_S = 2.0
#: Seconds between log lines saying the store is still unreachable.
STILL_WAITING_LOG_S = 30.0
SHUTTING_DOWN = ServiceUnavailable(
    "The server is shutting down; watch again from the last resourceVersion", headers={"Retry-After": "1"}
)
STARTING = "The server is starting: the data store is not reachable yet; try again shortly"
log = logging.getLogger("plinth.server")


def client_ip(scope: dict[str, Any]) -> str:
    """The caller's address as uvicorn reports it (``X-Forwarded-For`` from trusted proxies)."""
    client = scope.get("client")
    return client[0] if client else "unknown"


def bearer_token(req: Request) -> str | None:
    """``Authorization: Bearer <key>`` with the word in any case, or the bare key."""
    raw = req.headers.get(b"authorization")
    if not raw:
        return None
    value = raw.decode("latin-1").strip()
    if value[:7].lower() == "bearer ":
        value = value[7:].strip()
    return value or None


def org_of(path: str) -> str | None:
    """The org a request path is in (exporter paths included), before the path is parsed."""
    for prefix in exporters.PREFIXES:
        if path.startswith(prefix + "/"):
            path = path[len(prefix) :]
    parts = path.split("/", 3)
    if len(parts) >= 3 and parts[1] == "org" and parts[2] and not parts[2].startswith("-"):
        return parts[2]
    return None


def oidc_authenticator(settings: Settings, storage: Storage, watcher: GenerationWatcher) -> OidcAuthenticator | None:
    """User sign-in with ID tokens, when the operator configured an issuer."""
    issuer, audience = settings.oidc_issuer, settings.oidc_audience
    if not issuer:
        return None
    if not audience:
        raise ValueError("PLINTH_OIDC_AUDIENCE (the client id ID tokens are for) is required with an issuer")
    load = file_loader(Path(settings.oidc_jwks_file)) if settings.oidc_jwks_file else issuer_loader(issuer)
    return OidcAuthenticator(storage, watcher, IdTokenVerifier(issuer, audience, KeyCache(load)))


def secrets_sealer(settings: Settings) -> Sealer:
    """The sealer of the keys ``settings`` name; a SQLite store without any gets a generated key
    file (``plinth serve`` makes it before its workers start). ``KeyConfigError`` when none can
    be had (PostgreSQL without keys: replicas must share them, so none is made up)."""
    opened = settings.secrets_keys()
    if opened.note:
        log.warning("%s", opened.note)
    return Sealer(opened.source)


class PlinthApp:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.storage: Storage | None = None
        self.engine: Engine | None = None
        self.services: Services | None = None
        self.authenticator: KeyAuthenticator | None = None
        self.oidc: OidcAuthenticator | None = None
        self.watcher: GenerationWatcher | None = None
        self.access_log = AccessLog(settings.access_log)
        self._opening: asyncio.Task[None] | None = None
        self.limiter = RateLimiter(settings.rate_limit, settings.rate_burst) if settings.rate_limit > 0 else None
        self.sealer: Sealer | None = None
        #: Set when this worker begins to stop; the watch hub joins with ``drain.on_drain``.
        self.drain = Drain()
        self.requests = RequestMeter()
        self._flusher: asyncio.TimerHandle | None = None
        self.metrics_token = settings.metrics_token()
        self.hub: WatchHub | None = None
        #: Freeze what start-up allocated (:func:`_settle_heap`): for a served worker process
        #: (:func:`create_app`), not for an app a test runs among others in its process.
        self.settle_heap = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def startup(self) -> None:
        loop = asyncio.get_running_loop()
        self.drain.listen(loop)
        announce_build(self.settings.store_name)
        self._flush_metrics(loop)
        self.sealer = secrets_sealer(self.settings)
        try:
            await self._open_store()
        except StorageError as exc:
            if exc.code != "unavailable" or self.settings.store_name != "postgresql":
                raise
            log.warning("the database is not reachable (%s): not ready; retrying until it is", exc)
            self._opening = asyncio.create_task(self._open_when_reachable(), name="plinth-open-store")
        if self.settle_heap:
            _settle_heap()

    def _flush_metrics(self, loop: asyncio.AbstractEventLoop) -> None:
        """Add this process's metric tallies to the values every worker shares, every
        ``FLUSH_S`` (``plinth.metrics``) until the loop closes."""
        WATCHERS.set(len(self.hub.watchers()) if self.hub is not None else 0)
        flush_metrics()
        self._flusher = loop.call_later(FLUSH_S, self._flush_metrics, loop)

    async def _open_store(self) -> None:
        # A worker of several on SQLite hands its writes to ``plinth serve``'s committer.
        committer = CommitterAddress.take_from_env()
        storage = await open_storage(self.settings.database_url, self.settings.data_dir, committer)
        try:
            runtime = make_runtime(self.settings.runtime, self.settings.dataplane_url or None)
            watcher = GenerationWatcher(storage)
            # One policy-set cache per process: authorization and the grants extension share it.
            access = AccessControl(storage, REGISTRY, watcher)
            engine = Engine(
                storage,
                REGISTRY,
                runtime=runtime,
                base_domain=self.settings.base_domain,
                endpoint_format=self.settings.endpoint_format,
                sealer=self.sealer,
                extensions=standard_extensions(),
                access_control=access,
            )
            if await storage.get_meta(first_start.ORG_META) is None:
                # ``plinth serve`` bootstraps before it starts workers, unless the store was
                # unreachable then: the first worker to reach it does (the claim lets one win).
                key = await first_start.bootstrap(engine, storage, self.settings.org)
                if key is not None:
                    path = first_start.write_key_file(self.settings.data_dir, key)
                    print(f"Admin key (shown once; also written to {path}):\n  {key}", flush=True)
            await first_start.ensure_builtins(engine, storage)
            await first_start.prepare_signing(engine, storage)
        except BaseException:
            await storage.close()
            raise
        self.authenticator = KeyAuthenticator(storage, watcher)
        self.oidc = oidc_authenticator(self.settings, storage, watcher)
        self.services = Services(engine, access, SigningCache(storage, self.sealer))
        self.hub = await self._start_hub(storage, watcher)
        self.storage, self.engine, self.watcher = storage, engine, watcher

    async def _start_hub(self, storage: Storage, watcher: GenerationWatcher) -> WatchHub:
        """The process's watch hub; its streams end with a 503 ERROR when the server shuts down
        (uvicorn asks every connection to close first, then waits for them: the hook ends them)."""
        s = self.settings
        hub = WatchHub(
            storage,
            poll_s=s.watch_poll_s,
            keep=s.watch_retention_count,
            max_age_s=s.watch_retention_age_s,
            trim_every_s=s.watch_trim_s,
            generation=watcher.current,
        )
        await hub.start()
        protocol.on_shutdown(lambda: hub.shutdown(SHUTTING_DOWN))

        async def end_streams() -> None:  # SIGTERM: streams end at once, not at the grace's end
            hub.shutdown(SHUTTING_DOWN)

        self.drain.on_drain(end_streams)
        return hub

    async def _open_when_reachable(self) -> None:
        delay, logged = OPEN_RETRY_FIRST_S, time.monotonic()
        while True:
            await asyncio.sleep(delay)
            try:
                await self._open_store()
            except StoreTooNew as exc:
                # Found only now (the store was unreachable when `plinth serve` checked): this
                # worker serves 503s, and says why, rather than touching a newer store.
                log.error("plinth: %s", exc)
                return
            except StorageError as exc:
                if exc.code != "unavailable":
                    raise
                if time.monotonic() - logged >= STILL_WAITING_LOG_S:
                    log.warning("the database is still not reachable (%s)", exc)
                    logged = time.monotonic()
                delay = min(delay * 2, OPEN_RETRY_MAX_S)
                continue
            log.warning("the database is reachable: ready")
            return

    async def shutdown(self) -> None:
        self.access_log.flush()
        if self._flusher is not None:
            self._flusher.cancel()
        metrics.process_stopping()
        if self._opening is not None:
            self._opening.cancel()
            try:
                await self._opening
            except BaseException:
                pass
        if self.hub is not None:
            await self.hub.close(SHUTTING_DOWN)
        if self.storage is not None:
            await self.storage.close()

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        started = time.perf_counter()
        req = Request.from_scope(scope)
        try:
            reply = await self._handle(req, scope, receive)
        except Exception as exc:
            status, body, extra = render_error(exc, req.request_id)
            reply = Reply(status, body, [(k.lower().encode(), v.encode()) for k, v in extra.items()])
        headers = [(b"content-type", reply.content_type), (b"x-request-id", req.request_id.encode())]
        if reply.stream is None:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers + reply.headers})
        if reply.stream is None:
            await send({"type": "http.response.body", "body": reply.body})
        else:
            await reply.stream(send, receive)
        elapsed = time.perf_counter() - started
        self.requests.record(req.method, req.path, reply.status, elapsed)
        self.access_log.record(req.method, req.path, reply.status, elapsed, req.request_id)

    async def _authenticate(self, req: Request) -> Principal:
        token = bearer_token(req)
        if token is None:
            raise Unauthorized("Missing credentials: send 'Authorization: Bearer <key>'")
        if self.authenticator is None:
            raise ServiceUnavailable(STARTING, headers={"Retry-After": "1"})
        if self.oidc is not None and is_jwt(token):
            # A JWT alone is an ID token (a key has five segments); it signs in to the path's org.
            org = org_of(req.path)
            if org is None:
                raise Unauthorized("An ID token signs in to an org: use a path under /org/{org}")
            principal = await self.oidc.authenticate(token, org)
        else:
            principal = await self.authenticator.authenticate(token)
        if principal is None:
            raise Unauthorized("The credentials are not valid")
        return principal

    def _limit(self, caller: Hashable, by: Counter | None = None) -> None:
        """Take one token from the caller's bucket, or answer 429 (``server/ratelimit.py``)."""
        limiter = self.limiter
        if limiter is None:
            return
        wait = limiter.take(caller)
        if wait:
            (by or LIMITED_PRINCIPALS).inc()
            seconds = retry_after(wait)
            s = self.settings
            raise TooManyRequests(
                f"Too many requests: at most {s.rate_limit:g} per second (bursts of {s.rate_burst}) per caller; "
                f"retry in {seconds} s",
                {"retry_after_s": int(seconds)},
                {"Retry-After": seconds},
            )

    async def _handle(self, req: Request, scope: dict[str, Any], receive: Any) -> Reply:
        path = req.path
        if path in system.OPEN_PATHS:
            if path not in system.PROBES:
                self._limit(client_ip(scope), LIMITED_ADDRESSES)
            return await self._open_path(req)
        if path == metrics.PATH:
            return self._scrape(req, scope)
        if console.is_console(path):
            self._limit(client_ip(scope), LIMITED_ADDRESSES)
            return console.serve(req, self.settings)
        try:
            who = await self._authenticate(req)
        except Unauthorized:
            self._limit(client_ip(scope), LIMITED_ADDRESSES)
            raise
        self._limit(who)
        if self.services is None:
            raise ServiceUnavailable(STARTING, headers={"Retry-After": "1"})
        exporter = exporters.exporter_of(path)
        if exporter is not None:
            return await exporters.export(self.services, req, who, *exporter)
        info = parse_path(path)
        body = None
        if req.method in WITH_BODY:
            raw = await read_body(scope, receive, req, self.settings.max_body_bytes, self.settings.request_timeout)
            body = decode_json(req, raw)
        report_org = runtime_reports.org_of(path)
        if report_org is not None:
            return await runtime_reports.serve(self.services, req, report_org, body, who)
        if self.hub is not None and watch_stream.requested(req, info):
            connection = scope.get("extensions", {}).get(protocol.CONNECTION_EXTENSION)
            return await watch_stream.open_stream(
                self.services,
                self.hub,
                self.settings,
                req,
                info,
                body,
                who,
                lambda: self._authenticate(req),
                connection,
            )
        reply = await dispatch(self.services, req, info, body, who)
        if req.method != "GET":
            self._written(req.method, info)
        return reply

    def _written(self, method: str, info: RequestInfo) -> None:
        """This process may just have changed keys or policies: look at the access generation
        again before the next request. Not after a create, PUT or PATCH of a kind whose writes
        never move it (neither ``affects_access`` nor ``seeds_access``): one read of the store
        less per such write. Deletes (``forget`` moves it) and actions always."""
        if self.watcher is None:
            return
        kind = REGISTRY.get(info.kind)
        plain = method in ("POST", "PUT", "PATCH") and info.action is None
        if plain and kind is not None and not (kind.access.affects_access or kind.access.seeds_access):
            return
        self.watcher.expire()

    def _scrape(self, req: Request, scope: dict[str, Any]) -> Reply:
        """``/metrics``, for the metrics token's holder (or anyone: ``--metrics-public``)."""
        self._limit(client_ip(scope), LIMITED_ADDRESSES)
        if req.method not in ("GET", "HEAD"):
            raise MethodNotAllowed("Only GET is supported here", {"allow": "GET, HEAD"})
        metrics.allowed(bearer_token(req), self.metrics_token, self.settings.metrics_public)
        return Reply(200, metrics.scrape(), content_type=metrics.CONTENT_TYPE)

    async def _open_path(self, req: Request) -> Reply:
        if req.method not in ("GET", "HEAD"):
            raise MethodNotAllowed("Only GET is supported here", {"allow": "GET, HEAD"})
        if req.path == "/discovery":
            return Reply(200, system.discovery(self.settings))
        if req.path == "/about":
            return Reply(200, system.about(self.settings))
        if req.path == "/healthz":
            return Reply(200, b'{"status":"ok"}')
        if req.path == "/readyz":
            if self.drain.draining:
                return Reply(503, system.STOPPING)
            status, body = await system.readiness(self.storage)
            return Reply(status, body)
        from plinth.server.openapi import openapi_document

        return Reply(200, openapi_document(REGISTRY))


def create_app() -> PlinthApp:
    """The uvicorn factory: each worker process reads its settings from ``PLINTH_*``."""
    app = PlinthApp(Settings.from_env())
    app.settle_heap = True
    return app


def _settle_heap() -> None:
    """Take what start-up allocated (modules, kinds, schemas, the store) out of the cyclic
    collector's full passes: they live as long as the process, and walking them made each
    full collection under load a pause of 30-60 ms on the event loop (every request in flight
    waits for it; measured on the PATCH bench). Collected once first, so no garbage is kept."""
    gc.collect()
    gc.freeze()
