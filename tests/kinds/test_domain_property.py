"""Property: a stored domain re-validates to itself (defaults and normalisation are a fixed point)."""

from __future__ import annotations

from typing import Any

from _domain_support import ORG, build, context
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from plinth.engine.pipeline import build_candidate
from plinth.kinds.domain import DOMAIN
from plinth.kinds.domain.models import CIPHER_SUITES

NAMES = st.sampled_from(["app.example.com", "example.com", "a.b.example.io", "svc.corp.internal"])
WORKLOADS = st.sampled_from(["//gvc/prod/workload/web", f"/org/{ORG}/gvc/prod/workload/api", "//gvc/prod/workload/db"])
HEADER_VALUES = st.sampled_from(["%START_TIME%", "ip=%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", "x", "100%%"])


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


@st.composite
def routes(draw: st.DrawFn, accept_other_hosts: bool) -> list[dict[str, Any]]:
    prefixes = draw(st.lists(st.sampled_from(["/", "/a", "/b/c", "/api"]), unique=True, max_size=3))
    out: list[dict[str, Any]] = []
    for prefix in prefixes:
        one: dict[str, Any] = {"workloadLink": draw(WORKLOADS)}
        # A "/" route may leave the prefix out: prepare fills it in.
        if prefix != "/" or draw(st.booleans()):
            one["prefix"] = prefix
        extras = {
            "replacePrefix": optional(st.sampled_from(["/", "/v2"])),
            "port": optional(st.integers(1, 65535)),
            "replica": optional(st.integers(0, 5)),
            "hostPrefix": optional(st.sampled_from(["api", "v1.x_y-"])) if accept_other_hosts else st.none(),
            "headers": optional(
                st.fixed_dictionaries(
                    {
                        "request": st.fixed_dictionaries(
                            {"set": st.dictionaries(st.sampled_from(["X-A", "x-b"]), HEADER_VALUES, max_size=2)}
                        )
                    }
                )
            ),
            "mirror": optional(
                st.lists(
                    st.fixed_dictionaries({"workloadLink": WORKLOADS, "percent": st.floats(0, 100, allow_nan=False)}),
                    max_size=2,
                )
            ),
            "canaries": optional(
                st.lists(st.fixed_dictionaries({"workloadLink": WORKLOADS, "weight": st.integers(0, 50)}), max_size=2)
            ),
        }
        for key, strategy in extras.items():
            value = draw(strategy)
            if value is not None:
                one[key] = value
        out.append(one)
    return out


@st.composite
def ports(draw: st.DrawFn, with_routes: bool, accept_other_hosts: bool) -> list[dict[str, Any]]:
    numbers = draw(st.lists(st.sampled_from([443, 80, 8443]), unique=True, max_size=3))
    out: list[dict[str, Any]] = []
    for number in numbers:
        port: dict[str, Any] = {"number": number}
        protocol = draw(optional(st.sampled_from(["http", "http2"])))
        if protocol is not None:
            port["protocol"] = protocol
        cors = draw(
            optional(
                st.fixed_dictionaries(
                    {"allowHeaders": st.lists(st.sampled_from(["X-Trace", "x-trace", "Accept"]), max_size=3)},
                    optional={
                        "maxAge": st.sampled_from(["24h", "5m", "0s"]),
                        "allowCredentials": st.booleans(),
                        "allowOrigins": st.lists(st.sampled_from([{"exact": "https://a.io"}, {"regex": ".*"}])),
                    },
                )
            )
        )
        if cors is not None:
            port["cors"] = cors
        tls = draw(
            optional(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "minProtocolVersion": st.sampled_from(["TLSV1_3", "TLSV1_2"]),
                        "cipherSuites": st.lists(st.sampled_from(CIPHER_SUITES), min_size=1, max_size=4, unique=True),
                        "serverCertificate": st.just({"secretLink": "//secret/cert"}),
                    },
                )
            )
        )
        if tls is not None:
            port["tls"] = tls
        if with_routes:
            port["routes"] = draw(routes(accept_other_hosts))
        out.append(port)
    return out


@st.composite
def domain_bodies(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any]]:
    spec: dict[str, Any] = {}
    subdomain_routing = draw(st.booleans())
    if subdomain_routing:
        spec["gvcLink"] = "//gvc/prod"
    for key, strategy in {
        "dnsMode": st.sampled_from(["cname", "ns"]),
        "certChallengeType": st.sampled_from(["http01", "dns01"]),
        "acceptAllSubdomains": st.booleans(),
    }.items():
        value = draw(optional(strategy))
        if value is not None:
            spec[key] = value
    spec["ports"] = draw(ports(not subdomain_routing, bool(spec.get("acceptAllSubdomains"))))
    tags = draw(st.sampled_from([{}, {"cpln/routeLimitOverride": "true"}, {"team": "web"}]))
    return draw(NAMES), spec, tags


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(domain_bodies())
def test_stored_domain_is_a_fixed_point(body: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    name, spec, tags = body
    stored, errors = build(spec, name=name, tags=tags)
    note(f"errors: {errors}")
    assume(not errors)
    again, errors_again = build_candidate(DOMAIN, stored, None, context(), name)
    assert errors_again == []
    assert again == stored
    assert DOMAIN.status.compute(again, context()) == DOMAIN.status.compute(stored, context())
