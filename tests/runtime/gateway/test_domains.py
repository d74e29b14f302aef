"""Gateway routes from documents: the pure table (``route_table``), then the same documents
served by real Caddy in front of the real ``alpha`` and ``beta`` containers."""

from __future__ import annotations

from typing import Any

from plinth.runtime.gateway import endpoint_host, route_table
from plinth.runtime.gateway.routes import Route
from tests.runtime.gateway.conftest import ECHO, Gateway, replica_of

OPEN = {"external": {"inboundAllowCIDR": ["0.0.0.0/0"]}}


def workload(
    name: str, gvc: str = "main", port: int = 8080, firewall: Any = OPEN, kind: str = "standard"
) -> dict[str, Any]:
    return {
        "kind": "workload",
        "name": name,
        "links": [{"rel": "self", "href": f"/org/org1/gvc/{gvc}/workload/{name}"}],
        "spec": {
            "type": kind,
            "containers": [{"name": "c", "image": "x", "ports": [{"number": port, "protocol": "http"}]}],
            "firewallConfig": firewall,
        },
    }


def domain(name: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "domain", "name": name, "spec": spec}


def route(link: str, **fields: Any) -> dict[str, Any]:
    return {"workloadLink": link, **fields}


GVCS = {"main": {"name": "main", "alias": "abc123"}, "other": {"name": "other", "alias": "xyz"}}


def by_host(routes: Any) -> dict[tuple[str, ...], Route]:
    return {tuple(r.hosts): r for r in routes}


def test_each_workload_has_its_endpoint_host_with_only_ready_ports() -> None:
    table = route_table(
        [],
        [workload("web"), workload("api", port=9000), workload("job", kind="cron")],
        GVCS,
        {("main", "web", 8080): [40001, 40002], ("main", "api", 8080): [40003]},
    )
    routes = by_host(table.routes)
    assert set(routes) == {("web-abc123.localhost",), ("api-abc123.localhost",)}  # cron: no endpoint
    assert routes[("web-abc123.localhost",)].upstreams == (40001, 40002)
    assert routes[("api-abc123.localhost",)].upstreams == ()  # its port is 9000: nothing ready there
    assert routes[("web-abc123.localhost",)].allow_cidrs == ("0.0.0.0/0",)
    assert endpoint_host("web", GVCS["main"], "example.test") == "web-abc123.example.test"


def test_domain_routes_carry_their_matches_and_the_targets_firewall() -> None:
    rules = [
        route("//gvc/main/workload/web", prefix="/api", replacePrefix="/", headers={"request": {"set": {"X-A": "1"}}}),
        route("/org/org1/gvc/main/workload/shut", regex="^/r/.*", port=8080),
        route("//gvc/main/workload/missing"),
    ]
    workloads = [workload("web"), workload("shut", firewall={})]
    table = route_table(
        [domain("ex.test", ports=[{"number": 443, "routes": rules}])], workloads, {}, {("main", "web", 8080): [1]}
    )
    web, shut, missing = table.routes
    assert (web.hosts, web.prefix, web.replace_prefix, dict(web.headers), web.upstreams) == (
        ("ex.test",),
        "/api",
        "/",
        {"X-A": "1"},
        (1,),
    )
    assert (shut.regex, shut.allow_cidrs, shut.upstreams) == ("^/r/.*", (), ())  # no firewall entry: nobody
    assert (missing.upstreams, missing.allow_cidrs, missing.name) == ((), (), "//gvc/main/workload/missing")


def test_accept_all_hosts_subdomains_gvc_link_and_domain_workload_link() -> None:
    workloads = [workload("web"), workload("api"), workload("far", gvc="other")]
    domains = [
        domain(
            "all.test", acceptAllHosts=True, ports=[{"routes": [route("//gvc/main/workload/web", hostPrefix="v1.")]}]
        ),
        domain("sub.test", acceptAllSubdomains=True, ports=[{"routes": [route("//gvc/main/workload/api")]}]),
        domain("g.test", gvcLink="//gvc/main"),
        domain("w.test", workloadLink="//gvc/other/workload/far"),
    ]
    routes = route_table(domains, workloads, {}, {}).routes
    assert [(r.hosts, r.host_prefix) for r in routes] == [
        ((), "v1."),
        (("api.g.test",), None),  # domains in name order
        (("web.g.test",), None),
        (("sub.test", "*.sub.test"), None),
        (("w.test",), None),
    ]
    assert routes[-1].name == "//gvc/other/workload/far"


def test_documents_served_by_caddy(gateway: Gateway) -> None:
    workloads = [
        workload("web"),
        workload("down"),
        workload("shut", firewall={"external": {"inboundAllowCIDR": []}}),
        workload("lan", firewall={"external": {"inboundAllowCIDR": ["10.0.0.0/8"]}}),
    ]
    rules = [
        route("//gvc/main/workload/down", prefix=f"{ECHO}/down"),
        route("//gvc/main/workload/shut", prefix=f"{ECHO}/shut"),
        route("//gvc/main/workload/lan", prefix=f"{ECHO}/lan"),
        route(
            "//gvc/main/workload/web",
            prefix="/web",
            replacePrefix=ECHO,
            headers={"request": {"set": {"X-Plinth-Test": "d"}}},
        ),
        route("//gvc/main/workload/web", prefix="/"),
    ]
    domains = [domain("ex.test", ports=[{"number": 443, "routes": rules}]), domain("g.test", gvcLink="//gvc/main")]
    ready = {
        ("main", "web", 8080): [gateway.alpha],
        ("main", "shut", 8080): [gateway.beta],
        ("main", "lan", 8080): [gateway.beta],
    }
    gateway.apply_table(route_table(domains, workloads, GVCS, ready))
    assert replica_of(gateway.get(ECHO, "web-abc123.localhost")) == "alpha"
    response = gateway.get("/web/x", "ex.test")
    assert replica_of(response) == "alpha"
    assert {f"uri={ECHO}/x", "header=d"} <= set(response.text.split())
    assert gateway.get(f"{ECHO}/down", "ex.test").status_code == 503  # no ready replica, at once
    assert gateway.get(f"{ECHO}/shut", "ex.test").status_code == 403  # nobody allowed
    assert gateway.get(f"{ECHO}/lan", "ex.test").status_code == 403  # 127.0.0.1 is not in 10/8
    assert replica_of(gateway.get(ECHO, "web.g.test")) == "alpha"
    assert gateway.get(ECHO, "down.g.test").status_code == 503
    assert gateway.get(ECHO, "nowhere.test").status_code == 404
