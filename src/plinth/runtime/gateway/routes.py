"""The gateway's route table and the Caddy JSON configuration it becomes (a pure function).

A controller builds a :class:`RouteTable` from domains and workloads (what the API stores) and
the ports the engine published for ready replicas (what runs); :func:`caddy_config` turns it
into the document Caddy's admin API loads (``POST /load``). Nothing here does I/O.

Behaviour, per route, in this order:

1. **Match**: ``hosts`` (any of them; none = every host), then ``host_prefix`` (the ``Host``
   starts with it) or ``host_regex``, then ``prefix`` (a plain string prefix of the path, as the
   platform's are) or ``regex`` (RE2, on the path).
2. **Firewall**: with ``allow_cidrs`` set, a client whose address is outside every range gets
   403; an empty tuple allows nobody. ``None`` allows everyone.
3. **No ready replica**: 503 at once (a static answer, so nothing waits for a dial).
4. **Rewrite**: ``headers`` set on the request (the platform's ``%REQUESTED_SERVER_NAME%``,
   ``%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%`` and ``%START_TIME%`` become Caddy's
   placeholders); ``replace_prefix`` replaces the matched ``prefix`` (prefix routes only).
5. **Proxy** to ``127.0.0.1:PORT`` of each ready replica, round robin; a replica that refuses a
   connection is marked down for a moment and the request is retried on another for up to
   :data:`TRY_DURATION` (a dial failure is safe to retry for any method).

Route order, since the first match wins: routes naming hosts (or a host prefix/regex) before
routes for every host; within each, regex routes in their written order, then prefix routes,
longest prefix first (the platform sorts prefixes so the longest wins). A request no route
matches gets 404.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: How long one request may keep trying other replicas when a dial fails (a bound, never a hang).
TRY_DURATION = "2s"
#: How long in-flight requests may finish on the old configuration after a reload.
GRACE_PERIOD = "10s"
#: The platform's header variables and the Caddy placeholders that carry the same value.
HEADER_VARIABLES = {
    "%REQUESTED_SERVER_NAME%": "{http.request.host}",
    "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%": "{http.request.remote.host}",
    "%START_TIME%": "{time.now.http}",
}


@dataclass(frozen=True, slots=True)
class Route:
    """One way into a workload: what matches, what is done to the request, where it goes."""

    #: Host ports on 127.0.0.1 of the target's ready replicas (empty: 503).
    upstreams: Sequence[int] = ()
    hosts: Sequence[str] = ()
    prefix: str = "/"
    regex: str | None = None
    replace_prefix: str | None = None
    host_prefix: str | None = None
    host_regex: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Client address ranges allowed (CIDR); ``None`` allows everyone, ``()`` nobody.
    allow_cidrs: Sequence[str] | None = None
    #: What the route reaches (a workload link), named in the 503 answer.
    name: str = ""


@dataclass(frozen=True, slots=True)
class RouteTable:
    routes: Sequence[Route] = ()


def _order(route: Route) -> tuple[int, int, int]:
    every_host = not (route.hosts or route.host_prefix or route.host_regex)
    return (int(every_host), 0 if route.regex is not None else 1, 0 if route.regex is not None else -len(route.prefix))


def _matcher(route: Route) -> dict[str, Any]:
    match: dict[str, Any] = {}
    if route.hosts:
        match["host"] = list(route.hosts)
    if route.host_prefix is not None:
        match["header_regexp"] = {"Host": {"pattern": "^" + re.escape(route.host_prefix)}}
    elif route.host_regex is not None:
        match["header_regexp"] = {"Host": {"pattern": route.host_regex}}
    if route.regex is not None:
        match["path_regexp"] = {"pattern": route.regex}
    elif route.prefix != "/":
        match["path"] = [route.prefix + "*"]
    return match


def _text(status: int, body: str) -> dict[str, Any]:
    return {
        "handler": "static_response",
        "status_code": status,
        "headers": {"Content-Type": ["text/plain; charset=utf-8"]},
        "body": body + "\n",
    }


def _header_value(value: str) -> str:
    for variable, placeholder in HEADER_VARIABLES.items():
        value = value.replace(variable, placeholder)
    return value


def _handlers(route: Route) -> list[dict[str, Any]]:
    """The handler chain of one matched route: firewall, 503, rewrites, proxy."""
    steps: list[dict[str, Any]] = []
    if route.allow_cidrs is not None:
        if not route.allow_cidrs:
            return [_text(403, "forbidden by the workload's firewall")]
        outside = {"not": [{"remote_ip": {"ranges": list(route.allow_cidrs)}}]}
        deny = {"match": [outside], "handle": [_text(403, "forbidden by the workload's firewall")]}
        steps.append({"handler": "subroute", "routes": [deny]})
    if not route.upstreams:
        steps.append(_text(503, f"no ready replica{' of ' + route.name if route.name else ''}"))
        return steps
    if route.headers:
        values = {name: [_header_value(value)] for name, value in route.headers.items()}
        steps.append({"handler": "headers", "request": {"set": values}})
    if route.replace_prefix is not None and route.regex is None:
        replacement = route.replace_prefix.replace("$", "$$")  # literal, not a group reference
        rule = {"find": "^" + re.escape(route.prefix), "replace": replacement}
        steps.append({"handler": "rewrite", "path_regexp": [rule]})
    steps.append(
        {
            "handler": "reverse_proxy",
            "upstreams": [{"dial": f"127.0.0.1:{port}"} for port in route.upstreams],
            "load_balancing": {
                "selection_policy": {"policy": "round_robin"},
                "try_duration": TRY_DURATION,
                "try_interval": "50ms",
            },
            "health_checks": {"passive": {"fail_duration": "2s"}},
        }
    )
    return steps


def caddy_config(table: RouteTable, listen: str, admin: str) -> dict[str, Any]:
    """The whole Caddy configuration: the admin API on ``admin``, one HTTP server on ``listen``
    (both ``HOST:PORT``) serving ``table``. Automatic HTTPS is off and nothing is persisted:
    the controller is the source of truth and loads the whole document on every change."""
    routes = [
        {"match": [_matcher(route)], "handle": _handlers(route), "terminal": True}
        for route in sorted(table.routes, key=_order)
    ]
    for route in routes:
        if route["match"] == [{}]:
            del route["match"]
    routes.append({"handle": [_text(404, "no route for this host and path")], "terminal": True})
    return {
        "admin": {"listen": admin, "config": {"persist": False}},
        "logging": {"logs": {"default": {"level": "ERROR"}}},
        "apps": {
            "http": {
                "grace_period": GRACE_PERIOD,
                "servers": {
                    "gateway": {
                        "listen": [listen],
                        "routes": routes,
                        "automatic_https": {"disable": True},
                    }
                },
            }
        },
    }
