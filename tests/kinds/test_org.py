"""The org kind, driven through the engine's own write pipeline (build_candidate)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds import REGISTRY
from plinth.kinds.base import CRUD_VERBS, Item, KindContext
from plinth.kinds.org import ORG

CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z")


def write(
    spec: Any = None, *, name: str = "acme", body: dict[str, Any] | None = None, old: Item | None = None
) -> tuple[Item, list[FieldError]]:
    """Run one org write as the engine does: strip server-owned fields, then build."""
    full = {"spec": spec} if body is None else body
    return build_candidate(ORG, strip_server_owned(ORG, full), old, CTX, name)


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def errors_for(spec: dict[str, Any]) -> list[str]:
    return paths(write(spec)[1])


MAXIMAL_SPEC: dict[str, Any] = {
    "logging": {"s3": {"bucket": "logs", "region": "us-east-1", "credentials": "//secret/s3", "prefix": "acme/"}},
    "extraLogging": [
        {"datadog": {"credentials": "//secret/dd", "host": "http-intake.logs.datadoghq.eu"}},
        {"opentelemetry": {"endpoint": "https://otel.example.com", "headers": {"x-team": "a"}}},
    ],
    "tracing": {
        "sampling": 12.5,
        "provider": {"otel": {"endpoint": "otel:4317"}},
        "customTags": {"team": {"literal": {"value": "core"}}},
    },
    "sessionTimeoutSeconds": 3600,
    "authConfig": {"domainAutoMembers": ["example.com"], "samlOnly": True},
    "observability": {
        "logsRetentionDays": 30,
        "metricsRetentionDays": 0,
        "tracesRetentionDays": 7,
        "defaultAlertEmails": ["ops@example.com"],
    },
    "security": {
        "threatDetection": {
            "enabled": True,
            "minimumSeverity": "error",
            "syslog": {"transport": "udp", "host": "siem.example.com", "port": 514},
        }
    },
}

ONE_OF_EACH_PROVIDER: list[dict[str, Any]] = [
    {"s3": {"bucket": "b", "region": "r", "credentials": "//secret/c"}},
    {"coralogix": {"credentials": "//secret/c", "cluster": "coralogix.com", "app": "a", "subsystem": "s"}},
    {"datadog": {"credentials": "//secret/c"}},
    {"logzio": {"credentials": "//secret/c", "listenerHost": "listener.logz.io"}},
    {"elastic": {"aws": {"host": "h", "port": 443, "index": "i", "type": "t", "credentials": "c", "region": "r"}}},
    {"elastic": {"elasticCloud": {"index": "i", "type": "t", "credentials": "c", "cloudId": "id"}}},
    {"elastic": {"generic": {"host": "h", "index": "i", "type": "t", "credentials": "c", "port": 9200}}},
    {
        "cloudWatch": {
            "credentials": "c",
            "groupName": "g",
            "streamName": "s",
            "region": "eu-west-1",
            "retentionDays": 14,
            "extractFields": {"level": "$.level"},
        }
    },
    {"fluentd": {"host": "fluentd.example.com", "port": 24224}},
    {"stackdriver": {"credentials": "c", "location": "us-east1"}},
    {"syslog": {"host": "h", "port": 514, "mode": "tls", "format": "rfc5424", "severity": 6}},
    {"opentelemetry": {"endpoint": "https://otel.example.com"}},
]


def test_minimal_org_stores_an_empty_spec_and_fills_the_description() -> None:
    item, errors = write()
    assert errors == []
    assert item == {"kind": "org", "name": "acme", "description": "acme", "tags": {}, "spec": {}}


def test_maximal_org_is_stored_exactly_as_sent() -> None:
    item, errors = write(copy.deepcopy(MAXIMAL_SPEC))
    assert errors == []
    assert item["spec"] == MAXIMAL_SPEC


def test_status_names_the_account_and_endpoint_prefix_after_the_org() -> None:
    item, _ = write(name="globex")
    assert ORG.status.compute(item, CTX) == {
        "accountLink": "/account/globex",
        "active": True,
        "endpointPrefix": "globex",
    }


def test_declaration_orgs_are_root_scoped_and_never_deleted() -> None:
    assert REGISTRY["org"] is ORG
    assert ORG.scope == "root" and ORG.presentation.title == "Org"
    assert ORG.access.verbs == CRUD_VERBS - {"delete"}
    assert {"id", "name", "spec.sessionTimeoutSeconds"} <= set(ORG.presentation.query_properties)


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("acme", True),
        ("ab", True),
        ("a" * 64, True),
        ("indexes", True),
        ("my-index", True),
        ("xserve", True),
        ("serve-x", True),
        ("index", False),
        ("xserve-eu", False),
        ("xserve-", False),
        ("a", False),
        ("a" * 65, False),
        ("Acme", False),
        ("acme-", False),
        ("1acme", False),
    ],
)
def test_org_names(name: str, allowed: bool) -> None:
    _, errors = write(name=name)
    assert (paths(errors) == []) is allowed
    if not allowed:
        assert paths(errors) == ["name"]


def test_reserved_names_say_why() -> None:
    _, errors = write(name="xserve-eu")
    assert "reserved" in errors[0].message


@pytest.mark.parametrize("destination", ONE_OF_EACH_PROVIDER, ids=lambda d: next(iter(d)))
def test_every_logging_provider_is_accepted_in_logging_and_extra_logging(destination: dict[str, Any]) -> None:
    item, errors = write({"logging": destination, "extraLogging": [destination]})
    assert errors == []
    assert item["spec"]["logging"] == destination
    assert item["spec"]["extraLogging"] == [destination]


@pytest.mark.parametrize(
    "destination",
    [{}, {"s3": {"bucket": "b", "region": "r", "credentials": "c"}, "datadog": {"credentials": "c"}}],
    ids=["no provider", "two providers"],
)
def test_a_log_destination_names_exactly_one_provider(destination: dict[str, Any]) -> None:
    _, errors = write({"logging": destination, "extraLogging": [{"fluentd": {"host": "h"}}, destination]})
    assert paths(errors) == ["spec.logging", "spec.extraLogging[1]"]
    assert "exactly one logging provider" in errors[0].message


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ({"s3": {"bucket": "b"}}, ["spec.logging.s3.region", "spec.logging.s3.credentials"]),
        ({"s3": {"bucket": "b", "region": "r", "credentials": "c", "acl": "x"}}, ["spec.logging.s3.acl"]),
        ({"datadog": {"credentials": ""}}, ["spec.logging.datadog.credentials"]),
        ({"elastic": {}}, ["spec.logging.elastic"]),
        (
            {"elastic": {"generic": {"host": "h", "index": "i", "type": "t"}}},
            ["spec.logging.elastic.generic.credentials"],
        ),
        ({"syslog": {"host": "h", "port": 514, "mode": "http"}}, ["spec.logging.syslog.mode"]),
        ({"syslog": {"host": "h", "port": 514, "format": "json"}}, ["spec.logging.syslog.format"]),
        ({"fluentd": {"host": "h", "port": "24224"}}, ["spec.logging.fluentd.port"]),
        (
            {"cloudWatch": {"credentials": "c", "groupName": "g", "streamName": "s", "retentionDays": -1}},
            ["spec.logging.cloudWatch.retentionDays"],
        ),
    ],
)
def test_provider_fields_are_closed_typed_and_required_where_needed(
    destination: dict[str, Any], expected: list[str]
) -> None:
    assert errors_for({"logging": destination}) == expected


@pytest.mark.parametrize(("severity", "ok"), [(-1, False), (0, True), (7, True), (8, False)])
def test_syslog_severity_bounds(severity: int, ok: bool) -> None:
    errors = errors_for({"logging": {"syslog": {"host": "h", "port": 514, "severity": severity}}})
    assert errors == ([] if ok else ["spec.logging.syslog.severity"])


@pytest.mark.parametrize(("port", "ok"), [(0, False), (1, True), (65535, True), (65536, False)])
def test_port_bounds(port: int, ok: bool) -> None:
    errors = errors_for({"logging": {"fluentd": {"host": "h", "port": port}}})
    assert errors == ([] if ok else ["spec.logging.fluentd.port"])


@pytest.mark.parametrize(("sampling", "ok"), [(-1, False), (0, True), (100, True), (100.5, False), ("5", False)])
def test_tracing_sampling_is_a_percentage(sampling: Any, ok: bool) -> None:
    errors = errors_for({"tracing": {"sampling": sampling, "provider": {"controlplane": {}}}})
    assert errors == ([] if ok else ["spec.tracing.sampling"])


@pytest.mark.parametrize(
    ("tracing", "expected"),
    [
        ({"sampling": 1}, ["spec.tracing"]),
        ({"sampling": 1, "provider": {}}, ["spec.tracing.provider"]),
        ({"sampling": 1, "provider": {"otel": {"endpoint": "e"}, "controlplane": {}}}, ["spec.tracing.provider"]),
        ({"sampling": 1, "lightstep": {"endpoint": "e"}, "provider": {"controlplane": {}}}, ["spec.tracing"]),
        ({"provider": {"controlplane": {}}}, ["spec.tracing.sampling"]),
        ({"sampling": 1, "provider": {"otel": {}}}, ["spec.tracing.provider.otel.endpoint"]),
        ({"sampling": 1, "provider": {"controlplane": {"x": 1}}}, ["spec.tracing.provider.controlplane.x"]),
    ],
)
def test_tracing_names_exactly_one_destination(tracing: dict[str, Any], expected: list[str]) -> None:
    assert errors_for({"tracing": tracing}) == expected


def test_legacy_lightstep_tracing_is_still_accepted() -> None:
    tracing = {"sampling": 50.0, "lightstep": {"endpoint": "ingest.lightstep.com:443", "credentials": "//secret/l"}}
    item, errors = write({"tracing": tracing})
    assert errors == []
    assert item["spec"]["tracing"] == tracing


@pytest.mark.parametrize(
    ("seconds", "ok"),
    [(0, False), (1, True), (86400, True), (-5, False), ("900", False), (True, False), (900.5, False)],
)
def test_session_timeout_is_a_positive_integer(seconds: Any, ok: bool) -> None:
    assert errors_for({"sessionTimeoutSeconds": seconds}) == ([] if ok else ["spec.sessionTimeoutSeconds"])


@pytest.mark.parametrize(("days", "ok"), [(-1, False), (0, True), (3650, True)])
def test_retention_days_are_non_negative(days: int, ok: bool) -> None:
    assert errors_for({"observability": {"tracesRetentionDays": days}}) == (
        [] if ok else ["spec.observability.tracesRetentionDays"]
    )


@pytest.mark.parametrize(
    ("email", "ok"),
    [
        ("ops@example.com", True),
        ("a.b+c@sub.example.io", True),
        ("ops", False),
        ("ops@example", False),
        ("o ps@example.com", False),
    ],
)
def test_alert_emails_must_look_like_addresses(email: str, ok: bool) -> None:
    errors = write({"observability": {"defaultAlertEmails": ["first@example.com", email]}})[1]
    assert paths(errors) == ([] if ok else ["spec.observability.defaultAlertEmails[1]"])
    if not ok:
        assert "email" in errors[0].message


@pytest.mark.parametrize(
    ("severity", "ok"), [("warning", True), ("error", True), ("critical", True), ("info", False), ("Warning", False)]
)
def test_threat_detection_minimum_severity(severity: str, ok: bool) -> None:
    errors = errors_for({"security": {"threatDetection": {"enabled": True, "minimumSeverity": severity}}})
    assert errors == ([] if ok else ["spec.security.threatDetection.minimumSeverity"])


@pytest.mark.parametrize(("transport", "ok"), [("tcp", True), ("udp", True), ("tls", False)])
def test_threat_detection_syslog_transport(transport: str, ok: bool) -> None:
    syslog = {"transport": transport, "host": "h", "port": 514}
    errors = errors_for({"security": {"threatDetection": {"enabled": False, "syslog": syslog}}})
    assert errors == ([] if ok else ["spec.security.threatDetection.syslog.transport"])


def test_threat_detection_requires_enabled() -> None:
    _, errors = write({"security": {"threatDetection": {"minimumSeverity": "error"}}})
    assert [(e.path, e.message) for e in errors] == [("spec.security.threatDetection.enabled", "is required")]


def test_several_errors_come_together_with_their_paths() -> None:
    _, errors = write(
        {
            "logging": {"s3": {"bucket": "b", "region": "r"}},
            "sessionTimeoutSeconds": 0,
            "authConfig": {"samlOnly": "yes", "domainAutoMembers": [""]},
            "security": {"threatDetection": {"enabled": True, "syslog": {"host": "h", "port": 70000}}},
            "billing": {},
        },
        name="Bad_Name",
    )
    assert sorted(paths(errors)) == sorted(
        [
            "name",
            "spec.logging.s3.credentials",
            "spec.sessionTimeoutSeconds",
            "spec.authConfig.domainAutoMembers[0]",
            "spec.authConfig.samlOnly",
            "spec.security.threatDetection.syslog.port",
            "spec.billing",
        ]
    )
    assert {e.message for e in errors if e.path == "spec.billing"} == {"unknown field"}


def test_unknown_top_level_fields_are_rejected_and_server_fields_ignored() -> None:
    body = {"spec": {}, "status": {"active": False}, "id": "x", "plan": "gold"}
    item, errors = write(body=body)
    assert [(e.path, e.message) for e in errors] == [("plan", "unknown field")]
    assert "status" not in item and "id" not in item
