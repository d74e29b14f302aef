"""``to_terraform`` for workloads: the provider's ``cpln_workload`` layout (TF resource_workload.go),
parsed back with python-hcl2 and compared value by value with the wire document."""

from __future__ import annotations

import copy
import json
from typing import Any

from plinth.convert import to_terraform
from plinth.convert.terraform_workload import provider_json
from tests.cli import golden_docs as d
from tests.convert.test_terraform import resources


def hcl_string(raw: str) -> str:
    """A string as python-hcl2 hands it back (escapes kept) -> its value."""
    return str(json.loads('"' + raw + '"')) if "\\" in raw else raw


def web() -> dict[str, Any]:
    return resources(to_terraform(d.WORKLOAD))[("cpln_workload", "web")]


def test_head_carries_gvc_type_identity_and_string_tags() -> None:
    body = web()
    assert (body["name"], body["gvc"], body["type"]) == ("web", "prod", "standard")
    assert body["description"] == d.WORKLOAD["description"]
    assert body["identity_link"] == "/org/acme/gvc/prod/identity/storefront"
    assert body["support_dynamic_tags"] is True
    assert body["tags"] == {
        "team": "web",
        "tier": "1",
        "public": "true",
        "cpln/deployTimestamp": "2025-02-20T08:59:00.000Z",
    }
    for server_owned in ("id", "version", "status", "health", "links", "created", "spec", "containers"):
        assert server_owned not in body


def test_containers_are_blocks_with_env_maps_ports_blocks_and_volumes() -> None:
    containers = web()["container"]
    assert [c["name"] for c in containers] == ["proxy", "app", "shipper"]
    proxy, app, shipper = containers
    assert proxy["env"] == {"UPSTREAM": "http://localhost:3000", "LOG_LEVEL": "info"}
    assert app["env"]["FEATURE_FLAGS"] is None  # a variable without a value stays unset
    assert app["env"]["DATABASE_URL"] == "cpln://secret/db-password"
    assert shipper["env"] == {"FLUENT_OUTPUT": "s3://acme-logs/web"}
    assert [(p["protocol"], p["number"]) for p in app["ports"]] == [("http2", 3000), ("grpc", 50051)]
    assert (app["working_directory"], app["cpu"], app["memory"]) == ("/srv/app", "500m", "1Gi")
    assert (app["min_cpu"], app["min_memory"], app["inherit_env"]) == ("250m", "512Mi", True)
    assert (app["command"], app["args"]) == ("node", ["server.js", "--port", "3000"])
    assert app["metrics"] == [{"port": 9464, "path": "/metrics", "drop_metrics": ["^go_.*", "^process_.*"]}]
    assert [v["uri"] for v in app["volume"]] == ["cpln://volumeset/data", "scratch://cache"]
    assert proxy["volume"] == [{"uri": "cpln://secret/tls-cert", "recovery_policy": "retain", "path": "/etc/nginx/tls"}]
    assert proxy["lifecycle"] == [{"pre_stop": [{"exec": [{"command": ["sh", "-c", "sleep 20"]}]}]}]
    for wire_name in ("volumes", "workingDir", "readinessProbe", "minCpu", "inheritEnv"):
        assert wire_name not in app


def test_probes_take_one_check_block_each_with_http_headers_as_a_map() -> None:
    proxy, app, shipper = web()["container"]
    ready = proxy["readiness_probe"][0]
    assert ready["http_get"] == [
        {"path": "/healthz", "port": 8080, "http_headers": {"X-Probe": "readiness"}, "scheme": "HTTP"}
    ]
    assert (ready["initial_delay_seconds"], ready["period_seconds"], ready["failure_threshold"]) == (5, 10, 3)
    assert proxy["liveness_probe"][0]["tcp_socket"] == [{"port": 8080}]
    assert app["readiness_probe"][0]["grpc"] == [{"port": 50051}]
    assert app["liveness_probe"][0]["exec"] == [{"command": ["/bin/healthcheck", "--live"]}]
    assert "readiness_probe" not in shipper


def test_firewall_options_and_the_other_spec_blocks() -> None:
    body = web()
    external = body["firewall_spec"][0]["external"][0]
    assert external["inbound_allow_cidr"] == ["0.0.0.0/0"]
    assert external["inbound_blocked_cidr"] == ["203.0.113.0/24"]
    assert external["outbound_allow_hostname"] == ["*.stripe.com", "api.github.com"]
    assert external["outbound_allow_port"] == [{"protocol": "https", "number": 443}]
    header_filter = external["http"][0]["inbound_header_filter"][0]
    assert (header_filter["key"], hcl_string(header_filter["allowed_values"][0])) == ("x-tenant", "^acme-[a-z]+$")
    internal = body["firewall_spec"][0]["internal"][0]
    assert internal == {
        "inbound_allow_type": "workload-list",
        "inbound_allow_workload": ["/org/acme/gvc/prod/workload/api"],
    }

    options = body["options"][0]
    assert (options["capacity_ai"], options["timeout_seconds"], options["debug"], options["suspend"]) == (
        False,
        15,
        False,
        False,
    )
    assert options["autoscaling"][0] == {
        "metric": "cpu",
        "target": 70,
        "min_scale": 2,
        "max_scale": 10,
        "scale_to_zero_delay": 300,
        "max_concurrency": 0,
    }
    assert options["multi_zone"] == [{"enabled": True}]
    local = body["local_options"][0]
    assert local["location"] == "gcp-us-east1"  # the provider names the location; it builds the link
    assert local["autoscaling"][0]["max_scale"] == 4

    assert body["rollout_options"][0] == {
        "min_ready_seconds": 10,
        "max_unavailable_replicas": "1",
        "max_surge_replicas": "25%",
        "scaling_policy": "OrderedReady",
        "termination_grace_period_seconds": 90,
    }
    assert body["security_options"][0] == {"file_system_group_id": 1001, "run_as_user": 1001}
    balancer = body["load_balancer"][0]
    assert balancer["replica_direct"] is False
    direct = balancer["direct"][0]
    assert (direct["enabled"], direct["ipset"]) == (True, "/org/acme/ipset/edge")
    assert direct["port"] == [{"external_port": 8443, "protocol": "TCP", "scheme": "https", "container_port": 8080}]
    assert balancer["geo_location"][0]["headers"] == [{"city": "x-geo-city", "country": "x-geo-country"}]
    assert body["request_retry_policy"][0] == {"attempts": 3, "retry_on": ["connect-failure", "refused-stream", "5xx"]}
    for absent in ("job", "sidecar", "extras", "vm"):
        assert absent not in body


def test_a_list_gives_one_resource_per_workload_and_cron_carries_its_job() -> None:
    found = resources(to_terraform(d.WORKLOADS))
    assert sorted(found) == [("cpln_workload", "api"), ("cpln_workload", "nightly_report"), ("cpln_workload", "web")]
    cron = found[("cpln_workload", "nightly_report")]
    assert (cron["name"], cron["type"]) == ("nightly-report", "cron")
    assert cron["job"][0] == {
        "schedule": "0 3 * * *",
        "concurrency_policy": "Forbid",
        "history_limit": 5,
        "restart_policy": "OnFailure",
        "active_deadline_seconds": 3600,
    }
    assert "readiness_probe" not in cron["container"][0]
    api = found[("cpln_workload", "api")]
    assert (api["type"], api["container"][0]["env"]) == ("serverless", {})
    assert api["options"][0]["autoscaling"][0]["metric"] == "concurrency"


def test_options_without_autoscaling_still_get_the_block_the_provider_requires() -> None:
    item = copy.deepcopy(d.WORKLOAD_CRON)
    item["spec"]["defaultOptions"] = {"suspend": True}
    item["spec"]["localOptions"] = [{"location": "/org/acme/location/aws-us-west-2", "suspend": False}]
    body = resources(to_terraform(item))[("cpln_workload", "nightly_report")]
    assert body["options"] == [{"suspend": True, "autoscaling": [{}]}]
    assert body["local_options"] == [{"location": "aws-us-west-2", "suspend": False, "autoscaling": [{}]}]


def test_gpu_keda_sidecar_and_extras() -> None:
    item = copy.deepcopy(d.WORKLOAD)
    spec = item["spec"]
    spec["containers"][1]["gpu"] = {"nvidia": {"model": "t4", "quantity": 1}}
    spec["containers"][2]["gpu"] = {"custom": {"resource": "amd.com/gpu", "runtimeClass": "rocm", "quantity": 2}}
    spec["defaultOptions"]["spot"] = True  # TS-only, the provider has no argument for it
    spec["defaultOptions"]["autoscaling"] = {
        "metric": "keda",
        "minScale": 0,
        "maxScale": 8,
        "keda": {
            "pollingInterval": 30,
            "cooldownPeriod": 300,
            "triggers": [
                {
                    "type": "aws-sqs-queue",
                    "name": "orders",
                    "metadata": {"queueURL": "https://sqs/acme/orders", "queueLength": 5},
                    "metricType": "AverageValue",
                    "authenticationRef": {"name": "sqs-creds"},
                }
            ],
            "advanced": {"scalingModifiers": {"formula": "orders * 2", "target": "10"}},
            "fallback": {"failureThreshold": 3, "replicas": 2, "behavior": "static"},
        },
    }
    envoy = {
        "http": [{"name": "acme.lua", "priority": 50, "typed_config": {"@type": "type.lua", "code": "a<b && c>d"}}]
    }
    extras = {"tolerations": [{"key": "gpu", "operator": "Exists"}], "affinity": {"nodeAffinity": {}}}
    spec["sidecar"] = {"envoy": envoy}
    spec["extras"] = extras
    body = resources(to_terraform(item))[("cpln_workload", "web")]
    _, app, shipper = body["container"]
    assert app["gpu_nvidia"] == [{"model": "t4", "quantity": 1}]
    assert shipper["gpu_custom"] == [{"resource": "amd.com/gpu", "runtime_class": "rocm", "quantity": 2}]
    assert "gpu" not in app and "gpu_custom" not in app
    options = body["options"][0]
    assert "spot" not in options
    keda = options["autoscaling"][0]["keda"][0]
    assert (keda["polling_interval"], keda["cooldown_period"]) == (30, 300)
    trigger = keda["trigger"][0]
    assert (trigger["type"], trigger["name"], trigger["metric_type"]) == ("aws-sqs-queue", "orders", "AverageValue")
    assert trigger["metadata"] == {"queueURL": "https://sqs/acme/orders", "queueLength": "5"}  # a map of strings
    assert trigger["authentication_ref"] == [{"name": "sqs-creds"}]
    assert keda["advanced"][0]["scaling_modifiers"] == [{"target": "10", "formula": "orders * 2"}]
    assert keda["fallback"] == [{"failure_threshold": 3, "replicas": 2, "behavior": "static"}]
    assert json.loads(hcl_string(body["sidecar"][0]["envoy"])) == envoy
    assert json.loads(hcl_string(body["extras"])) == extras


def test_json_strings_are_written_as_the_provider_stores_them() -> None:
    assert (
        provider_json({"b": [1, "x"], "a": {"d": 1, "c": "<&>"}})
        == '{"a":{"c":"\\u003c\\u0026\\u003e","d":1},"b":[1,"x"]}'
    )
    assert provider_json({"é": "\u2028"}) == '{"é":"\\u2028"}'


def test_vm_is_a_nested_attribute_in_snake_case() -> None:
    item = copy.deepcopy(d.WORKLOAD_SERVERLESS)
    item["spec"]["type"] = "vm"
    item["spec"]["containers"] = [{"name": "guest", "cpu": "2000m", "memory": "4Gi"}]
    item["spec"]["vm"] = {
        "bootDisk": {
            "source": {"oci": {"image": "quay.io/containerdisks/ubuntu:22.04"}},
            "bus": "virtio",
            "bootOrder": 1,
        },
        "cpu": {"sockets": 1, "threads": 2},
        "firmware": {"bootloader": "efi", "secureBoot": False},
        "guestOS": "linux",
        "networks": [{"name": "default"}],
        "cloudInit": {"userDataSecret": "cloud-init", "sshPublicKeySecrets": ["keys"]},
        "accessCredentials": [{"sshPublicKeySecret": "keys", "users": ["ubuntu"], "deliveryMethod": "qemuGuestAgent"}],
        "runStrategy": "Always",
        "hostname": None,
    }
    body = resources(to_terraform(item))[("cpln_workload", "api")]
    assert body["type"] == "vm"
    assert body["vm"] == {
        "boot_disk": {
            "source": {"oci": {"image": "quay.io/containerdisks/ubuntu:22.04"}},
            "bus": "virtio",
            "boot_order": 1,
        },
        "cpu": {"sockets": 1, "threads": 2},
        "firmware": {"bootloader": "efi", "secure_boot": False},
        "guest_os": "linux",
        "network": [{"name": "default"}],
        "cloud_init": {"user_data_secret": "cloud-init", "ssh_public_key_secrets": ["keys"]},
        "access_credential": [
            {"ssh_public_key_secret": "keys", "users": ["ubuntu"], "delivery_method": "qemuGuestAgent"}
        ],
        "run_strategy": "Always",
    }
    assert "vm" not in body["container"][0]
