"""The domain's computed status: endpoints, dnsConfig, locations, fingerprint, status and warning."""

from __future__ import annotations

from typing import Any

import pytest
from _domain_support import NAME, ORG, PROD, accept, context, gvc_item, route, status_of, wl

from plinth.kinds.domain import DOMAIN

TXT = {"type": "TXT", "ttl": 600, "host": "_cpln.example.com", "value": ORG}
NS = [
    {"type": "NS", "ttl": 3600, "host": NAME, "value": v}
    for v in ("ns1.cpln.cloud", "ns2.cpln.cloud", "ns1.cpln.live", "ns2.cpln.live")
]
ACME = {"type": "CNAME", "ttl": 300, "host": f"_acme-challenge.{NAME}", "value": f"{NAME}.acme.cpln.app"}


def cname(host: str, alias: str = "prod-alias") -> dict[str, Any]:
    return {"type": "CNAME", "ttl": 300, "host": host, "value": f"{alias}.t.cpln.app"}


def test_fresh_domain_without_gvc() -> None:
    status = status_of({})
    assert status == {
        "status": "pendingDnsConfig",
        "endpoints": [],
        "dnsConfig": [TXT],
        "locations": [],
        "fingerprint": status["fingerprint"],
    }
    assert len(status["fingerprint"]) == 64


def test_route_mode_cname_with_known_gvc() -> None:
    spec = {"ports": [{"routes": [route("/"), route("/api", workload="api")]}]}
    status = status_of(spec, resolved={PROD: gvc_item()})
    assert status["status"] == "pendingDnsConfig"
    assert status["endpoints"] == [
        {"url": f"https://{NAME}/", "workloadLink": f"{PROD}/workload/web"},
        {"url": f"https://{NAME}/api", "workloadLink": f"{PROD}/workload/api"},
    ]
    assert status["dnsConfig"] == [cname(NAME), TXT]
    assert status["locations"] == [
        {"name": "aws-us-east-2", "certificateStatus": "pendingDnsConfig"},
        {"name": "gcp-us-east1", "certificateStatus": "pendingDnsConfig"},
    ]
    assert "warning" not in status


def test_cname_dns01_adds_acme_challenge_record_even_without_gvc() -> None:
    assert status_of({"certChallengeType": "dns01"})["dnsConfig"] == [ACME, TXT]


def test_accept_all_subdomains_adds_wildcard_cname() -> None:
    status = status_of({"acceptAllSubdomains": True, "ports": [{"routes": [route()]}]}, resolved={PROD: gvc_item()})
    assert status["dnsConfig"] == [cname(NAME), cname(f"*.{NAME}"), TXT]


def test_ns_mode_has_four_name_servers_and_no_cname() -> None:
    status = status_of({"dnsMode": "ns", "ports": [{"routes": [route()]}]}, resolved={PROD: gvc_item()})
    assert status["dnsConfig"] == [*NS, TXT]


def test_gvc_link_mode_defaults_to_ns_and_has_wildcard_endpoints() -> None:
    status = status_of(
        {"gvcLink": "//gvc/prod", "ports": [{}, {"number": 80, "protocol": "http"}]}, resolved={PROD: gvc_item()}
    )
    assert status["endpoints"] == [{"url": f"https://*.{NAME}"}, {"url": f"http://*.{NAME}"}]
    assert status["dnsConfig"] == [*NS, TXT]
    assert [loc["name"] for loc in status["locations"]] == ["aws-us-east-2", "gcp-us-east1"]


def test_gvc_link_in_cname_mode_points_a_wildcard_at_the_gvc() -> None:
    status = status_of({"gvcLink": "//gvc/prod", "dnsMode": "cname"}, resolved={PROD: gvc_item(alias="zz9")})
    assert status["dnsConfig"] == [cname(f"*.{NAME}", alias="zz9"), TXT]


def test_endpoint_scheme_and_port_suffix() -> None:
    spec = {
        "ports": [
            {"number": 443, "routes": [route("/a")]},
            {"number": 80, "protocol": "http", "routes": [route("/b")]},
            {"number": 8080, "protocol": "http", "routes": [route(None, regex="^/c")]},
            {"number": 8443, "protocol": "http2", "tls": {}, "routes": [route("/d")]},
            {"number": 5432, "protocol": "tcp", "routes": [route()]},
        ]
    }
    urls = [e["url"] for e in status_of(spec)["endpoints"]]
    assert urls == [
        f"https://{NAME}/a",
        f"http://{NAME}/b",
        f"http://{NAME}:8080",
        f"https://{NAME}:8443/d",
        f"tcp://{NAME}:5432",
    ]


def test_apex_ownership_record_uses_last_two_labels() -> None:
    status = status_of({}, name="a.b.example.org")
    assert status["dnsConfig"] == [{"type": "TXT", "ttl": 600, "host": "_cpln.example.org", "value": ORG}]


def test_internal_domain_has_no_public_records() -> None:
    spec = {"ports": [{"tls": {"serverCertificate": {"secretLink": "//secret/c"}}, "routes": [route()]}]}
    status = status_of(spec, name="svc.corp.internal", resolved={PROD: gvc_item()})
    assert status["dnsConfig"] == [cname("svc.corp.internal")]


# --- status and warnings ---------------------------------------------------------------------

DEDICATED_NEEDS: list[tuple[str, dict[str, Any], str]] = [
    ("non-standard port", {"ports": [{"number": 8443, "routes": [route()]}]}, "spec.ports[0].number 8443"),
    ("tcp", {"ports": [{"number": 443, "protocol": "tcp", "routes": [route()]}]}, "spec.ports[0].protocol tcp"),
    ("acceptAllHosts", {"acceptAllHosts": True, "ports": [{"routes": [route()]}]}, "spec.acceptAllHosts"),
    (
        "hostPrefix",
        {"acceptAllSubdomains": True, "ports": [{"routes": [route(hostPrefix="api")]}]},
        "spec.ports[0].routes[0].hostPrefix",
    ),
    (
        "hostRegex",
        {"acceptAllSubdomains": True, "ports": [{"routes": [route(hostRegex="^a")]}]},
        "spec.ports[0].routes[0].hostRegex",
    ),
]


@pytest.mark.parametrize(("spec", "setting"), [d[1:] for d in DEDICATED_NEEDS], ids=[d[0] for d in DEDICATED_NEEDS])
def test_dedicated_load_balancer_warnings(spec: dict[str, Any], setting: str) -> None:
    shared = status_of(spec, resolved={PROD: gvc_item(dedicated=False)})
    assert shared["status"] == "warning"
    assert shared["warning"] == (
        f"needs a GVC with a dedicated load balancer, but GVC 'prod' does not have one: {setting}"
    )
    dedicated = status_of(spec, resolved={PROD: gvc_item(dedicated=True)})
    assert dedicated["status"] == "pendingDnsConfig"
    assert "warning" not in dedicated


@pytest.mark.parametrize(
    ("spec", "resolved", "reason"),
    [
        ({"ports": [{"number": 8443}]}, {}, "this domain serves no GVC"),
        ({"ports": [{"number": 8443, "routes": [route()]}]}, {PROD: None}, "GVC 'prod' does not exist"),
    ],
)
def test_warning_when_no_gvc_can_serve(spec: dict[str, Any], resolved: dict[str, Any], reason: str) -> None:
    status = status_of(spec, resolved=resolved)
    assert status["warning"] == (f"needs a GVC with a dedicated load balancer, but {reason}: spec.ports[0].number 8443")


def test_warning_lists_every_setting_in_document_order() -> None:
    spec = {"acceptAllHosts": True, "ports": [{"routes": [route()]}, {"number": 9000, "protocol": "tcp"}]}
    warning = status_of(spec, resolved={PROD: gvc_item()})["warning"]
    assert warning.endswith(": spec.acceptAllHosts, spec.ports[1].number 9000, spec.ports[1].protocol tcp")


def test_gvc_link_gvc_decides_the_warning() -> None:
    spec = {"gvcLink": "//gvc/prod", "acceptAllHosts": True}
    assert status_of(spec, resolved={PROD: gvc_item(dedicated=False)})["status"] == "warning"
    assert status_of(spec, resolved={PROD: gvc_item(dedicated=True)})["status"] == "pendingDnsConfig"


def test_used_by_gvc_when_the_served_gvc_names_the_domain_legacy_style() -> None:
    status = status_of({"gvcLink": "//gvc/prod"}, resolved={PROD: gvc_item(legacy_domain=NAME)})
    assert status["status"] == "usedByGvc"
    other = status_of({"gvcLink": "//gvc/prod"}, resolved={PROD: gvc_item(legacy_domain="other.example.com")})
    assert other["status"] == "pendingDnsConfig"


@pytest.mark.parametrize(
    ("tags", "spec", "overall", "certificate"),
    [
        (None, {"ports": [{"routes": [route()]}]}, "pendingDnsConfig", "pendingDnsConfig"),
        ({"cpln/skipDNSCheck": "false"}, {"ports": [{"routes": [route()]}]}, "pendingDnsConfig", "pendingDnsConfig"),
        ({"cpln/skipDNSCheck": "true"}, {"ports": [{"routes": [route()]}]}, "pendingCertificate", "pendingCertificate"),
        (
            {"cpln/skipDNSCheck": True},
            {"ports": [{"tls": {"serverCertificate": {"secretLink": "//secret/c"}}, "routes": [route()]}]},
            "ready",
            "ready",
        ),
        (
            {"cpln/skipDNSCheck": True},
            {"ports": [{"number": 80, "protocol": "http", "routes": [route()]}]},
            "ready",
            "ignored",
        ),
    ],
)
def test_certificate_stage(tags: dict[str, Any] | None, spec: dict[str, Any], overall: str, certificate: str) -> None:
    status = status_of(spec, tags=tags, resolved={PROD: gvc_item(locations=("aws-eu-central-1",))})
    assert status["status"] == overall
    assert status["locations"] == [{"name": "aws-eu-central-1", "certificateStatus": certificate}]


# --- purity ----------------------------------------------------------------------------------


def test_status_is_a_pure_function_of_item_and_context() -> None:
    ctx = context({PROD: gvc_item()})
    item = accept({"ports": [{"routes": [route()]}]}, ctx=ctx)
    snapshot = repr(item)
    first = DOMAIN.status.compute(item, ctx)
    assert DOMAIN.status.compute(item, ctx) == first
    assert repr(item) == snapshot


def test_fingerprint_follows_the_spec_only() -> None:
    base = status_of({"ports": [{"routes": [route()]}]})["fingerprint"]
    assert status_of({"ports": [{"routes": [route()]}]}, tags={"team": "a"})["fingerprint"] == base
    assert status_of({"ports": [{"routes": [route("/x")]}]})["fingerprint"] != base
    # Key order does not matter: the hash is of canonical JSON.
    reordered = status_of({"ports": [{"routes": [{"workloadLink": wl("web"), "prefix": "/"}]}]})["fingerprint"]
    assert reordered == base
