"""Single-field rules of the workload-level blocks (the schema), each refused at its path."""

from __future__ import annotations

from typing import Any

import pytest
from _workload_spec_support import errors_for, pairs, workload, write

from plinth.kinds import REGISTRY
from plinth.kinds.workload import WORKLOAD
from plinth.server._openapi_schemas import KindSchemas

FIREWALL = "spec.firewallConfig"
EXTERNAL = f"{FIREWALL}.external"
AUTOSCALING = "spec.defaultOptions.autoscaling"


def external(**fields: Any) -> dict[str, Any]:
    return workload("standard", firewallConfig={"external": fields})


def internal(**fields: Any) -> dict[str, Any]:
    return workload("standard", firewallConfig={"internal": fields})


def options(**fields: Any) -> dict[str, Any]:
    return workload("standard", defaultOptions=fields)


def scaling(**fields: Any) -> dict[str, Any]:
    return workload("standard", defaultOptions={"autoscaling": fields})


def keda(**fields: Any) -> dict[str, Any]:
    return scaling(metric="keda", keda=fields)


def direct_port(**fields: Any) -> dict[str, Any]:
    port = {"externalPort": 8443, "protocol": "TCP", **fields}
    return workload("standard", loadBalancer={"direct": {"enabled": True, "ports": [port]}})


# --- firewallConfig -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cidr",
    ["0.0.0.0/0", "10.0.0.0/8", "203.0.113.7", "10.1.2.3/8", "::/0", "2001:db8::/32", "2001:db8::1", "192.0.2.0/32"],
)
def test_cidr_entries_accept_addresses_and_networks(cidr: str) -> None:
    for name in ("inboundAllowCIDR", "inboundBlockedCIDR", "outboundAllowCIDR", "outboundBlockedCIDR"):
        assert errors_for(external(**{name: [cidr]})) == []


@pytest.mark.parametrize(
    "cidr", ["", "10.0.0.0/33", "300.1.1.1", "10.0.0", "example.com", "2001:db8::/129", " 1.2.3.4"]
)
@pytest.mark.parametrize("name", ["inboundAllowCIDR", "inboundBlockedCIDR", "outboundAllowCIDR", "outboundBlockedCIDR"])
def test_cidr_entries_refuse_anything_else(name: str, cidr: str) -> None:
    assert errors_for(external(**{name: ["10.0.0.0/8", cidr]})) == [f"{EXTERNAL}.{name}[1]"]


def test_inbound_allow_cidr_holds_at_most_250_entries() -> None:
    entries = [f"10.0.{i // 256}.{i % 256}" for i in range(251)]
    assert errors_for(external(inboundAllowCIDR=entries[:250])) == []
    assert errors_for(external(inboundAllowCIDR=entries)) == [f"{EXTERNAL}.inboundAllowCIDR"]
    assert errors_for(external(inboundBlockedCIDR=entries)) == []


@pytest.mark.parametrize(
    ("hostname", "ok"),
    [
        ("api.stripe.com", True),
        ("*.amazonaws.com", True),
        ("localhost", True),
        ("xn--bcher-kva.example", True),
        ("a" * 63 + ".com", True),
        ("a" * 64 + ".com", False),
        (("a" * 60 + ".") * 2 + "b" * 6, True),  # 128 characters
        (("a" * 60 + ".") * 2 + "b" * 7, False),  # 129 characters
        ("API.stripe.com", False),
        ("*", False),
        ("*example.com", False),
        ("api.*.com", False),
        ("*.*.example.com", False),
        ("-api.example.com", False),
        ("api_v2.example.com", False),
        ("api.example.com.", False),
        ("https://api.example.com", False),
        ("", False),
    ],
)
def test_outbound_hostnames(hostname: str, ok: bool) -> None:
    assert errors_for(external(outboundAllowHostname=[hostname])) == (
        [] if ok else [f"{EXTERNAL}.outboundAllowHostname[0]"]
    )


@pytest.mark.parametrize(
    ("port", "path"),
    [
        ({"protocol": "http", "number": 80}, None),
        ({"protocol": "tcp", "number": 65000}, None),
        ({"protocol": "https", "number": 79}, "number"),
        ({"protocol": "https", "number": 65001}, "number"),
        ({"protocol": "tcp", "number": 15000}, "number"),
        ({"protocol": "tcp", "number": 8012}, "number"),
        ({"protocol": "udp", "number": 5000}, "protocol"),
        ({"protocol": "tcp"}, "number"),
        ({"number": 443}, "protocol"),
        ({"protocol": "tcp", "number": "443"}, "number"),
    ],
)
def test_outbound_allow_port(port: dict[str, Any], path: str | None) -> None:
    expected = [] if path is None else [f"{EXTERNAL}.outboundAllowPort[0].{path}"]
    assert errors_for(external(outboundAllowPort=[port])) == expected


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("x-api-version", True),
        ("X_Custom.Header~1", True),
        ("k" * 128, True),
        ("k" * 129, False),
        ("", False),
        ("x api", False),
        ("x:api", False),
        ("x-é", False),
    ],
)
def test_header_filter_key_is_a_header_name(key: str, ok: bool) -> None:
    spec = external(http={"inboundHeaderFilter": [{"key": key, "allowedValues": ["^a$"]}]})
    assert errors_for(spec) == ([] if ok else [f"{EXTERNAL}.http.inboundHeaderFilter[0].key"])


@pytest.mark.parametrize(
    "link",
    [
        "//gvc/main/workload/frontend",
        "/org/acme/gvc/other/workload/backend",
        "cpln://internal/keda",
        "//agent/dc-agent",
        "/org/acme/agent/dc-agent",
        # A workload of the same GVC, as the vendor's own stacks send it (issue 20).
        "//workload/frontend",
    ],
)
def test_inbound_allow_workload_accepts_links_with_their_gvc(link: str) -> None:
    assert errors_for(internal(inboundAllowType="workload-list", inboundAllowWorkload=[link])) == []


def test_same_gvc_workload_link_is_stored_as_sent() -> None:
    item, errors = write(internal(inboundAllowType="workload-list", inboundAllowWorkload=["//workload/frontend"]))
    assert errors == []
    assert item["spec"]["firewallConfig"]["internal"]["inboundAllowWorkload"] == ["//workload/frontend"]


@pytest.mark.parametrize(
    "link",
    [
        "/org/acme/workload/frontend",
        "frontend",
        "//gvc/main/workload/",
        "//gvc/main/identity/x",
        "cpln://internal/other",
        "//gvc/main/workload/a/b",
        "",
    ],
)
def test_inbound_allow_workload_refuses_links_without_their_gvc(link: str) -> None:
    spec = internal(inboundAllowType="same-gvc", inboundAllowWorkload=[link])
    assert errors_for(spec) == [f"{FIREWALL}.internal.inboundAllowWorkload[0]"]


def test_workload_link_message_says_the_gvc_is_needed() -> None:
    _, errors = write(internal(inboundAllowWorkload=["/org/acme/workload/frontend"]))
    assert "//gvc/GVC/workload/NAME" in errors[0].message


@pytest.mark.parametrize("value", ["none", "same-gvc", "same-org", "workload-list"])
def test_inbound_allow_types(value: str) -> None:
    assert errors_for(internal(inboundAllowType=value)) == []
    assert errors_for(internal(inboundAllowType=value.upper())) == [f"{FIREWALL}.internal.inboundAllowType"]


# --- defaultOptions / localOptions -------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (scaling(metric="requests"), f"{AUTOSCALING}.metric"),
        (scaling(target=0), f"{AUTOSCALING}.target"),
        (scaling(metric="rps", target=20001), f"{AUTOSCALING}.target"),
        (scaling(target="95"), f"{AUTOSCALING}.target"),
        (scaling(target=95.5), f"{AUTOSCALING}.target"),
        (scaling(minScale=-1), f"{AUTOSCALING}.minScale"),
        (scaling(maxScale=-1), f"{AUTOSCALING}.maxScale"),
        (scaling(scaleToZeroDelay=29), f"{AUTOSCALING}.scaleToZeroDelay"),
        (scaling(scaleToZeroDelay=3601), f"{AUTOSCALING}.scaleToZeroDelay"),
        (scaling(maxConcurrency=-1), f"{AUTOSCALING}.maxConcurrency"),
        (scaling(maxConcurrency=30001), f"{AUTOSCALING}.maxConcurrency"),
        (scaling(metricPercentile="p90"), f"{AUTOSCALING}.metricPercentile"),
        (scaling(multi=[{"metric": "latency", "target": 5}]), f"{AUTOSCALING}.multi[0].metric"),
        (scaling(multi=[{"target": 5}]), f"{AUTOSCALING}.multi[0].metric"),
        (scaling(multi=[{"metric": "cpu", "target": 0}]), f"{AUTOSCALING}.multi[0].target"),
        (scaling(multi={"metric": "cpu"}), f"{AUTOSCALING}.multi"),
        (scaling(speed=1), f"{AUTOSCALING}.speed"),
        (options(timeoutSeconds=0), "spec.defaultOptions.timeoutSeconds"),
        (options(timeoutSeconds=3601), "spec.defaultOptions.timeoutSeconds"),
        (options(capacityAIUpdateMinutes=1), "spec.defaultOptions.capacityAIUpdateMinutes"),
        (options(capacityAI="true"), "spec.defaultOptions.capacityAI"),
        (options(suspend=1), "spec.defaultOptions.suspend"),
        (options(multiZone={"enabled": "yes"}), "spec.defaultOptions.multiZone.enabled"),
        (options(location="aws-us-east-1"), "spec.defaultOptions.location"),
        (options(autoscaling=[]), "spec.defaultOptions.autoscaling"),
    ],
)
def test_option_fields_are_bounded(spec: dict[str, Any], path: str) -> None:
    assert errors_for(spec) == [path]


@pytest.mark.parametrize(
    "fields",
    [
        {"timeoutSeconds": 1},
        {"timeoutSeconds": 3600},
        {"capacityAIUpdateMinutes": 2},
        {"spot": True},
        {"multiZone": {}},
    ],
)
def test_option_bounds_include_their_edges(fields: dict[str, Any]) -> None:
    assert errors_for(options(**fields)) == []


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (keda(pollingInterval=0), f"{AUTOSCALING}.keda.pollingInterval"),
        (keda(cooldownPeriod=0), f"{AUTOSCALING}.keda.cooldownPeriod"),
        (keda(initialCooldownPeriod=0), f"{AUTOSCALING}.keda.initialCooldownPeriod"),
        (keda(triggers=[{"metadata": {}}]), f"{AUTOSCALING}.keda.triggers[0].type"),
        (keda(triggers=[{"type": ""}]), f"{AUTOSCALING}.keda.triggers[0].type"),
        (keda(triggers=[{"type": "redis", "metadata": {"n": 5}}]), f"{AUTOSCALING}.keda.triggers[0].metadata.n"),
        (keda(triggers=[{"type": "redis", "metricType": "Average"}]), f"{AUTOSCALING}.keda.triggers[0].metricType"),
        (
            keda(triggers=[{"type": "redis", "authenticationRef": {}}]),
            f"{AUTOSCALING}.keda.triggers[0].authenticationRef.name",
        ),
        (keda(fallback={"failureThreshold": 3}), f"{AUTOSCALING}.keda.fallback.replicas"),
        (keda(fallback={"failureThreshold": -1, "replicas": 1}), f"{AUTOSCALING}.keda.fallback.failureThreshold"),
        (
            keda(fallback={"failureThreshold": 1, "replicas": 1, "behavior": "x"}),
            f"{AUTOSCALING}.keda.fallback.behavior",
        ),
        (
            keda(advanced={"scalingModifiers": {"metricType": "x"}}),
            f"{AUTOSCALING}.keda.advanced.scalingModifiers.metricType",
        ),
        (keda(scaledObject={}), f"{AUTOSCALING}.keda.scaledObject"),
    ],
)
def test_keda_fields(spec: dict[str, Any], path: str) -> None:
    assert errors_for(spec) == [path]


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({}, "spec.localOptions[0].location"),
        ({"location": ""}, "spec.localOptions[0].location"),
        ({"location": "aws/us-east-1"}, "spec.localOptions[0].location"),
        ({"location": "//gvc/main"}, "spec.localOptions[0].location"),
        ({"location": "/org/acme/location/"}, "spec.localOptions[0].location"),
        ({"location": "aws-us-east-1", "timeoutSeconds": 0}, "spec.localOptions[0].timeoutSeconds"),
        ({"location": "aws-us-east-1", "autoscaling": {"target": 0}}, "spec.localOptions[0].autoscaling.target"),
        ({"location": "aws-us-east-1", "region": "x"}, "spec.localOptions[0].region"),
    ],
)
def test_local_option_fields(entry: dict[str, Any], path: str) -> None:
    assert errors_for(workload("standard", localOptions=[entry])) == [path]


@pytest.mark.parametrize("location", ["aws-us-east-1", "//location/aws-us-east-1", "/org/acme/location/aws-us-east-1"])
def test_local_option_location_is_a_name_or_a_link(location: str) -> None:
    assert errors_for(workload("standard", localOptions=[{"location": location}])) == []


# --- job, rollout, security, retry, sidecar ----------------------------------------------------


@pytest.mark.parametrize(
    ("job", "path"),
    [
        ({"concurrencyPolicy": "Never"}, "concurrencyPolicy"),
        ({"historyLimit": 0}, "historyLimit"),
        ({"historyLimit": 11}, "historyLimit"),
        ({"restartPolicy": "Always"}, "restartPolicy"),
        ({"activeDeadlineSeconds": 0}, "activeDeadlineSeconds"),
        ({"activeDeadlineSeconds": 86401}, "activeDeadlineSeconds"),
        ({"suspend": "no"}, "suspend"),
        ({"parallelism": 2}, "parallelism"),
    ],
)
def test_job_fields(job: dict[str, Any], path: str) -> None:
    spec = workload("cron", job={"schedule": "@daily", **job})
    assert errors_for(spec) == [f"spec.job.{path}"]


@pytest.mark.parametrize(
    "job",
    [
        {"concurrencyPolicy": "Allow", "historyLimit": 1, "activeDeadlineSeconds": 1},
        {"concurrencyPolicy": "Replace", "historyLimit": 10, "activeDeadlineSeconds": 86400, "suspend": True},
    ],
)
def test_job_bounds_include_their_edges(job: dict[str, Any]) -> None:
    assert errors_for(workload("cron", job={"schedule": "@daily", **job})) == []


@pytest.mark.parametrize(
    ("block", "fields", "path"),
    [
        ("rolloutOptions", {"maxUnavailableReplicas": "abc"}, "maxUnavailableReplicas"),
        ("rolloutOptions", {"maxUnavailableReplicas": "-1"}, "maxUnavailableReplicas"),
        ("rolloutOptions", {"maxSurgeReplicas": 2}, "maxSurgeReplicas"),
        ("rolloutOptions", {"maxSurgeReplicas": "50 %"}, "maxSurgeReplicas"),
        ("rolloutOptions", {"minReadySeconds": -1}, "minReadySeconds"),
        ("rolloutOptions", {"scalingPolicy": "Rolling"}, "scalingPolicy"),
        ("rolloutOptions", {"terminationGracePeriodSeconds": -1}, "terminationGracePeriodSeconds"),
        ("rolloutOptions", {"terminationGracePeriodSeconds": 3601}, "terminationGracePeriodSeconds"),
        ("securityOptions", {"filesystemGroupId": 0}, "filesystemGroupId"),
        ("securityOptions", {"runAsUser": 65535}, "runAsUser"),
        ("securityOptions", {"runAsGroup": 1}, "runAsGroup"),
        ("requestRetryPolicy", {"attempts": -1}, "attempts"),
        ("requestRetryPolicy", {"retryOn": [""]}, "retryOn[0]"),
        ("requestRetryPolicy", {"retryOn": "5xx"}, "retryOn"),
        ("sidecar", {"istio": {}}, "istio"),
        ("sidecar", {"envoy": []}, "envoy"),
    ],
)
def test_rollout_security_retry_and_sidecar_fields(block: str, fields: dict[str, Any], path: str) -> None:
    assert errors_for(workload("standard", **{block: fields})) == [f"spec.{block}.{path}"]


def test_free_form_blocks_take_any_object() -> None:
    envoy = {"http": [{"name": "x", "typed_config": {"@type": "t", "nested": [1, {"deep": None}]}}], "clusters": []}
    extras = {"affinity": {"nodeAffinity": {"required": True}}, "tolerations": [], "anything": 1}
    spec = workload("standard", sidecar={"envoy": envoy}, extras=extras)
    item, errors = write(spec)
    assert errors == []
    assert item["spec"]["sidecar"] == {"envoy": envoy}
    assert item["spec"]["extras"] == extras
    assert errors_for(workload("standard", extras=[])) == ["spec.extras"]


# --- loadBalancer -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"externalPort": 21}, "externalPort"),
        ({"externalPort": 32769}, "externalPort"),
        ({"protocol": "tcp"}, "protocol"),
        ({"scheme": "ftp"}, "scheme"),
        ({"containerPort": 79}, "containerPort"),
        ({"containerPort": 15020}, "containerPort"),
        ({"containerPort": {"port": 8080}}, "containerPort"),  # DOCS' example shape is refused
        ({"port": 8080}, "port"),
    ],
)
def test_direct_port_fields(fields: dict[str, Any], path: str) -> None:
    assert errors_for(direct_port(**fields)) == [f"spec.loadBalancer.direct.ports[0].{path}"]


@pytest.mark.parametrize(
    "fields",
    [{"externalPort": 22}, {"externalPort": 32768, "protocol": "UDP"}, {"scheme": "wss", "containerPort": 65535}],
)
def test_direct_port_bounds_include_their_edges(fields: dict[str, Any]) -> None:
    assert errors_for(direct_port(**fields)) == []


@pytest.mark.parametrize(
    ("balancer", "path"),
    [
        ({"direct": {"ports": []}}, "direct.enabled"),
        ({"direct": {"enabled": True, "ipSet": ""}}, "direct.ipSet"),
        ({"geoLocation": {"enabled": True, "headers": {"country": "x" * 129}}}, "geoLocation.headers.country"),
        ({"geoLocation": {"enabled": True, "headers": {"city": "x city"}}}, "geoLocation.headers.city"),
        ({"geoLocation": {"enabled": True, "headers": {"zip": "x-zip"}}}, "geoLocation.headers.zip"),
        ({"replicaDirect": "true"}, "replicaDirect"),
        ({"dedicated": True}, "dedicated"),
    ],
)
def test_load_balancer_fields(balancer: dict[str, Any], path: str) -> None:
    assert errors_for(workload("standard", loadBalancer=balancer)) == [f"spec.loadBalancer.{path}"]


# --- top level ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"type": "batch"}, "spec.type"),
        ({"identityLink": ""}, "spec.identityLink"),
        ({"supportDynamicTags": "false"}, "spec.supportDynamicTags"),
        ({"firewallConfig": []}, "spec.firewallConfig"),
        ({"localOptions": {}}, "spec.localOptions"),
        ({"vm": "yes"}, "spec.vm"),
        ({"containers": []}, "spec.containers"),
        ({"replicas": 3}, "spec.replicas"),
    ],
)
def test_top_level_fields(fields: dict[str, Any], path: str) -> None:
    spec = {**workload("standard"), **fields}
    assert [p for p, _ in pairs(write(spec)[1])] == [path]


def test_workload_models_are_unique_openapi_components() -> None:
    """A model named like another kind's (``Keda``, ``LoadBalancer``) gets a module-qualified name."""
    kinds = {**REGISTRY, "workload": WORKLOAD}
    qualified = [name for name in KindSchemas(kinds).defs if "__" in name and "workload" in name]
    assert qualified == []
