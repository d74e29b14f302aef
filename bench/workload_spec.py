"""A realistic workload spec, shared by the benchmark and the schema tests: three containers with
probes, env and resources, two volumes, autoscaling and a firewall."""

from __future__ import annotations

from typing import Any


def realistic_spec(volume_set: str | None = None) -> dict[str, Any]:
    """Three containers (an API, a worker and a log shipper). ``volume_set``: mount that shared
    volume set in the API container (its second volume), else a scratch volume."""
    probe = {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5, "periodSeconds": 10}
    second = f"cpln://volumeset/{volume_set}" if volume_set else "scratch://cache"
    return {
        "type": "standard",
        "containers": [
            {
                "name": "api",
                "image": "ghcr.io/acme/api:2.4.1",
                "ports": [{"protocol": "http", "number": 8080}],
                "cpu": "500m",
                "memory": "512Mi",
                "env": [
                    {"name": "LOG_LEVEL", "value": "info"},
                    {"name": "DATABASE_URL", "value": "cpln://secret/db.url"},
                    {"name": "FEATURE_FLAGS", "value": "search,export"},
                ],
                "readinessProbe": probe,
                "livenessProbe": {**probe, "initialDelaySeconds": 30},
                "volumes": [
                    {"uri": "cpln://secret/tls", "path": "/etc/tls"},
                    {"uri": second, "path": "/var/cache/api"},
                ],
            },
            {
                "name": "worker",
                "image": "ghcr.io/acme/worker:2.4.1",
                "command": "/bin/worker",
                "args": ["--queue", "jobs", "--concurrency", "4"],
                "cpu": "250m",
                "memory": "256Mi",
                "env": [{"name": "QUEUE_URL", "value": "amqp://queue.internal:5672"}],
                "livenessProbe": {"exec": {"command": ["/bin/worker", "health"]}},
            },
            {
                "name": "shipper",
                "image": "fluent/fluent-bit:3.1",
                "ports": [{"protocol": "tcp", "number": 2020}],
                "cpu": "100m",
                "memory": "128Mi",
                "readinessProbe": {"tcpSocket": {"port": 2020}},
            },
        ],
        "defaultOptions": {
            "autoscaling": {"metric": "rps", "target": 200, "minScale": 2, "maxScale": 10},
            "capacityAI": False,
            "timeoutSeconds": 30,
        },
        "firewallConfig": {
            "external": {
                "inboundAllowCIDR": ["0.0.0.0/0"],
                "outboundAllowHostname": ["*.amazonaws.com", "api.stripe.com"],
            },
            "internal": {"inboundAllowType": "same-gvc"},
        },
    }
