"""Endpoints that answer without a token: discovery, about, health, readiness."""

from __future__ import annotations

import orjson

import plinth
from plinth.server.settings import Settings
from plinth.storage.base import Storage, StorageError

#: Every service the official discovery document names (types-ts discovery.ts); all point at this server.
DISCOVERY_SERVICES = (
    "billing", "console", "browser", "hub", "registry", "audit", "logs", "metrics", "metrics-ng",
    "tracing", "byok", "metering", "billing-ng", "grafana", "mcp",
)  # fmt: skip
OPEN_PATHS = frozenset({"/discovery", "/about", "/healthz", "/readyz", "/openapi.json"})
#: Health probes are never rate limited: a load balancer polling them must not be told 429.
PROBES = frozenset({"/healthz", "/readyz"})
#: ``/readyz`` once the process has been told to stop (``server/draining.py``).
STOPPING = orjson.dumps({"status": "stopping", "message": "the server is shutting down"})


def discovery(settings: Settings) -> bytes:
    """Every endpoint at the configured public URL (``--public-url``, else the listen address):
    a request's ``Host`` header is the client's to choose, and must not steer other clients.
    With ``--runtime containers``, ``logs`` is the data plane's base URL (``--dataplane-url``)."""
    base = settings.public_base()
    endpoints = {name: base for name in DISCOVERY_SERVICES}
    endpoints["api"] = base
    endpoints["terraform-exporter"] = f"{base}/export/terraform"
    endpoints["k8s-crd-exporter"] = f"{base}/export/crd"
    if settings.runtime == "containers" and settings.dataplane_url:
        # Workload logs are served by the runtime controller's data plane (docs/runtime.md, "Logs").
        endpoints["logs"] = settings.dataplane_url
    return orjson.dumps({"endpoints": endpoints, "firebase": {"apiKey": "", "authDomain": "", "projectId": ""}})


def about(settings: Settings) -> bytes:
    return orjson.dumps({"name": "plinth", "version": plinth.__version__, "store": settings.store_name})


async def readiness(storage: Storage | None) -> tuple[int, bytes]:
    if storage is None:
        return 503, orjson.dumps({"status": "starting", "message": "waiting for the data store to be reachable"})
    try:
        await storage.ping()
    except StorageError as exc:
        return 503, orjson.dumps({"status": "unavailable", "message": str(exc)})
    return 200, orjson.dumps({"status": "ready"})
