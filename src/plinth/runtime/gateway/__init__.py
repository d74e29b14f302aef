"""The gateway: a route table from documents (``domains``, pure), its Caddy configuration
(``routes``, pure), served by Caddy configured through its admin API (``caddy``).
Not yet wired into ``plinth serve`` (docs/runtime.md)."""

from __future__ import annotations

from plinth.runtime.gateway.caddy import Caddy, GatewayError, loopback_address, reloads_keep_queued_connections
from plinth.runtime.gateway.domains import ReadyPorts, endpoint_host, route_table
from plinth.runtime.gateway.routes import Route, RouteTable, caddy_config

__all__ = [
    "Caddy",
    "GatewayError",
    "ReadyPorts",
    "Route",
    "RouteTable",
    "caddy_config",
    "endpoint_host",
    "loopback_address",
    "reloads_keep_queued_connections",
    "route_table",
]
