"""The domain kind's cross-field defaults and rules (docs.controlplane.com/reference/domain), driven through
build_candidate."""

from __future__ import annotations

from typing import Any

import pytest
from _domain_support import ORG, accept, build, reject, route, wl

DB_FULL = f"/org/{ORG}/gvc/prod/workload/db"
CANARY = [{"workloadLink": wl("a"), "weight": 5}]
SINGLE_GVC = "must be a workload in GVC 'prod' like spec.ports[0].routes[0].workloadLink"

# --- defaults that depend on other fields --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "spec", "dns_mode", "challenge"),
    [
        ("app.example.com", {}, "cname", "http01"),
        ("app.example.com", {"gvcLink": "//gvc/prod"}, "ns", "dns01"),
        ("example.com", {"gvcLink": "//gvc/prod"}, "cname", "http01"),  # ns is not allowed on an apex
        ("app.example.com", {"gvcLink": "//gvc/prod", "certChallengeType": "http01"}, "cname", "http01"),
        ("app.example.com", {"dnsMode": "ns"}, "ns", "dns01"),
        ("app.example.com", {"dnsMode": "cname", "gvcLink": "//gvc/prod"}, "cname", "http01"),
        ("app.example.com", {"certChallengeType": "dns01"}, "cname", "dns01"),
        ("db.example.com", {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db")]}]}, "cname", "dns01"),
    ],
)
def test_dns_mode_and_challenge_defaults(name: str, spec: dict[str, Any], dns_mode: str, challenge: str) -> None:
    stored = accept(spec, name=name)["spec"]
    assert (stored["dnsMode"], stored["certChallengeType"]) == (dns_mode, challenge)


def test_internal_domain_gets_no_challenge_default() -> None:
    stored = accept({"ports": [{"tls": {"serverCertificate": {"secretLink": "//secret/c"}}}]}, name="svc.corp.internal")
    assert stored["spec"]["dnsMode"] == "cname"
    assert "certChallengeType" not in stored["spec"]


# --- one rule at a time: the same spec with and without the offending setting ---------------

RULES: list[tuple[str, str, dict[str, Any], dict[str, Any], str, str]] = [
    # (rule, name, valid spec, invalid spec, path, message fragment)
    (
        "ns rejected on an apex",
        "example.com",
        {"dnsMode": "cname"},
        {"dnsMode": "ns"},
        "spec.dnsMode",
        "cname is the only valid dnsMode for apex domain",
    ),
    (
        "ns allows only dns01",
        "app.example.com",
        {"dnsMode": "ns", "certChallengeType": "dns01"},
        {"dnsMode": "ns", "certChallengeType": "http01"},
        "spec.certChallengeType",
        "must be dns01 when dnsMode is ns",
    ),
    (
        "gvcLink excludes routes",
        "app.example.com",
        {"gvcLink": "//gvc/prod", "ports": [{}]},
        {"gvcLink": "//gvc/prod", "ports": [{"routes": [route()]}]},
        "spec.ports[0].routes",
        "Only one of gvcLink or ports.routes may be configured",
    ),
    (
        "gvcLink excludes workloadLink",
        "app.example.com",
        {"gvcLink": "//gvc/prod"},
        {"gvcLink": "//gvc/prod", "workloadLink": wl("db")},
        "spec.workloadLink",
        "cannot be combined with gvcLink",
    ),
    (
        "workloadLink rejects http01",
        "app.example.com",
        {"workloadLink": wl("db"), "certChallengeType": "dns01"},
        {"workloadLink": wl("db"), "certChallengeType": "http01"},
        "spec.certChallengeType",
        "must be dns01 when spec.workloadLink is set",
    ),
    (
        "replica-direct needs one route per port",
        "app.example.com",
        {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db")]}]},
        {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db"), route("/b", workload="db")]}]},
        "spec.ports[0].routes",
        "must hold exactly one route when spec.workloadLink is set",
    ),
    (
        "replica-direct needs a route on every port",
        "app.example.com",
        {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db")]}]},
        {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db")]}, {"number": 80}]},
        "spec.ports[1].routes",
        "must hold exactly one route",
    ),
    (
        "replica-direct routes go to that workload",
        "app.example.com",
        {"workloadLink": wl("db"), "ports": [{"routes": [{"prefix": "/", "workloadLink": DB_FULL}]}]},
        {"workloadLink": wl("db"), "ports": [{"routes": [route(workload="web")]}]},
        "spec.ports[0].routes[0].workloadLink",
        "must be the same workload as spec.workloadLink",
    ),
    (
        "acceptAllHosts excludes acceptAllSubdomains",
        "app.example.com",
        {"acceptAllHosts": True},
        {"acceptAllHosts": True, "acceptAllSubdomains": True},
        "spec.acceptAllSubdomains",
        "cannot be combined",
    ),
    (
        "at most 10 ports",
        "app.example.com",
        {"ports": [{"number": n} for n in range(1, 11)]},
        {"ports": [{"number": n} for n in range(1, 12)]},
        "spec.ports",
        "must have at most 10 ports (has 11)",
    ),
    (
        "duplicate port numbers",
        "app.example.com",
        {"ports": [{"number": 443}, {"number": 80}]},
        {"ports": [{"number": 443}, {"number": 80}, {"number": 443}]},
        "spec.ports[2].number",
        "duplicates spec.ports[0].number (443)",
    ),
    (
        "cors origin needs exact or regex",
        "app.example.com",
        {"ports": [{"cors": {"allowOrigins": [{"exact": "x"}]}}]},
        {"ports": [{"cors": {"allowOrigins": [{"exact": "x"}, {}]}}]},
        "spec.ports[0].cors.allowOrigins[1]",
        "needs exactly one of exact or regex",
    ),
    (
        "cors origin not both",
        "app.example.com",
        {"ports": [{"cors": {"allowOrigins": [{"regex": "y"}]}}]},
        {"ports": [{"cors": {"allowOrigins": [{"exact": "x", "regex": "y"}]}}]},
        "spec.ports[0].cors.allowOrigins[0].regex",
        "cannot be combined with exact",
    ),
    (
        "prefix and regex not both",
        "app.example.com",
        {"ports": [{"routes": [route("/a")]}]},
        {"ports": [{"routes": [route("/a", regex="^/a")]}]},
        "spec.ports[0].routes[0].regex",
        "cannot be combined with prefix",
    ),
    (
        "hostPrefix and hostRegex not both",
        "app.example.com",
        {"acceptAllSubdomains": True, "ports": [{"routes": [route(hostPrefix="a")]}]},
        {"acceptAllSubdomains": True, "ports": [{"routes": [route(hostPrefix="a", hostRegex="^a")]}]},
        "spec.ports[0].routes[0].hostRegex",
        "cannot be combined with hostPrefix",
    ),
    (
        "hostPrefix needs acceptAll*",
        "app.example.com",
        {"acceptAllSubdomains": True, "ports": [{"routes": [route(hostPrefix="a")]}]},
        {"ports": [{"routes": [route(hostPrefix="a")]}]},
        "spec.ports[0].routes[0].hostPrefix",
        "needs spec.acceptAllHosts or spec.acceptAllSubdomains",
    ),
    (
        "hostRegex needs acceptAll*",
        "app.example.com",
        {"acceptAllHosts": True, "ports": [{"routes": [route(hostRegex="^a")]}]},
        {"ports": [{"routes": [route(hostRegex="^a")]}]},
        "spec.ports[0].routes[0].hostRegex",
        "needs spec.acceptAllHosts or spec.acceptAllSubdomains",
    ),
    (
        "duplicate prefix on a port",
        "app.example.com",
        {"ports": [{"routes": [route("/a"), route("/b")]}]},
        {"ports": [{"routes": [route("/a"), route("/b"), route("/a", workload="other")]}]},
        "spec.ports[0].routes[2].prefix",
        "same prefix and host as spec.ports[0].routes[0]",
    ),
    (
        "duplicate regex on a port",
        "app.example.com",
        {"ports": [{"routes": [route(None, regex="^/a"), route(None, regex="^/b")]}]},
        {"ports": [{"routes": [route(None, regex="^/a"), route(None, regex="^/a")]}]},
        "spec.ports[0].routes[1].regex",
        "same regex and host as spec.ports[0].routes[0]",
    ),
    (
        "duplicate prefix and host",
        "app.example.com",
        {"acceptAllSubdomains": True, "ports": [{"routes": [route("/", hostPrefix="a"), route("/", hostPrefix="b")]}]},
        {"acceptAllSubdomains": True, "ports": [{"routes": [route("/", hostPrefix="a"), route("/", hostPrefix="a")]}]},
        "spec.ports[0].routes[1].prefix",
        "same prefix and host",
    ),
    (
        "canary total weight",
        "app.example.com",
        {
            "ports": [
                {
                    "routes": [
                        route(
                            canaries=[{"workloadLink": wl("a"), "weight": 60}, {"workloadLink": wl("b"), "weight": 40}]
                        )
                    ]
                }
            ]
        },
        {
            "ports": [
                {
                    "routes": [
                        route(
                            canaries=[{"workloadLink": wl("a"), "weight": 60}, {"workloadLink": wl("b"), "weight": 41}]
                        )
                    ]
                }
            ]
        },
        "spec.ports[0].routes[0].canaries",
        "total weight must be at most 100 (is 101)",
    ),
    (
        "canaries only on http",
        "app.example.com",
        {"ports": [{"number": 443, "protocol": "http", "routes": [route(canaries=CANARY)]}]},
        {"ports": [{"number": 443, "protocol": "tcp", "routes": [route(canaries=CANARY)]}]},
        "spec.ports[0].routes[0].canaries",
        "need a port with protocol http or http2, not tcp",
    ),
    (
        "routes in a single GVC",
        "app.example.com",
        {"ports": [{"routes": [route("/a"), route("/b", workload="x")]}]},
        {"ports": [{"routes": [route("/a"), {"prefix": "/b", "workloadLink": wl("x", gvc="staging")}]}]},
        "spec.ports[0].routes[1].workloadLink",
        SINGLE_GVC,
    ),
    (
        "mirrors in the same GVC",
        "app.example.com",
        {"ports": [{"routes": [route(mirror=[{"workloadLink": wl("m"), "percent": 1}])]}]},
        {"ports": [{"routes": [route(mirror=[{"workloadLink": wl("m", gvc="staging"), "percent": 1}])]}]},
        "spec.ports[0].routes[0].mirror[0].workloadLink",
        "single GVC",
    ),
    (
        "routes on other ports in the same GVC",
        "app.example.com",
        {"ports": [{"routes": [route()]}, {"number": 80, "routes": [route(workload="b")]}]},
        {"ports": [{"routes": [route()]}, {"number": 80, "routes": [{"prefix": "/", "workloadLink": wl("b", "qa")}]}]},
        "spec.ports[1].routes[0].workloadLink",
        "single GVC",
    ),
]


@pytest.mark.parametrize(
    ("name", "valid", "invalid", "path", "message"), [r[1:] for r in RULES], ids=[r[0] for r in RULES]
)
def test_rule(name: str, valid: dict[str, Any], invalid: dict[str, Any], path: str, message: str) -> None:
    accept(valid, name=name)
    errors = reject(invalid, name=name)
    assert list(errors) == [path], errors
    assert message in errors[path]


# --- .internal domains ----------------------------------------------------------------------

INTERNAL = "svc.corp.internal"
CERT = {"serverCertificate": {"secretLink": "//secret/internal-cert"}}


def test_internal_domain_valid_with_server_certificate_on_http_ports() -> None:
    accept({"ports": [{"tls": CERT, "routes": [route()]}, {"number": 5432, "protocol": "tcp"}]}, name=INTERNAL)


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"dnsMode": "ns", "ports": [{"tls": CERT}]}, "spec.dnsMode", ".internal domains support only dnsMode cname"),
        (
            {"gvcLink": "//gvc/prod", "dnsMode": "cname", "ports": [{"tls": CERT}]},
            "spec.gvcLink",
            "is not allowed on .internal domains",
        ),
        (
            {"certChallengeType": "dns01", "ports": [{"tls": CERT}]},
            "spec.certChallengeType",
            "is not allowed on .internal domains",
        ),
        ({"ports": [{}]}, "spec.ports[0].tls.serverCertificate", "is required on .internal domains"),
        (
            {"ports": [{"tls": CERT}, {"number": 8080, "protocol": "http"}]},
            "spec.ports[1].tls.serverCertificate",
            "is required on .internal domains",
        ),
    ],
)
def test_internal_domain_rules(spec: dict[str, Any], path: str, message: str) -> None:
    errors = reject(spec, name=INTERNAL)
    assert list(errors) == [path], errors
    assert message in errors[path]


def test_internal_apex_in_ns_mode_reports_the_internal_rule_only() -> None:
    _, errors = build({"dnsMode": "ns", "ports": [{"tls": CERT}]}, name="corp.internal")
    assert [(e.path, e.message) for e in errors] == [("spec.dnsMode", ".internal domains support only dnsMode cname")]


# --- route limits and the override tag -------------------------------------------------------


def _routes(count: int) -> dict[str, Any]:
    return {"ports": [{"routes": [route(f"/r{i}") for i in range(count)]}]}


@pytest.mark.parametrize(
    ("count", "tags", "ok"),
    [
        (150, None, True),
        (151, None, False),
        (200, {"cpln/routeLimitOverride": "true"}, True),
        (201, {"cpln/routeLimitOverride": "true"}, False),
        (200, {"cpln/routeLimitOverride": True}, True),
        (151, {"cpln/routeLimitOverride": False}, False),
        (151, {"cpln/routeLimitOverride": "FALSE"}, False),
    ],
)
def test_route_limit_per_port(count: int, tags: dict[str, Any] | None, ok: bool) -> None:
    if ok:
        accept(_routes(count), tags=tags)
        return
    limit = 200 if tags and tags["cpln/routeLimitOverride"] in ("true", True) else 150
    errors = reject(_routes(count), tags=tags)
    assert errors == {"spec.ports[0].routes": f"number of routes exceeds maximum of {limit}"}


# --- what is allowed ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        # Dedicated-load-balancer settings are warnings in status, never errors.
        {"acceptAllHosts": True, "ports": [{"number": 8443, "protocol": "tcp", "routes": [route(hostRegex="^a")]}]},
        # The same prefix on two ports, and a prefix equal to a regex text, do not clash.
        {"ports": [{"routes": [route("/a")]}, {"number": 80, "routes": [route("/a")]}]},
        {"ports": [{"routes": [route("/a"), route(None, regex="/a")]}]},
        # Weight 0 disables a canary; two canaries may sum to exactly 100.
        {"ports": [{"routes": [route(canaries=[{"workloadLink": wl("a"), "weight": 0}])]}]},
        # Short and full links to the same GVC are one GVC.
        {"ports": [{"routes": [route("/a"), {"prefix": "/b", "workloadLink": f"/org/{ORG}/gvc/prod/workload/b"}]}]},
        # ns on a subdomain.
        {"dnsMode": "ns", "gvcLink": "//gvc/prod"},
    ],
)
def test_allowed_configurations(spec: dict[str, Any]) -> None:
    accept(spec)


# --- every error at once ----------------------------------------------------------------------


def test_all_rule_errors_are_reported_together_with_paths() -> None:
    spec = {
        "dnsMode": "ns",
        "certChallengeType": "http01",
        "acceptAllHosts": True,
        "acceptAllSubdomains": True,
        "ports": [
            {"routes": [route("/a"), route("/a", workload="b"), route("/c", regex="^/c")]},
            {
                "number": 443,
                "cors": {"allowOrigins": [{}]},
                "routes": [
                    route(
                        canaries=[
                            {"workloadLink": wl("x", "qa"), "weight": 70},
                            {"workloadLink": wl("y"), "weight": 70},
                        ]
                    )
                ],
            },
        ],
    }
    _, errors = build(spec, name="example.com")
    assert [(e.path, e.message.split(" (")[0].split(":")[0]) for e in errors] == [
        ("spec.dnsMode", "cname is the only valid dnsMode for apex domain"),
        ("spec.certChallengeType", "must be dns01 when dnsMode is ns"),
        ("spec.acceptAllSubdomains", "cannot be combined with acceptAllHosts"),
        ("spec.ports[1].number", "duplicates spec.ports[0].number"),
        ("spec.ports[1].cors.allowOrigins[0]", "needs exactly one of exact or regex"),
        ("spec.ports[0].routes[1].prefix", "same prefix and host as spec.ports[0].routes[0]"),
        ("spec.ports[0].routes[2].regex", "cannot be combined with prefix"),
        ("spec.ports[1].routes[0].canaries", "total weight must be at most 100"),
        ("spec.ports[1].routes[0].canaries[0].workloadLink", SINGLE_GVC),
    ]
