"""Property: any valid container spec is accepted, and its stored form is a fixed point of the write.

Re-applying a workload read back from the API (``cpln apply`` of the same file, TF's refresh
then plan) must change nothing: defaults and normalisation are idempotent.
"""

from __future__ import annotations

import copy
from typing import Any

from _workload_container_support import assert_written_twice_the_same, write
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from plinth.kinds.workload.container_models import ContainerSpec
from plinth.kinds.workload.containers import fill_container_defaults

NAMES = ["app", "side", "worker", "proxy-2", "db"]
PORTS = [80, 443, 3000, 8080, 8081, 9000, 50051, 65535]
MOUNTS = [
    ("cpln://volumeset/data", "/data"),
    ("cpln://secret/tls", "/etc/tls/"),
    ("cpln://secret/db.password", "/etc/db/password"),
    ("s3://bucket", "/mnt/s3"),
    ("scratch://cache", "/var/cache/app"),
]
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def maybe(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    return draw(st.none() | strategy)


@st.composite
def probes(draw: st.DrawFn) -> dict[str, Any]:
    port = st.sampled_from(PORTS)
    handlers: list[st.SearchStrategy[dict[str, Any]]] = [
        st.fixed_dictionaries({"exec": st.fixed_dictionaries({"command": st.lists(st.text(max_size=4), min_size=1)})}),
        st.fixed_dictionaries({"grpc": st.fixed_dictionaries({}, optional={"port": port})}),
        st.fixed_dictionaries({"tcpSocket": st.fixed_dictionaries({}, optional={"port": port})}),
        st.fixed_dictionaries(
            {
                "httpGet": st.fixed_dictionaries(
                    {},
                    optional={
                        "path": st.sampled_from(["/", "/healthz"]),
                        "port": port,
                        "httpHeaders": st.lists(
                            st.fixed_dictionaries({"name": st.just("X-A"), "value": st.text(max_size=3)}), max_size=2
                        ),
                        "scheme": st.sampled_from(["HTTP", "HTTPS"]),
                    },
                )
            }
        ),
    ]
    probe: dict[str, Any] = draw(st.one_of(handlers))
    timings = {
        "initialDelaySeconds": st.integers(0, 600),
        "periodSeconds": st.integers(1, 600),
        "timeoutSeconds": st.integers(1, 600),
        "successThreshold": st.integers(1, 20),
        "failureThreshold": st.integers(1, 20),
    }
    probe.update(draw(st.fixed_dictionaries({}, optional=timings)))
    return probe


@st.composite
def containers(draw: st.DrawFn, name: str, numbers: list[int], legacy: int | None) -> dict[str, Any]:
    """One valid container named ``name`` exposing ``numbers`` (and ``legacy`` as ``port``)."""
    out: dict[str, Any] = {"name": name, "image": draw(st.sampled_from(["nginx:1.27", "//image/api:v1"]))}
    if draw(st.booleans()):
        out["gpu"] = {"nvidia": {"model": "t4", "quantity": draw(st.integers(1, 4))}}
        out["cpu"], out["memory"] = "2", "7Gi"
    else:
        cpu = maybe(draw, st.sampled_from(["250m", "1", "2000m"]))
        memory = maybe(draw, st.sampled_from(["32Mi", "128Mi"] if cpu is None else ["32Mi", "1Gi", "2000Mi"]))
        out.update({key: value for key, value in (("cpu", cpu), ("memory", memory)) if value is not None})
        if draw(st.booleans()):
            out["gpu"] = {"custom": {"resource": "amd.com/gpu", "quantity": draw(st.integers(0, 8))}}
    if draw(st.booleans()):
        # A minimum equal to its maximum fits every type's rules (stateful's included).
        out["minCpu"], out["minMemory"] = out.get("cpu", "50m"), out.get("memory", "128Mi")
    if numbers:
        ports = [
            {"number": n} | draw(st.fixed_dictionaries({}, optional={"protocol": st.just("grpc")})) for n in numbers
        ]
        out["ports"] = ports
    if legacy is not None:
        out["port"] = legacy
    optional = {
        "workingDir": st.sampled_from(["/", "/srv/app"]),
        "metrics": st.fixed_dictionaries({"port": st.just(9100), "path": st.just("/metrics")}),
        "readinessProbe": probes(),
        "livenessProbe": probes(),
        "env": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["A", "DB_URL", "-x.y"])},
                optional={"value": st.sampled_from(["", "x", "$(A)", "cpln://secret/s1"])},
            ),
            max_size=3,
            unique_by=lambda var: var["name"],
        ),
        "inheritEnv": st.booleans(),
        "command": st.text(max_size=10),
        "args": st.lists(st.text(max_size=5), max_size=3),
        "lifecycle": st.fixed_dictionaries({}, optional={"preStop": st.just({"exec": {"command": ["sleep", "5"]}})}),
        "volumes": st.lists(st.sampled_from(MOUNTS), unique=True, max_size=3).map(
            lambda mounts: [{"uri": uri, "path": path} for uri, path in mounts]
        ),
    }
    out.update(draw(st.fixed_dictionaries({}, optional=optional)))
    # Send the keys in a shuffled order: the stored order must not depend on it.
    return dict(draw(st.permutations(list(out.items()))))


@st.composite
def workload_specs(draw: st.DrawFn) -> dict[str, Any]:
    workload_type = draw(st.sampled_from(["standard", "stateful", "serverless", "cron"]))
    names = draw(st.permutations(NAMES))[: draw(st.integers(1, 3))]
    free = list(draw(st.permutations(PORTS)))
    built = []
    for index, name in enumerate(names):
        if workload_type == "serverless":
            # Exactly one port in the whole workload, on the first container, in either form.
            numbers, legacy = ([], None) if index else draw(st.sampled_from([([free[0]], None), ([], free[0])]))
        else:
            numbers = [free.pop() for _ in range(draw(st.integers(0, min(2, len(free)))))]
            legacy = draw(st.sampled_from([None, *numbers[:1], *free[-1:]]))
            if free and legacy == free[-1]:
                free.pop()
        built.append(draw(containers(name, numbers, legacy)))
    spec: dict[str, Any] = {"type": workload_type, "containers": built}
    if workload_type == "cron":
        spec["job"] = {"schedule": "*/5 * * * *"}
    return spec


@SETTINGS
@given(workload_specs())
def test_valid_containers_are_accepted_and_kept(spec: dict[str, Any]) -> None:
    item, errors = write(spec)
    note(f"stored: {item.get('spec')}")
    assert errors == []
    stored = item["spec"]["containers"]
    for sent, kept in zip(spec["containers"], stored, strict=True):
        assert list(kept) == [name for name in ContainerSpec.model_fields if name in kept]
        for key, value in sent.items():
            if key in ("port", "ports", "volumes", "readinessProbe", "livenessProbe"):
                continue
            assert kept[key] == value
        assert {"cpu", "memory", "inheritEnv"} <= set(kept)
        assert "port" not in kept
        expected = [port["number"] for port in sent.get("ports", [])]
        if "port" in sent and sent["port"] not in expected:
            expected.append(sent["port"])
        assert [port["number"] for port in kept.get("ports", [])] == expected
        for kind in ("readinessProbe", "livenessProbe"):
            if spec["type"] == "cron" or kind not in sent:
                assert kind not in kept
                continue
            # What the client sent is kept; the defaults only add what was missing.
            for key, value in sent[kind].items():
                if key == "httpGet":
                    assert value.items() <= kept[kind]["httpGet"].items()
                else:
                    assert kept[kind][key] == value


@SETTINGS
@given(workload_specs())
def test_stored_spec_is_a_fixed_point(spec: dict[str, Any]) -> None:
    first = assert_written_twice_the_same(spec)
    again = copy.deepcopy(first["spec"])
    fill_container_defaults(again)
    assert again == first["spec"]
