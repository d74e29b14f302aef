"""The workload kind's workload-level spec, through build_candidate: what clients send, and the
defaults a GET then shows.

Rules of the type matrix are in test_workload_spec_rules.py, single-field schema rules in
test_workload_spec_schema.py, ``job.schedule`` in test_workload_spec_schedule.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _workload_spec_support import (
    KEDA_GVC,
    autoscaled,
    container,
    errors_for,
    pairs,
    paths,
    rewritten,
    served,
    stored,
    workload,
    write,
)

from plinth.engine.patch import apply_patch
from plinth.engine.pipeline import strip_server_owned
from plinth.kinds.base import Item
from plinth.kinds.workload import WORKLOAD
from plinth.kinds.workload.models import WorkloadSpec

CLOSED_FIREWALL: dict[str, Any] = {
    "external": {
        "inboundAllowCIDR": [],
        "inboundBlockedCIDR": [],
        "outboundAllowHostname": [],
        "outboundAllowCIDR": [],
        "outboundBlockedCIDR": [],
    },
    "internal": {"inboundAllowType": "none", "inboundAllowWorkload": []},
}
PUBLIC_FIREWALL: dict[str, Any] = {
    "external": {"inboundAllowCIDR": ["0.0.0.0/0"], "outboundAllowCIDR": ["0.0.0.0/0"]},
    "internal": {"inboundAllowType": "same-org"},
}
GPU = {"nvidia": {"model": "t4", "quantity": 1}}
LOCATION_LINK = "/org/acme/location/aws-us-east-1"


def patched(old: Item, patch: dict[str, Any], **kwargs: Any) -> tuple[Item, list[Any]]:
    """A PATCH as the service runs it: merge into the stored item, then build against it."""
    merged = apply_patch(old, patch, "workload", "acme")
    return write(body=strip_server_owned(WORKLOAD, merged), old=old, **kwargs)


# --- the official CLI's bodies (CLI commands/workload.js) ----------------------------------


def cli_create(**spec: Any) -> dict[str, Any]:
    """``cpln workload create --name web --image nginx`` plus the flags' effect on ``spec``."""
    body_container = {"name": "nginx", "image": "nginx", "env": [], "inheritEnv": False}
    body_container |= {"cpu": "50m", "memory": "128Mi"}
    return {
        "name": "web",
        "description": "web",
        "tags": {},
        "spec": {"type": "standard", "containers": [body_container], **spec},
    }


def test_cli_create_without_flags_is_a_closed_standard_workload() -> None:
    item, errors = write(body=cli_create())
    assert errors == []
    spec = item["spec"]
    assert spec["firewallConfig"] == CLOSED_FIREWALL
    assert spec["defaultOptions"] == {
        "autoscaling": {
            "metric": "cpu",
            "target": 95,
            "maxScale": 5,
            "minScale": 1,
            "scaleToZeroDelay": 300,
            "maxConcurrency": 0,
        },
        "timeoutSeconds": 5,
        "capacityAI": False,
        "debug": False,
        "suspend": False,
    }
    assert spec["supportDynamicTags"] is False


def test_cli_create_with_every_flag() -> None:
    """``--type serverless --port 8080 --public --enable-debug --identity id --env --volume``."""
    body = cli_create(
        type="serverless",
        firewallConfig=copy.deepcopy(PUBLIC_FIREWALL),
        defaultOptions={"debug": True},
        identityLink="//identity/web-id",
    )
    body["spec"]["containers"][0].update(
        env=[{"name": "MODE", "value": "prod"}],
        volumes=[{"uri": "cpln://secret/tls", "path": "/etc/tls"}],
        ports=[{"protocol": "http", "number": 8080}],
    )
    item, errors = write(body=body)
    assert errors == []
    spec = item["spec"]
    assert spec["identityLink"] == "//identity/web-id"
    assert spec["firewallConfig"] == {
        "external": {
            "inboundAllowCIDR": ["0.0.0.0/0"],
            "inboundBlockedCIDR": [],
            "outboundAllowHostname": [],
            "outboundAllowCIDR": ["0.0.0.0/0"],
            "outboundBlockedCIDR": [],
        },
        "internal": {"inboundAllowType": "same-org", "inboundAllowWorkload": []},
    }
    assert spec["defaultOptions"]["debug"] is True
    assert spec["defaultOptions"]["autoscaling"]["metric"] == "concurrency"
    assert spec["defaultOptions"]["capacityAI"] is True


def cron_run_body() -> dict[str, Any]:
    """``cpln workload cron run -- CMD``'s runner (its ``cpln/run`` tags are the integration's)."""
    return {
        "name": "cpln-run-abc123",
        "spec": {
            "type": "cron",
            "job": {"schedule": "* * * * *", "concurrencyPolicy": "Allow", "historyLimit": 5, "restartPolicy": "Never"},
            "defaultOptions": {"capacityAI": False, "suspend": True},
            "containers": [{"name": "main", "image": "ubuntu:latest", "cpu": "0.25", "memory": "256Mi"}],
        },
    }


def test_cli_cron_run_body_validates_and_keeps_its_choices() -> None:
    item, errors = write(body=cron_run_body(), name="cpln-run-abc123")
    assert errors == []
    assert item["spec"]["job"] == cron_run_body()["spec"]["job"]
    assert item["spec"]["defaultOptions"] == {"timeoutSeconds": 5, "capacityAI": False, "debug": False, "suspend": True}


def workload_run_body() -> dict[str, Any]:
    """``cpln workload run``'s runner: suspended everywhere but one location."""
    return {
        "name": "run-abc123",
        "spec": {
            "type": "standard",
            "containers": [{"name": "main", "image": "ubuntu:latest", "cpu": "0.25", "memory": "256Mi"}],
            "defaultOptions": {"capacityAI": False, "suspend": True},
            "localOptions": [
                {
                    "location": LOCATION_LINK,
                    "suspend": False,
                    "capacityAI": False,
                    "autoscaling": {"minScale": 1, "maxScale": 1},
                }
            ],
        },
    }


def test_cli_workload_run_body_validates_and_keeps_its_local_options_as_sent() -> None:
    item, errors = write(body=workload_run_body(), name="run-abc123")
    assert errors == []
    assert item["spec"]["localOptions"] == workload_run_body()["spec"]["localOptions"]
    assert item["spec"]["defaultOptions"]["suspend"] is True


@pytest.mark.parametrize("suspend", [True, False])
@pytest.mark.parametrize("runner", ["create", "run", "cron"])
def test_cli_start_and_stop_patches_apply(runner: str, suspend: bool) -> None:
    """``cpln workload start|stop``: ``defaultOptions.suspend`` and, when present, each local option."""
    body = {"create": cli_create(), "run": workload_run_body(), "cron": cron_run_body()}[runner]
    old = stored(body["spec"])
    patch: dict[str, Any] = {"spec": {"defaultOptions": {"suspend": suspend}}}
    if "localOptions" in old["spec"]:
        patch["spec"]["localOptions"] = [
            {"location": local["location"], "suspend": suspend} for local in old["spec"]["localOptions"]
        ]
    item, errors = patched(old, patch)
    assert errors == []
    assert item["spec"]["defaultOptions"]["suspend"] is suspend
    assert all(local["suspend"] is suspend for local in item["spec"].get("localOptions", []))


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"$patch/containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
        {"spec": {"$patch/containers": [{"name": "nginx", "$patch/env": [{"name": "MODE", "value": "dev"}]}]}},
        {"spec": {"firewallConfig": {"external": {"$append/inboundAllowCIDR": ["203.0.113.0/24"]}}}},
        {"spec": {"firewallConfig": {"external": {"$drop/inboundAllowCIDR": ["0.0.0.0/0"]}}}},
        {"spec": {"firewallConfig": {"external": {"inboundAllowCIDR": ["10.0.0.0/8", "10.0.0.0/8"]}}}},
        {"spec": {"defaultOptions": {"autoscaling": {"metric": "rps"}}}},
        {"tags": {"team": "web"}},
    ],
)
def test_cli_update_set_patches_apply_to_a_defaulted_workload(patch: dict[str, Any]) -> None:
    old = stored(cli_create(firewallConfig=copy.deepcopy(PUBLIC_FIREWALL))["spec"])
    _, errors = patched(old, patch)
    assert errors == []


# --- realistic maximal workloads, one per type ----------------------------------------------

#: Every workload-level block at a legal non-default value; lists already sorted, so the
#: stored spec must equal what was sent (containers aside: their defaults are not ours).
STANDARD: dict[str, Any] = {
    "type": "standard",
    "identityLink": "//identity/web-identity",
    "containers": [container(ports=[{"protocol": "http", "number": 8080}])],
    "firewallConfig": {
        "external": {
            "inboundAllowCIDR": ["0.0.0.0/0"],
            "inboundBlockedCIDR": ["192.0.2.0/24", "2001:db8::/32"],
            "outboundAllowHostname": ["*.amazonaws.com", "api.stripe.com"],
            "outboundAllowPort": [{"protocol": "https", "number": 443}, {"protocol": "tcp", "number": 5432}],
            "outboundAllowCIDR": ["198.51.100.0/24"],
            "outboundBlockedCIDR": ["203.0.113.7"],
            "http": {
                "inboundHeaderFilter": [
                    {"key": "x-api-version", "allowedValues": ["^v2$"]},
                    {"key": "User-Agent", "blockedValues": ["^BadBot.*", "^Scraper.*"]},
                ]
            },
        },
        "internal": {
            "inboundAllowType": "workload-list",
            "inboundAllowWorkload": [
                "//gvc/main/workload/frontend",
                "/org/acme/gvc/other/workload/backend",
                "cpln://internal/keda",
                "//agent/dc-agent",
            ],
        },
    },
    "defaultOptions": {
        "autoscaling": {
            "metric": "rps",
            "target": 500,
            "maxScale": 10,
            "minScale": 2,
            "scaleToZeroDelay": 120,
            "maxConcurrency": 0,
        },
        "timeoutSeconds": 3600,
        "capacityAI": True,
        "capacityAIUpdateMinutes": 5,
        "spot": False,
        "debug": True,
        "suspend": False,
        "multiZone": {"enabled": True},
    },
    "localOptions": [
        {
            "autoscaling": {
                "metric": "keda",
                "maxScale": 20,
                "minScale": 0,
                "keda": {
                    "triggers": [
                        {
                            "type": "redis",
                            "metadata": {"address": "redis.main.cpln.local:6379", "listName": "jobs"},
                            "name": "queue",
                            "useCachedMetrics": True,
                            "metricType": "AverageValue",
                            "authenticationRef": {"name": "redis-auth"},
                        }
                    ],
                    "advanced": {
                        "scalingModifiers": {
                            "target": "5",
                            "activationTarget": "1",
                            "metricType": "AverageValue",
                            "formula": "queue * 2",
                        }
                    },
                    "fallback": {"failureThreshold": 3, "replicas": 2, "behavior": "currentReplicasIfHigher"},
                    "pollingInterval": 15,
                    "cooldownPeriod": 300,
                    "initialCooldownPeriod": 60,
                },
            },
            "location": "//location/aws-us-east-1",
        },
        {
            "autoscaling": {
                "multi": [{"metric": "cpu", "target": 80}, {"metric": "memory", "target": 70}, {"metric": "rps"}]
            },
            "timeoutSeconds": 60,
            "capacityAI": False,
            "debug": False,
            "suspend": True,
            "multiZone": {"enabled": False},
            "location": "/org/acme/location/gcp-us-east1",
        },
    ],
    "sidecar": {"envoy": {"http": [{"name": "rate-limit", "priority": 50, "typed_config": {"@type": "type.x"}}]}},
    "supportDynamicTags": True,
    "rolloutOptions": {
        "minReadySeconds": 10,
        "maxUnavailableReplicas": "25%",
        "maxSurgeReplicas": "1",
        "scalingPolicy": "Parallel",
        "terminationGracePeriodSeconds": 900,
    },
    "securityOptions": {"filesystemGroupId": 1000, "runAsUser": 1001},
    "loadBalancer": {
        "direct": {
            "enabled": True,
            "ports": [{"externalPort": 5432, "protocol": "TCP", "scheme": "tcp", "containerPort": 8080}],
            "ipSet": "//ipset/static-ips",
        },
        "geoLocation": {
            "enabled": True,
            "headers": {"asn": "x-asn", "city": "x-city", "country": "x-country", "region": "x-region"},
        },
        "replicaDirect": False,
    },
    "extras": {"tolerations": [{"key": "dedicated", "operator": "Exists"}], "affinity": {"nodeAffinity": {}}},
    "requestRetryPolicy": {"attempts": 3, "retryOn": ["5xx", "reset"]},
}

SERVERLESS: dict[str, Any] = {
    "type": "serverless",
    "containers": [served()],
    "firewallConfig": CLOSED_FIREWALL,
    "defaultOptions": {
        "autoscaling": {
            "metric": "concurrency",
            "target": 50,
            "maxScale": 100,
            "minScale": 0,
            "scaleToZeroDelay": 30,
            "maxConcurrency": 1000,
        },
        "timeoutSeconds": 600,
        "capacityAI": True,
        "debug": False,
        "suspend": False,
    },
    "localOptions": [
        {"autoscaling": {"metric": "rps", "target": 200, "minScale": 1}, "location": "gcp-us-east1"},
        {"autoscaling": {"metric": "memory", "target": 100}, "capacityAI": True, "location": "aws-us-east-1"},
    ],
    "supportDynamicTags": False,
    "rolloutOptions": {
        "minReadySeconds": 0,
        "maxUnavailableReplicas": "1",
        "maxSurgeReplicas": "0",
        "scalingPolicy": "OrderedReady",
        "terminationGracePeriodSeconds": 30,
    },
    "requestRetryPolicy": {"attempts": 0, "retryOn": []},
}

STATEFUL: dict[str, Any] = {
    "type": "stateful",
    "containers": [container(volumes=[{"uri": "cpln://volumeset/data", "path": "/var/lib/data"}])],
    "firewallConfig": CLOSED_FIREWALL,
    "defaultOptions": {
        "autoscaling": {
            "metric": "keda",
            "maxScale": 6,
            "minScale": 0,
            "scaleToZeroDelay": 600,
            "maxConcurrency": 0,
            "keda": {"triggers": [{"type": "cron", "metadata": {"timezone": "UTC", "start": "0 8 * * *"}}]},
        },
        "timeoutSeconds": 5,
        "capacityAI": False,
        "debug": False,
        "suspend": False,
    },
    "supportDynamicTags": False,
    "rolloutOptions": {"minReadySeconds": 5, "scalingPolicy": "OrderedReady", "terminationGracePeriodSeconds": 90},
    "securityOptions": {"filesystemGroupId": 2000},
    "loadBalancer": {"geoLocation": {"enabled": False}, "replicaDirect": True},
}

CRON: dict[str, Any] = {
    "type": "cron",
    "containers": [container(command="/bin/report", args=["--since", "1d"])],
    "firewallConfig": {
        "external": {
            "inboundAllowCIDR": [],
            "inboundBlockedCIDR": [],
            "outboundAllowHostname": ["reports.example.com"],
            "outboundAllowCIDR": [],
            "outboundBlockedCIDR": [],
        },
        "internal": {"inboundAllowType": "same-gvc", "inboundAllowWorkload": []},
    },
    # What TF's acceptance tests send for a cron workload (TF resource_workload_test.go, ``CronUpdate1Hcl``).
    "defaultOptions": {
        "autoscaling": {"metric": "concurrency", "maxScale": 1, "minScale": 1},
        "timeoutSeconds": 5,
        "capacityAI": False,
        "debug": False,
        "suspend": False,
    },
    "job": {
        "schedule": "0 3 * * mon-fri",
        "concurrencyPolicy": "Replace",
        "historyLimit": 10,
        "restartPolicy": "OnFailure",
        "activeDeadlineSeconds": 3600,
    },
    "supportDynamicTags": False,
}

MAXIMAL = {"standard": STANDARD, "serverless": SERVERLESS, "stateful": STATEFUL, "cron": CRON}


@pytest.mark.parametrize("type_", list(MAXIMAL))
def test_maximal_workload_is_stored_as_sent(type_: str) -> None:
    sent = copy.deepcopy(MAXIMAL[type_])
    item, errors = write(sent, parent=KEDA_GVC)
    assert errors == []
    spec = item["spec"]
    assert {key: value for key, value in spec.items() if key != "containers"} == {
        key: value for key, value in MAXIMAL[type_].items() if key != "containers"
    }
    assert list(spec) == [name for name in WorkloadSpec.model_fields if name in spec]


# --- defaults ---------------------------------------------------------------------------------


def autoscaling_defaults(**fields: Any) -> dict[str, Any]:
    return {"maxScale": 5, "minScale": 1, "scaleToZeroDelay": 300, "maxConcurrency": 0, **fields}


@pytest.mark.parametrize(
    ("spec", "options"),
    [
        (
            workload("standard"),
            {"autoscaling": {"metric": "cpu", "target": 95, **autoscaling_defaults()}, "capacityAI": False},
        ),
        (
            workload("stateful"),
            {"autoscaling": {"metric": "cpu", "target": 95, **autoscaling_defaults()}, "capacityAI": False},
        ),
        (
            workload("serverless"),
            {"autoscaling": {"metric": "concurrency", "target": 95, **autoscaling_defaults()}, "capacityAI": True},
        ),
        (workload("cron"), {"capacityAI": True}),
        # AI: an omitted metric resolves to 'disabled' when Capacity AI is on.
        (
            workload("standard", defaultOptions={"capacityAI": True}),
            {"autoscaling": {"metric": "disabled", "target": 95, **autoscaling_defaults()}, "capacityAI": True},
        ),
        (
            autoscaled("standard", metric="rps"),
            {"autoscaling": {"metric": "rps", "target": 95, **autoscaling_defaults()}, "capacityAI": True},
        ),
        (
            autoscaled("serverless", metric="cpu", target=70),
            {"autoscaling": {"metric": "cpu", "target": 70, **autoscaling_defaults()}, "capacityAI": False},
        ),
        (
            autoscaled("standard", multi=[{"metric": "cpu", "target": 60}]),
            {"autoscaling": autoscaling_defaults(multi=[{"metric": "cpu", "target": 60}]), "capacityAI": False},
        ),
        (
            autoscaled("serverless", metric="rps", maxScale=9),
            {"autoscaling": {"metric": "rps", "target": 95, **autoscaling_defaults(maxScale=9)}, "capacityAI": True},
        ),
        (
            autoscaled("standard", metric="latency"),
            {"autoscaling": {"metric": "latency", "target": 95, **autoscaling_defaults()}, "capacityAI": True},
        ),
        # Cron autoscaling is stored as sent, nothing filled inside it.
        (autoscaled("cron", minScale=1), {"autoscaling": {"minScale": 1}, "capacityAI": True}),
        (autoscaled("cron", metric="cpu"), {"autoscaling": {"metric": "cpu"}, "capacityAI": False}),
        (
            workload("serverless", containers=[served() | {"gpu": GPU, "cpu": "2", "memory": "7Gi"}]),
            {"autoscaling": {"metric": "concurrency", "target": 95, **autoscaling_defaults()}, "capacityAI": False},
        ),
        (
            workload("cron", containers=[container(gpu=GPU, cpu="2", memory="7Gi")]),
            {"capacityAI": False},
        ),
    ],
)
def test_default_options_by_type(spec: dict[str, Any], options: dict[str, Any]) -> None:
    expected = {**options, "timeoutSeconds": 5, "debug": False, "suspend": False}
    if "autoscaling" in expected:
        expected = {"autoscaling": expected.pop("autoscaling"), **expected}
    assert stored(spec)["spec"]["defaultOptions"] == expected


@pytest.mark.parametrize("keda", [{"metric": "keda"}, {"keda": {"triggers": [{"type": "cron"}]}}])
def test_keda_gets_no_target_and_a_keda_block_alone_means_metric_keda(keda: dict[str, Any]) -> None:
    autoscaling = stored(autoscaled("standard", **keda), parent=KEDA_GVC)["spec"]["defaultOptions"]["autoscaling"]
    assert autoscaling["metric"] == "keda"
    assert "target" not in autoscaling


def test_default_options_keep_the_model_field_order() -> None:
    options = stored(workload("standard", defaultOptions={"suspend": True, "autoscaling": {"minScale": 2}}))["spec"][
        "defaultOptions"
    ]
    assert list(options) == ["autoscaling", "timeoutSeconds", "capacityAI", "debug", "suspend"]
    assert list(options["autoscaling"]) == [
        "metric",
        "target",
        "maxScale",
        "minScale",
        "scaleToZeroDelay",
        "maxConcurrency",
    ]


def test_local_options_are_stored_exactly_as_sent() -> None:
    local = [{"location": "aws-us-east-1", "autoscaling": {"maxScale": 3}}, {"location": "gcp-us-east1", "debug": True}]
    assert stored(workload("serverless", localOptions=copy.deepcopy(local)))["spec"]["localOptions"] == local


def test_firewall_cidr_lists_are_stored_deduplicated_and_sorted() -> None:
    sent = {
        "external": {
            "inboundAllowCIDR": ["203.0.113.9", "10.0.0.0/8", "203.0.113.9", "1.2.3.4"],
            "inboundBlockedCIDR": ["b::/64", "a::/64", "a::/64"],
            "outboundAllowHostname": ["z.example.com", "a.example.com"],
            "outboundAllowCIDR": ["0.0.0.0/0", "0.0.0.0/0"],
            "outboundBlockedCIDR": ["192.0.2.1", "192.0.2.0/24"],
        }
    }
    external = stored(workload(firewallConfig=sent))["spec"]["firewallConfig"]["external"]
    assert external == {
        "inboundAllowCIDR": ["1.2.3.4", "10.0.0.0/8", "203.0.113.9"],
        "inboundBlockedCIDR": ["a::/64", "b::/64"],
        "outboundAllowHostname": ["z.example.com", "a.example.com"],  # not a CIDR list: as sent
        "outboundAllowCIDR": ["0.0.0.0/0"],
        "outboundBlockedCIDR": ["192.0.2.0/24", "192.0.2.1"],
    }


@pytest.mark.parametrize(
    ("block", "sent", "filled"),
    [
        (
            "job",
            {"schedule": "@daily"},
            {"schedule": "@daily", "concurrencyPolicy": "Forbid", "historyLimit": 5, "restartPolicy": "Never"},
        ),
        (
            "rolloutOptions",
            {"maxSurgeReplicas": "2"},
            {
                "minReadySeconds": 0,
                "maxSurgeReplicas": "2",
                "scalingPolicy": "OrderedReady",
                "terminationGracePeriodSeconds": 90,
            },
        ),
        (
            "requestRetryPolicy",
            {},
            {
                "attempts": 2,
                "retryOn": [
                    "connect-failure",
                    "refused-stream",
                    "unavailable",
                    "cancelled",
                    "resource-exhausted",
                    "retriable-status-codes",
                ],
            },
        ),
        ("loadBalancer", {"geoLocation": {}}, {"geoLocation": {"enabled": False}, "replicaDirect": False}),
        ("firewallConfig", {"internal": {}}, CLOSED_FIREWALL),
        ("defaultOptions", {"multiZone": {}}, None),
    ],
)
def test_defaults_are_filled_inside_a_sent_block(block: str, sent: dict[str, Any], filled: Any) -> None:
    spec = stored(workload("cron" if block == "job" else "standard", **{block: sent}))["spec"]
    if filled is None:
        assert spec[block]["multiZone"] == {"enabled": False}
    else:
        assert spec[block] == filled


@pytest.mark.parametrize(
    "block", ["rolloutOptions", "requestRetryPolicy", "loadBalancer", "securityOptions", "sidecar", "localOptions"]
)
def test_optional_blocks_are_not_created(block: str) -> None:
    assert block not in stored(workload("standard"))["spec"]


@pytest.mark.parametrize("field", ["firewallConfig", "defaultOptions", "supportDynamicTags"])
def test_null_for_an_always_present_block_means_its_default(field: str) -> None:
    assert stored(workload("standard", **{field: None}))["spec"] == stored(workload("standard"))["spec"]


IDEMPOTENCE_CASES = [
    *[workload(type_) for type_ in MAXIMAL],
    *MAXIMAL.values(),
    cli_create(firewallConfig=PUBLIC_FIREWALL)["spec"],
    workload_run_body()["spec"],
    cron_run_body()["spec"],
    workload("standard", defaultOptions={"capacityAI": True}),
    autoscaled("standard", multi=[{"metric": "memory", "target": 50}]),
    autoscaled("standard", keda={"triggers": [{"type": "cron"}]}),
    workload("serverless", containers=[served() | {"gpu": GPU, "cpu": "2", "memory": "7Gi"}]),
    workload("standard", firewallConfig={"external": {"inboundAllowCIDR": ["b::1", "a::1", "b::1"]}}),
]


@pytest.mark.parametrize("spec", IDEMPOTENCE_CASES, ids=range(len(IDEMPOTENCE_CASES)))
def test_defaults_are_idempotent(spec: dict[str, Any]) -> None:
    """A spec read back and applied again (create, or update of itself) is the same spec."""
    first = stored(copy.deepcopy(spec), parent=KEDA_GVC)
    assert rewritten(first, parent=KEDA_GVC)["spec"] == first["spec"]
    again, errors = write(copy.deepcopy(first["spec"]), old=first, parent=KEDA_GVC)
    assert errors == []
    assert again["spec"] == first["spec"]


# --- updates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"), [("standard", "serverless"), ("serverless", "stateful"), ("cron", "standard")]
)
def test_type_cannot_change_after_creation(before: str, after: str) -> None:
    old = stored(workload(before))
    _, errors = write(workload(after), old=old)
    assert ("spec.type", "cannot be changed after creation") in pairs(errors)


def test_an_update_that_omits_the_type_keeps_standard_and_passes() -> None:
    old = stored(workload("standard"))
    spec = workload("standard")
    del spec["type"]
    assert write(spec, old=old)[1] == []


@pytest.mark.parametrize(
    "patch",
    [
        {"spec": {"defaultOptions": {"autoscaling": {"metric": "cpu"}}}},
        {"spec": {"$patch/containers": [{"name": "app", "gpu": GPU, "cpu": "2", "memory": "7Gi"}]}},
    ],
)
def test_a_defaulted_capacity_ai_gives_way_when_an_update_rules_it_out(patch: dict[str, Any]) -> None:
    """``update --set`` sends only the change; Capacity AI, on by default, must not make it a 400."""
    old = stored(workload("serverless"))
    assert old["spec"]["defaultOptions"]["capacityAI"] is True
    item, errors = patched(old, patch)
    assert errors == []
    assert item["spec"]["defaultOptions"]["capacityAI"] is False


@pytest.mark.parametrize(
    ("before", "patch", "after"),
    [
        (
            {},
            {"multi": [{"metric": "memory", "target": 70}]},
            {"multi": [{"metric": "memory", "target": 70}], "maxScale": 5, "minScale": 1},
        ),
        (
            {"metric": "rps", "target": 300},
            {"multi": [{"metric": "rps", "target": 300}]},
            {"multi": [{"metric": "rps", "target": 300}], "maxScale": 5, "minScale": 1},
        ),
        ({}, {"keda": {"triggers": [{"type": "cron"}]}}, {"metric": "keda", "maxScale": 5, "minScale": 1}),
        # A metric sent anew beside multi is the client's, and refused.
        ({}, {"multi": [{"metric": "memory"}], "metric": "rps"}, None),
    ],
)
def test_switching_to_multi_or_keda_replaces_the_stored_single_metric(
    before: dict[str, Any], patch: dict[str, Any], after: dict[str, Any] | None
) -> None:
    old = stored(autoscaled("standard", **before), parent=KEDA_GVC)
    item, errors = patched(old, {"spec": {"defaultOptions": {"autoscaling": patch}}}, parent=KEDA_GVC)
    if after is None:
        assert paths(errors) == ["spec.defaultOptions.autoscaling.metric"]
        return
    assert errors == []
    autoscaling = item["spec"]["defaultOptions"]["autoscaling"]
    assert {key: autoscaling[key] for key in after} == after
    assert "target" not in autoscaling
    assert ("metric" in autoscaling) is ("metric" in after)


def test_capacity_ai_turned_on_in_the_same_update_as_cpu_is_refused() -> None:
    old = stored(autoscaled("serverless", metric="rps"))
    old["spec"]["defaultOptions"]["capacityAI"] = False
    _, errors = patched(old, {"spec": {"defaultOptions": {"capacityAI": True, "autoscaling": {"metric": "cpu"}}}})
    assert paths(errors) == ["spec.defaultOptions.capacityAI"]


# --- several problems at once -----------------------------------------------------------------


def test_every_problem_comes_back_at_once() -> None:
    spec = workload(
        "serverless",
        defaultOptions={"autoscaling": {"metric": "latency", "minScale": 9, "maxScale": 3}, "capacityAI": True},
        localOptions=[
            {"location": "aws-us-east-1", "autoscaling": {"multi": [{"metric": "cpu"}]}},
            {"location": "//location/aws-us-east-1", "autoscaling": {"metric": "keda"}},
        ],
        job={"schedule": "@daily"},
        loadBalancer={"replicaDirect": True, "geoLocation": {"enabled": True}},
        rolloutOptions={"terminationGracePeriodSeconds": 1000},
        vm={},
        firewallConfig={"external": {"http": {"inboundHeaderFilter": [{"key": "x-a"}]}}},
    )
    assert sorted(errors_for(spec)) == sorted(
        [
            "spec.vm",
            "spec.job",
            "spec.localOptions[1].location",
            "spec.defaultOptions.autoscaling.metric",
            "spec.defaultOptions.autoscaling.minScale",
            "spec.localOptions[0].autoscaling.multi",
            "spec.localOptions[1].autoscaling.metric",
            "spec.loadBalancer.replicaDirect",
            "spec.loadBalancer.geoLocation.headers",
            "spec.rolloutOptions.terminationGracePeriodSeconds",
            "spec.firewallConfig.external.http.inboundHeaderFilter[0]",
        ]
    )


def test_schema_errors_come_back_together_before_any_rule() -> None:
    spec = workload(
        "standard",
        defaultOptions={"timeoutSeconds": 0, "autoscaling": {"metric": "fast"}},
        firewallConfig={"external": {"inboundAllowCIDR": ["300.0.0.1"]}},
        job={"schedule": "often"},
        loadBalancer={"direct": {"enabled": True, "ports": [{"externalPort": 80, "protocol": "SCTP"}]}},
    )
    assert errors_for(spec) == [
        "spec.firewallConfig.external.inboundAllowCIDR[0]",
        "spec.defaultOptions.autoscaling.metric",
        "spec.defaultOptions.timeoutSeconds",
        "spec.job.schedule",
        "spec.loadBalancer.direct.ports[0].protocol",
    ]
