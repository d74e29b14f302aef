"""The domain kind's schema: stored defaults, enums, bounds, unknown fields, names, references."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _domain_support import NAME, ORG, accept, build, reject, route, wl

from plinth.kinds import REGISTRY
from plinth.kinds.domain import DOMAIN
from plinth.kinds.domain.models import CIPHER_SUITES, DEFAULT_CIPHER_SUITES

DEFAULT_TLS = {"minProtocolVersion": "TLSV1_2", "cipherSuites": list(DEFAULT_CIPHER_SUITES)}


def test_registered_as_org_scoped_domain() -> None:
    assert REGISTRY["domain"] is DOMAIN
    assert (DOMAIN.name, DOMAIN.scope, DOMAIN.presentation.title) == ("domain", "org", "Domain")
    assert set(DOMAIN.access.permissions) == {"create", "delete", "edit", "manage", "view"}
    assert {"spec.dnsMode", "spec.gvcLink", "name"} <= set(DOMAIN.presentation.query_properties)


def test_cipher_suite_enum_has_21_members_and_8_defaults() -> None:
    assert len(CIPHER_SUITES) == len(set(CIPHER_SUITES)) == 21
    assert CIPHER_SUITES[:8] == DEFAULT_CIPHER_SUITES
    assert "AES128-GCM-SHA256" in DEFAULT_CIPHER_SUITES
    assert "DES-CBC3-SHA" not in DEFAULT_CIPHER_SUITES


@pytest.mark.parametrize("spec", [None, {}])
def test_minimal_domain_stores_api_defaults(spec: dict[str, Any] | None) -> None:
    item = accept(spec)
    assert item["description"] == NAME
    assert item["spec"] == {
        "dnsMode": "cname",
        "certChallengeType": "http01",
        "acceptAllHosts": False,
        "acceptAllSubdomains": False,
    }


def test_port_defaults_include_tls_on_443() -> None:
    item = accept({"ports": [{}]})
    assert item["spec"]["ports"] == [{"number": 443, "protocol": "http2", "tls": DEFAULT_TLS}]


@pytest.mark.parametrize(
    ("port", "gets_tls"),
    [
        ({"number": 443, "protocol": "http"}, True),
        ({"number": 443, "protocol": "http2"}, True),
        ({"number": 443, "protocol": "tcp"}, False),
        ({"number": 80, "protocol": "http"}, False),
        ({"number": 8443, "protocol": "http2"}, False),
    ],
)
def test_default_tls_only_on_443_http(port: dict[str, Any], gets_tls: bool) -> None:
    stored = accept({"ports": [port]})["spec"]["ports"][0]
    assert ("tls" in stored) is gets_tls
    if gets_tls:
        assert stored["tls"] == DEFAULT_TLS


def test_tls_cannot_be_removed_from_443() -> None:
    stored = accept({"ports": [{"number": 443, "protocol": "http", "tls": None}]})["spec"]["ports"][0]
    assert stored["tls"] == DEFAULT_TLS


def test_tls_block_given_empty_gets_defaults_and_explicit_values_stay() -> None:
    ports = accept(
        {
            "ports": [
                {"tls": {}},
                {"number": 8443, "tls": {"minProtocolVersion": "TLSV1_3", "cipherSuites": ["AES256-SHA"]}},
            ]
        }
    )
    stored = ports["spec"]["ports"]
    assert stored[0]["tls"] == DEFAULT_TLS
    assert stored[1]["tls"] == {"minProtocolVersion": "TLSV1_3", "cipherSuites": ["AES256-SHA"]}


def test_maximal_domain_round_trips_every_field() -> None:
    spec: dict[str, Any] = {
        "dnsMode": "cname",
        "certChallengeType": "dns01",
        "acceptAllHosts": True,
        "acceptAllSubdomains": False,
        "ports": [
            {
                "number": 443,
                "protocol": "http",
                "cors": {
                    "allowOrigins": [{"exact": "https://a.example.com"}, {"regex": r".*\.example\.com"}],
                    "allowMethods": ["GET", "POST"],
                    "allowHeaders": ["Authorization", "X-Trace"],
                    "exposeHeaders": ["X-Request-Id"],
                    "maxAge": "90m",
                    "allowCredentials": True,
                },
                "tls": {
                    "minProtocolVersion": "TLSV1_3",
                    "cipherSuites": list(CIPHER_SUITES),
                    "clientCertificate": {"secretLink": "//secret/ca"},
                    "serverCertificate": {"secretLink": f"/org/{ORG}/secret/cert"},
                },
                "routes": [
                    {
                        "prefix": "/api",
                        "replacePrefix": "/",
                        "workloadLink": wl("api"),
                        "port": 8080,
                        "hostPrefix": "v1.api_x-",
                        "headers": {"request": {"set": {"X-Server": "%REQUESTED_SERVER_NAME%"}}},
                        "replica": 0,
                        "mirror": [{"workloadLink": wl("shadow"), "percent": 12.5, "port": 9090}],
                        "canaries": [{"workloadLink": wl("next"), "weight": 30, "port": 8081}],
                    },
                    {"regex": "^/v[0-9]+/", "workloadLink": wl("web"), "hostRegex": "^api\\."},
                ],
            }
        ],
    }
    stored = accept(spec)["spec"]
    expected = copy.deepcopy(spec)
    # The only normalisation: cors header names are stored lowercased.
    expected["ports"][0]["cors"]["allowHeaders"] = ["authorization", "x-trace"]
    expected["ports"][0]["cors"]["exposeHeaders"] = ["x-request-id"]
    assert stored == expected


def test_cors_header_names_lowercased_and_deduplicated() -> None:
    cors = accept({"ports": [{"cors": {"allowHeaders": ["X-A", "x-a", "Content-Type"]}}]})["spec"]["ports"][0]["cors"]
    assert cors == {"allowHeaders": ["x-a", "content-type"], "maxAge": "24h", "allowCredentials": False}


def test_route_without_prefix_or_regex_gets_prefix_slash() -> None:
    stored = accept({"ports": [{"routes": [route(prefix=None)]}]})["spec"]["ports"][0]["routes"][0]
    assert stored == {"prefix": "/", "workloadLink": wl("web")}


def test_regex_route_gets_no_prefix() -> None:
    stored = accept({"ports": [{"routes": [route(prefix=None, regex="^/x")]}]})["spec"]["ports"][0]["routes"][0]
    assert "prefix" not in stored


# --- enums --------------------------------------------------------------------------------

ENUMS: list[tuple[str, list[str], str]] = [
    ("dnsMode", ["cname", "ns"], "spec.dnsMode"),
    ("certChallengeType", ["http01", "dns01"], "spec.certChallengeType"),
    ("protocol", ["http", "http2", "tcp"], "spec.ports[0].protocol"),
    ("minProtocolVersion", ["TLSV1_3", "TLSV1_2", "TLSV1_1", "TLSV1_0"], "spec.ports[0].tls.minProtocolVersion"),
]


def _spec_with(field: str, value: Any) -> dict[str, Any]:
    if field in ("dnsMode", "certChallengeType"):
        # dns01 everywhere keeps ns valid; a subdomain keeps ns valid too.
        return {field: value} if field == "certChallengeType" else {field: value, "certChallengeType": "dns01"}
    if field == "protocol":
        return {"ports": [{"number": 80, "protocol": value}]}
    return {"ports": [{"tls": {field: value}}]}


@pytest.mark.parametrize(("field", "values", "path"), ENUMS)
def test_each_enum_value_is_accepted_and_others_rejected(field: str, values: list[str], path: str) -> None:
    for value in values:
        accept(_spec_with(field, value))
    for bad in [values[0].swapcase(), "other", ""]:
        errors = reject(_spec_with(field, bad))
        assert list(errors) == [path]
        assert "Input should be" in errors[path]


@pytest.mark.parametrize("suite", CIPHER_SUITES)
def test_every_cipher_suite_is_accepted(suite: str) -> None:
    accept({"ports": [{"tls": {"cipherSuites": [suite]}}]})


@pytest.mark.parametrize(
    ("suites", "message"),
    [
        (["RC4-MD5"], "Input should be"),
        ([], "at least 1 item"),
        (["AES256-SHA", "AES256-SHA"], "must not list the same cipher suite twice"),
    ],
)
def test_bad_cipher_suites(suites: list[str], message: str) -> None:
    errors = reject({"ports": [{"tls": {"cipherSuites": suites}}]})
    assert any(message in m and p.startswith("spec.ports[0].tls.cipherSuites") for p, m in errors.items()), errors


# --- bounds (both sides of each boundary) -------------------------------------------------

BOUNDS: list[tuple[str, Any, bool, str]] = [
    ("port.number", 1, True, ""),
    ("port.number", 65535, True, ""),
    ("port.number", 0, False, "spec.ports[0].number"),
    ("port.number", 65536, False, "spec.ports[0].number"),
    ("route.port", 1, True, ""),
    ("route.port", 65535, True, ""),
    ("route.port", 0, False, "spec.ports[0].routes[0].port"),
    ("route.port", 65536, False, "spec.ports[0].routes[0].port"),
    ("route.replica", 0, True, ""),
    ("route.replica", -1, False, "spec.ports[0].routes[0].replica"),
    ("mirror.percent", 0, True, ""),
    ("mirror.percent", 100, True, ""),
    ("mirror.percent", 99.99, True, ""),
    ("mirror.percent", -0.01, False, "spec.ports[0].routes[0].mirror[0].percent"),
    ("mirror.percent", 100.01, False, "spec.ports[0].routes[0].mirror[0].percent"),
    ("canary.weight", 0, True, ""),
    ("canary.weight", 100, True, ""),
    ("canary.weight", -1, False, "spec.ports[0].routes[0].canaries[0].weight"),
    ("canary.weight", 101, False, "spec.ports[0].routes[0].canaries[0].weight"),
    ("canary.weight", 50.5, False, "spec.ports[0].routes[0].canaries[0].weight"),
    ("cors.maxAge", "0s", True, ""),
    ("cors.maxAge", "24h", True, ""),
    ("cors.maxAge", "15m", True, ""),
    ("cors.maxAge", "24", False, "spec.ports[0].cors.maxAge"),
    ("cors.maxAge", "1d", False, "spec.ports[0].cors.maxAge"),
    ("cors.maxAge", "h", False, "spec.ports[0].cors.maxAge"),
    ("cors.maxAge", " 24h", False, "spec.ports[0].cors.maxAge"),
]


def _spec_at(where: str, value: Any) -> dict[str, Any]:
    target, field = where.split(".")
    if target == "port":
        return {"ports": [{field: value}]}
    if target == "cors":
        return {"ports": [{"cors": {field: value}}]}
    one_route = route()
    if target == "route":
        one_route[field] = value
    elif target == "mirror":
        one_route["mirror"] = [{"workloadLink": wl("shadow"), field: value}]
    else:
        one_route["canaries"] = [{"workloadLink": wl("next"), field: value}]
    return {"ports": [{"routes": [one_route]}]}


@pytest.mark.parametrize(("where", "value", "ok", "path"), BOUNDS)
def test_bounds(where: str, value: Any, ok: bool, path: str) -> None:
    spec = _spec_at(where, value)
    if ok:
        accept(spec)
    else:
        assert list(reject(spec)) == [path]


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"ports": [{"number": "443"}]}, "spec.ports[0].number"),
        ({"ports": [{"number": 443.0}]}, "spec.ports[0].number"),
        ({"ports": [{"number": True}]}, "spec.ports[0].number"),
        ({"acceptAllHosts": "true"}, "spec.acceptAllHosts"),
        ({"gvcLink": 5}, "spec.gvcLink"),
        ({"ports": {"number": 443}}, "spec.ports"),
        ({"ports": [{"cors": {"allowMethods": "GET"}}]}, "spec.ports[0].cors.allowMethods"),
    ],
)
def test_types_are_strict(spec: dict[str, Any], path: str) -> None:
    assert path in reject(spec)


# --- shapes checked by the schema ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"dns_mode": "ns"}, "spec.dns_mode", "unknown field"),
        ({"ports": [{"numbr": 443}]}, "spec.ports[0].numbr", "unknown field"),
        (
            {"ports": [{"tls": {"serverCertificate": {"secretLink": "//secret/a", "x": 1}}}]},
            "spec.ports[0].tls.serverCertificate.x",
            "unknown field",
        ),
        ({"ports": [{"routes": [route(weight=1)]}]}, "spec.ports[0].routes[0].weight", "unknown field"),
        (
            {"ports": [{"cors": {"allowOrigins": [{"prefix": "x"}]}}]},
            "spec.ports[0].cors.allowOrigins[0].prefix",
            "unknown field",
        ),
        (
            {"ports": [{"routes": [route(headers={"response": {}})]}]},
            "spec.ports[0].routes[0].headers.response",
            "unknown field",
        ),
        ({"ports": [{"routes": [{"prefix": "/"}]}]}, "spec.ports[0].routes[0].workloadLink", "is required"),
        (
            {"ports": [{"routes": [route(mirror=[{"workloadLink": wl("a")}])]}]},
            "spec.ports[0].routes[0].mirror[0].percent",
            "is required",
        ),
        (
            {"ports": [{"routes": [route(canaries=[{"weight": 5}])]}]},
            "spec.ports[0].routes[0].canaries[0].workloadLink",
            "is required",
        ),
        (
            {"ports": [{"tls": {"clientCertificate": {}}}]},
            "spec.ports[0].tls.clientCertificate.secretLink",
            "is required",
        ),
        ({"ports": [{"routes": [route(prefix="api")]}]}, "spec.ports[0].routes[0].prefix", "must start with '/'"),
        (
            {"ports": [{"routes": [route(hostPrefix="a/b")]}]},
            "spec.ports[0].routes[0].hostPrefix",
            "may contain only letters, digits, '.', '_' and '-'",
        ),
        (
            {"ports": [{"routes": [route(hostPrefix="a b")]}]},
            "spec.ports[0].routes[0].hostPrefix",
            "may contain only letters, digits, '.', '_' and '-'",
        ),
        ({"ports": [{"routes": [route(regex="")]}]}, "spec.ports[0].routes[0].regex", "at least 1 character"),
        ({"gvcLink": ""}, "spec.gvcLink", "at least 1 character"),
    ],
)
def test_schema_errors_name_the_field(spec: dict[str, Any], path: str, message: str) -> None:
    errors = reject(spec)
    assert path in errors, errors
    assert message in errors[path]


def test_unknown_top_level_field_is_rejected_with_its_path() -> None:
    _, errors = build({}, extra={"spek": {}})
    assert [(e.path, e.message) for e in errors] == [("spek", "unknown field")]


def test_schema_errors_are_all_reported_together() -> None:
    _, errors = build({"dnsMode": "x", "ports": [{"number": 0, "protocol": "udp", "bogus": 1}]})
    assert {e.path for e in errors} == {
        "spec.dnsMode",
        "spec.ports[0].number",
        "spec.ports[0].protocol",
        "spec.ports[0].bogus",
    }


# --- headers.request.set -------------------------------------------------------------------

SET_PATH = "spec.ports[0].routes[0].headers.request.set"


@pytest.mark.parametrize(
    "value",
    [
        "%REQUESTED_SERVER_NAME%",
        "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
        "%START_TIME%",
        "plain text",
        "",
        "client=%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%; at %START_TIME%",
        "100%% sure",
    ],
)
def test_header_values_accept_literal_text_and_allowed_variables(value: str) -> None:
    accept({"ports": [{"routes": [route(headers={"request": {"set": {"X-H": value}}})]}]})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("%HOSTNAME%", "unknown variable %HOSTNAME%"),
        ("%start_time%", "unknown variable %start_time%"),
        ("50% off", "a '%' must open one of the allowed variables"),
        ("%START_TIME", "a '%' must open one of the allowed variables"),
    ],
)
def test_header_values_reject_other_variables(value: str, message: str) -> None:
    errors = reject({"ports": [{"routes": [route(headers={"request": {"set": {"X-H": value}}})]}]})
    assert message in errors[f"{SET_PATH}.X-H"]


def test_header_names_must_be_tokens() -> None:
    errors = reject({"ports": [{"routes": [route(headers={"request": {"set": {"X H": "v"}}})]}]})
    assert "not a valid HTTP header name: 'X H'" in errors[SET_PATH]


# --- the name rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "example.com",
        "app.example.com",
        "a.b.c.d.example.io",
        "x1-y2.example.co",
        "0day.example.com",
        "xn--bcher-kva.example",
        "svc.corp.internal",
        f"{'a' * 63}.com",
        ".".join(["a" * 63] * 3 + ["b" * 61]),  # 253 characters exactly
    ],
)
def test_valid_names(name: str) -> None:
    assert DOMAIN.schema.name_rule(name) is None


def test_longest_name_is_accepted_without_a_description() -> None:
    name = ".".join(["a" * 63] * 3 + ["b" * 61])
    item = accept({}, name=name)
    assert item["description"] == name[:250]


def test_longest_name_is_accepted_with_a_description() -> None:
    item = accept({}, name=".".join(["a" * 63] * 3 + ["b" * 61]), extra={"description": "long"})
    assert len(item["name"]) == 253


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Example.com", "must be lowercase"),
        ("example.com.", "must not end with '.'"),
        ("localhost", "top-level domain"),
        ("example..com", "empty labels"),
        (".example.com", "empty labels"),
        (f"{'a' * 64}.com", "at most 63 characters"),
        (".".join(["a" * 63] * 3 + ["b" * 62]), "at most 253 characters"),
        ("-app.example.com", "must not start or end with '-'"),
        ("app-.example.com", "must not start or end with '-'"),
        ("app_1.example.com", "may contain only a-z, 0-9 and '-'"),
        ("*.example.com", "may contain only a-z, 0-9 and '-'"),
        ("10.0.0.1", "top-level domain must contain a letter"),
    ],
)
def test_invalid_names(name: str, message: str) -> None:
    problem = DOMAIN.schema.name_rule(name)
    assert problem is not None and message in problem
    _, errors = build({}, name=name)
    assert ("name", problem) in [(e.path, e.message) for e in errors]


# --- references ----------------------------------------------------------------------------


def test_references_list_every_link_with_its_path() -> None:
    item = accept(
        {
            "ports": [
                {
                    "tls": {
                        "clientCertificate": {"secretLink": "//secret/ca"},
                        "serverCertificate": {"secretLink": "//secret/c"},
                    },
                    "routes": [
                        route(
                            mirror=[{"workloadLink": wl("m"), "percent": 5}],
                            canaries=[{"workloadLink": wl("c"), "weight": 5}],
                        )
                    ],
                }
            ],
        }
    )
    refs = {(r.path, r.link, tuple(sorted(r.kinds or ())), r.must_exist) for r in DOMAIN.rules.references(item, ORG)}
    base = "spec.ports[0]"
    assert refs == {
        (f"{base}.routes[0].workloadLink", wl("web"), ("workload",), False),
        (f"{base}.routes[0].workloadLink", f"/org/{ORG}/gvc/prod", ("gvc",), False),
        (f"{base}.routes[0].mirror[0].workloadLink", wl("m"), ("workload",), False),
        (f"{base}.routes[0].canaries[0].workloadLink", wl("c"), ("workload",), False),
        (f"{base}.tls.clientCertificate.secretLink", "//secret/ca", ("secret",), False),
        (f"{base}.tls.serverCertificate.secretLink", "//secret/c", ("secret",), False),
    }


def test_gvc_link_reference_must_exist() -> None:
    item = accept({"gvcLink": "//gvc/prod"})
    assert [(r.path, r.link, r.kinds, r.must_exist) for r in DOMAIN.rules.references(item, ORG)] == [
        ("spec.gvcLink", "//gvc/prod", frozenset({"gvc"}), True)
    ]


def test_replica_direct_workload_link_is_a_reference() -> None:
    item = accept({"workloadLink": wl("db"), "ports": [{"routes": [route(workload="db")]}]})
    refs = DOMAIN.rules.references(item, ORG)
    assert ("spec.workloadLink", wl("db"), False) in [(r.path, r.link, r.must_exist) for r in refs]
    # One GVC reference, however many workload links point into it.
    assert [r.link for r in refs if r.kinds == frozenset({"gvc"})] == [f"/org/{ORG}/gvc/prod"]


def test_foreign_org_workload_adds_no_gvc_reference() -> None:
    item = accept({"ports": [{"routes": [{"prefix": "/", "workloadLink": "/org/other/gvc/g/workload/w"}]}]})
    refs = DOMAIN.rules.references(item, ORG)
    assert [r.kinds for r in refs] == [frozenset({"workload"})]
