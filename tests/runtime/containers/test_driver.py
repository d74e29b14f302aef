"""The engine driver against real engines: every operation of the ``ContainerEngine`` contract,
on podman and on docker (each test runs once per engine).

Containers run the test image (``tests/support/containers.py``, ``tests/support/docker.py``);
the tests reach them only through ports published on 127.0.0.1, or from inside another
container of the same network.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from plinth.runtime.containers import (
    CliEngine,
    EngineError,
    EngineUnavailable,
    ImagePullError,
    ReplicaSpec,
    SecretFile,
    VolumeMount,
    find_engine,
    identity_labels,
    spec_digest,
)
from plinth.runtime.containers.protocol import MANAGED, WORKLOAD
from plinth.runtime.containers.tmpfs_secrets import TmpfsSecrets
from tests.aio import RunAsync
from tests.support import containers
from tests.support.containers import INDEX, ContainerKit, get_when_up

ABSENT = "localhost/plinth-test-absent:never-built"
KEY = os.urandom(32)
READY_WAIT_S = 30
#: A command that idles until stopped, ending at once on SIGTERM (as PID 1 it must trap it).
IDLE = "trap 'exit 0' TERM; sleep 300 & wait"
#: The engines' words for a container that ended and one removed (``ContainerEvent.action``).
ENDED = {"podman": ("died", "remove"), "docker": ("die", "destroy")}


@pytest.fixture(scope="module", params=["podman", "docker"])
def kit(request: pytest.FixtureRequest) -> ContainerKit:
    """The engine under test, its image and its test-run labels."""
    fixture = {"podman": "test_containers", "docker": "test_docker"}[request.param]
    found: ContainerKit = request.getfixturevalue(fixture)
    return found


@pytest.fixture(scope="module")
def engine(kit: ContainerKit) -> CliEngine:
    binary = shutil.which(kit.engine)
    assert binary is not None
    return CliEngine(kit.engine, binary, hash_key=KEY)


@pytest.fixture
def make(kit: ContainerKit, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``make(suffix, **fields)``: a replica spec of the test image named after the test, with
    the identity and test-run labels; every container made is removed after the test."""
    made: list[str] = []

    def spec(suffix: str = "", workload: str = "web", **fields: Any) -> ReplicaSpec:
        name = f"t-{kit.run_id}-{request.node.name[5:25].replace('_', '-').strip('[]')}{suffix}"
        made.append(name)
        labels = {**identity_labels("org1", "main", workload, "aws-us-west-2"), **kit.labels}
        return ReplicaSpec(name=name, image=kit.image, labels=labels, **fields)

    yield spec
    for name in made:
        kit.remove(name)


async def _until_exited(engine: CliEngine, name: str) -> Any:
    deadline = time.monotonic() + READY_WAIT_S
    while True:
        info = await engine.inspect(name)
        assert info is not None
        if info.state != "running" or time.monotonic() > deadline:
            return info
        await asyncio.sleep(0.1)


def _inspect(kit: ContainerKit, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(kit.cli("container", "inspect", name).stdout)[0]
    return doc


def test_images_present_are_found_and_missing_ones_fail_to_pull_with_the_engine_message(
    engine: CliEngine, kit: ContainerKit, run_async: RunAsync
) -> None:
    assert run_async(engine.image_present(kit.image)) is True
    assert run_async(engine.image_present(ABSENT)) is False
    with pytest.raises(ImagePullError) as raised:
        run_async(engine.pull(ABSENT))
    assert ABSENT in str(raised.value)
    assert len(str(raised.value)) > len(f"pulling {ABSENT}: ")  # the engine's reason, not just ours


def test_run_publishes_on_loopback_labels_and_limits(
    engine: CliEngine, kit: ContainerKit, make: Any, run_async: RunAsync
) -> None:
    spec = make(ports=[8080], cpu_millicores=250, memory_bytes=64 * 1024 * 1024, hostname="web-0")
    info = run_async(engine.run(spec))
    assert info.running and info.name == spec.name
    assert set(info.ports) == {8080}
    response = get_when_up(info.ports[8080], READY_WAIT_S)
    assert response.status_code == 200 and response.content == INDEX
    assert info.labels[MANAGED] == "true"
    assert info.labels[WORKLOAD] == "web" and info.labels["plinth.org"] == "org1"
    assert info.labels["plinth.gvc"] == "main" and info.labels["plinth.location"] == "aws-us-west-2"
    assert info.spec_hash == spec_digest(spec, KEY) == engine.digest(spec)
    doc = _inspect(kit, spec.name)
    assert doc["HostConfig"]["NanoCpus"] == 250_000_000
    assert doc["HostConfig"]["Memory"] == 64 * 1024 * 1024
    bindings = doc["NetworkSettings"]["Ports"]["8080/tcp"]
    assert [b["HostIp"] for b in bindings] == ["127.0.0.1"]
    assert doc["Config"]["Hostname"] == "web-0"
    assert info.started_at is not None and info.exit_code == 0


def test_env_values_reach_the_container_but_never_the_engine_command_line(
    engine: CliEngine, kit: ContainerKit, make: Any, run_async: RunAsync
) -> None:
    value = "s3cr3t-" + os.urandom(6).hex()
    spec = make(
        env={"API_TOKEN": value, "PATH": "/bin:/usr/bin", "MULTI": "a\nb"}, command="/bin/sh", args=["-c", IDLE]
    )
    assert value not in repr(spec)
    run_async(engine.run(spec))
    echoed = run_async(engine.exec(spec.name, ["sh", "-c", 'printf %s "$API_TOKEN|$MULTI|$PATH"']))
    assert echoed.exit_code == 0
    assert echoed.stdout.decode() == f"{value}|a\nb|/bin:/usr/bin"
    doc = _inspect(kit, spec.name)
    if kit.engine == "podman":  # podman records the argv it was given (docker does not)
        assert value not in " ".join(doc["Config"]["CreateCommand"])
        assert "API_TOKEN" in doc["Config"]["CreateCommand"]
    assert value not in json.dumps(doc["Config"]["Labels"])


def test_command_and_args_replace_the_image_entrypoint_and_exit_codes_are_reported(
    engine: CliEngine, make: Any, run_async: RunAsync
) -> None:
    spec = make(command="/bin/sh", args=["-c", "echo started; exit 7"])
    run_async(engine.run(spec))
    info = run_async(_until_exited(engine, spec.name))
    assert info.state == "exited" and info.exit_code == 7
    assert info.finished_at is not None and info.restart_count == 0

    async def lines() -> list[bytes]:
        return [line async for line in engine.logs(spec.name)]

    assert run_async(lines()) == [b"started\n"]


def test_list_returns_managed_containers_by_label_only(
    engine: CliEngine, make: Any, kit: ContainerKit, run_async: RunAsync
) -> None:
    first = make("-a", workload="alpha", command="/bin/sh", args=["-c", IDLE])
    second = make("-b", workload="beta", command="/bin/sh", args=["-c", "exit 3"])
    run_async(engine.run(first))
    run_async(engine.run(second))
    stranger = f"t-{kit.run_id}-unmanaged"
    label = f"{containers.TEST_RUN}={kit.run_id}"
    kit.cli("run", "-d", "--name", stranger, "--label", label, "--label", f"{WORKLOAD}=alpha", kit.image)
    try:
        alphas = run_async(engine.list({WORKLOAD: "alpha", containers.TEST_RUN: kit.run_id}))
        assert [c.name for c in alphas] == [first.name]
        assert alphas[0].running
        every = run_async(engine.list({containers.TEST_RUN: kit.run_id}))
        names = {c.name for c in every}
        assert {first.name, second.name} <= names and stranger not in names
        assert all(c.labels[MANAGED] == "true" for c in run_async(engine.list()))
    finally:
        kit.remove(stranger)


def test_stop_and_remove_are_idempotent(engine: CliEngine, make: Any, run_async: RunAsync) -> None:
    spec = make()  # the image's default: httpd, which stops at once on SIGTERM
    run_async(engine.run(spec))
    run_async(engine.stop(spec.name, timeout_s=5))
    stopped = run_async(engine.inspect(spec.name))
    assert stopped is not None and not stopped.running and stopped.state == "exited"
    run_async(engine.stop(spec.name, timeout_s=5))
    run_async(engine.remove(spec.name))
    assert run_async(engine.inspect(spec.name)) is None
    run_async(engine.remove(spec.name))
    run_async(engine.stop(spec.name))


def test_exec_reports_exit_codes_and_output(engine: CliEngine, make: Any, run_async: RunAsync) -> None:
    spec = make(command="/bin/sh", args=["-c", IDLE])
    run_async(engine.run(spec))
    done = run_async(engine.exec(spec.name, ["sh", "-c", "echo out; echo err >&2; exit 4"]))
    assert (done.exit_code, done.stdout, done.stderr) == (4, b"out\n", b"err\n")
    with pytest.raises(EngineError):
        run_async(engine.exec(spec.name + "-absent", ["true"]))


def test_logs_since_and_follow(engine: CliEngine, make: Any, run_async: RunAsync) -> None:
    script = "i=0; while [ $i -lt 3 ]; do echo line$i; i=$((i+1)); sleep 0.2; done"
    spec = make(command="/bin/sh", args=["-c", script])

    async def follow() -> list[bytes]:
        await engine.run(spec)
        return [line async for line in engine.logs(spec.name, follow=True)]  # ends when the container does

    assert run_async(follow()) == [b"line0\n", b"line1\n", b"line2\n"]
    info = run_async(_until_exited(engine, spec.name))
    assert info.started_at is not None and info.finished_at is not None

    async def since(moment: Any) -> list[bytes]:
        return [line async for line in engine.logs(spec.name, since=moment)]

    assert len(run_async(since(info.started_at - timedelta(minutes=1)))) == 3
    assert run_async(since(info.finished_at + timedelta(seconds=5))) == []
    with pytest.raises(EngineError):
        run_async(_drain(engine.logs(spec.name + "-absent")))


async def _drain(lines: Any) -> list[bytes]:
    return [line async for line in lines]


def test_containers_of_one_network_reach_each_other_by_alias(
    engine: CliEngine, make: Any, kit: ContainerKit, run_async: RunAsync
) -> None:
    network = f"t-{kit.run_id}-net"
    run_async(engine.ensure_network(network, kit.labels))
    run_async(engine.ensure_network(network, kit.labels))  # idempotent
    server = make("-srv", network=network, aliases=["web.main.cpln.local"])
    client = make("-cli", workload="client", network=network, command="/bin/sh", args=["-c", IDLE])
    run_async(engine.run(server))
    run_async(engine.run(client))
    deadline = time.monotonic() + READY_WAIT_S
    while True:
        got = run_async(engine.exec(client.name, ["wget", "-q", "-O", "-", "http://web.main.cpln.local:8080/"]))
        if got.exit_code == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert (got.exit_code, got.stdout) == (0, INDEX)
    run_async(engine.remove(server.name))
    run_async(engine.remove(client.name))
    run_async(engine.remove_network(network))
    assert kit.cli("network", "inspect", network, check=False).returncode != 0
    run_async(engine.remove_network(network))


def test_named_volumes_outlive_their_containers(
    engine: CliEngine, make: Any, kit: ContainerKit, run_async: RunAsync
) -> None:
    volume = f"t-{kit.run_id}-data"
    run_async(engine.ensure_volume(volume, kit.labels))
    run_async(engine.ensure_volume(volume, kit.labels))
    mount = VolumeMount(volume, "/data")
    writer = make("-w", volumes=[mount], command="/bin/sh", args=["-c", "echo kept > /data/file"])
    run_async(engine.run(writer))
    assert run_async(_until_exited(engine, writer.name)).exit_code == 0
    run_async(engine.remove(writer.name))
    reader = make("-r", volumes=[replace(mount, read_only=True)], command="/bin/sh", args=["-c", IDLE])
    run_async(engine.run(reader))
    assert run_async(engine.exec(reader.name, ["cat", "/data/file"])).stdout == b"kept\n"
    assert run_async(engine.exec(reader.name, ["sh", "-c", "echo x > /data/other"])).exit_code != 0  # read-only
    run_async(engine.remove(reader.name))
    run_async(engine.remove_volume(volume))
    assert kit.cli("volume", "inspect", volume, check=False).returncode != 0
    run_async(engine.remove_volume(volume))


def test_secret_files_arrive_through_the_engine_store_and_leave_with_the_container(
    engine: CliEngine, kit: ContainerKit, make: Any, run_async: RunAsync
) -> None:
    """Podman's secret store; with docker (whose store needs swarm mode) a tmpfs on the host,
    bind-mounted read-only (``tmpfs_secrets``)."""
    value = b"token-" + os.urandom(8).hex().encode()
    spec = make(secret_files=[SecretFile("/etc/app/token", value)], command="/bin/sh", args=["-c", IDLE])
    assert value.decode() not in repr(spec)
    info = run_async(engine.run(spec))
    read = run_async(engine.exec(spec.name, ["cat", "/etc/app/token"]))
    assert read.stdout == value
    mode = run_async(engine.exec(spec.name, ["stat", "-c", "%a", "/etc/app/token"]))
    assert mode.stdout == b"400\n"
    doc = _inspect(kit, spec.name)
    assert value.decode() not in json.dumps(doc)
    if kit.engine == "podman":
        secrets = info.labels["plinth.secrets"].split(",")
        assert kit.cli("secret", "inspect", *secrets, check=False).returncode == 0
        assert value.decode() not in " ".join(doc["Config"]["CreateCommand"])
    else:
        folder = TmpfsSecrets().directory(spec.name)
        assert run_async(engine.exec(spec.name, ["sh", "-c", "echo x > /etc/app/token"])).exit_code != 0  # read-only
        assert (folder / "0").read_bytes() == value and (folder / "0").stat().st_mode & 0o777 == 0o400
        assert folder.stat().st_mode & 0o777 == 0o700
        assert _filesystem(folder) == "tmpfs"  # in memory, never on a disk
    run_async(engine.remove(spec.name))
    if kit.engine == "podman":
        assert kit.cli("secret", "inspect", secrets[0], check=False).returncode != 0
    else:
        assert not folder.exists()


def _filesystem(path: Any) -> str:
    done = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_secret_files_on_docker_need_a_tmpfs(kit: ContainerKit, make: Any, run_async: RunAsync, tmp_path: Any) -> None:
    if kit.engine != "docker":
        pytest.skip("podman keeps secret files in its own store")
    binary = shutil.which("docker")
    assert binary is not None
    engine = CliEngine("docker", binary, hash_key=KEY, secret_tmpfs=str(tmp_path))  # the test's disk, no tmpfs
    spec = make(secret_files=[SecretFile("/etc/app/token", b"never-written")], command="/bin/sh", args=["-c", IDLE])
    with pytest.raises(EngineError) as raised:
        run_async(engine.run(spec))
    assert "need a tmpfs" in str(raised.value) and str(tmp_path) in str(raised.value)
    assert run_async(engine.inspect(spec.name)) is None
    assert not any(tmp_path.rglob("*"))  # nothing written


def test_docker_secret_files_of_containers_removed_behind_its_back_are_swept(
    kit: ContainerKit, make: Any, run_async: RunAsync
) -> None:
    if kit.engine != "docker":
        pytest.skip("podman keeps secret files in its own store")
    binary = shutil.which("docker")
    assert binary is not None
    engine = CliEngine("docker", binary, hash_key=KEY)
    files = [SecretFile("/etc/app/token", b"t-" + os.urandom(6).hex().encode())]
    kept, dropped = (make(suffix, secret_files=files, command="/bin/sh", args=["-c", IDLE]) for suffix in "kd")
    run_async(engine.run(kept))
    run_async(engine.run(dropped))
    kit.cli("rm", "--force", dropped.name)  # behind the driver's back: its files stay
    secrets = TmpfsSecrets()
    an_hour_ago = time.time() - 3600
    for spec in (kept, dropped):  # old enough not to be a run under way
        os.utime(secrets.directory(spec.name), (an_hour_ago, an_hour_ago))
    assert secrets.exists(dropped.name)
    young = f"t-{kit.run_id}-young"  # as a run under way has it: files written, no container yet
    secrets.write(young, files)
    fresh = CliEngine("docker", binary, hash_key=KEY)  # its first list sweeps
    try:
        run_async(fresh.list({WORKLOAD: "web"}))
        assert secrets.exists(young)
    finally:
        secrets.remove(young)
    assert not secrets.exists(dropped.name)
    assert secrets.exists(kept.name)  # a container that exists keeps its files, whatever the scope listed
    assert run_async(engine.exec(kept.name, ["cat", "/etc/app/token"])).stdout == files[0].value


def test_a_failed_start_leaves_nothing_behind(
    engine: CliEngine, kit: ContainerKit, make: Any, run_async: RunAsync
) -> None:
    missing_image = replace(make("-img", secret_files=[SecretFile("/s", b"x")]), image=ABSENT)
    with pytest.raises(EngineError):
        run_async(engine.run(missing_image))
    assert run_async(engine.inspect(missing_image.name)) is None
    if kit.engine == "podman":
        assert kit.cli("secret", "inspect", f"{missing_image.name}-secret-0", check=False).returncode != 0
    else:
        assert not TmpfsSecrets().directory(missing_image.name).exists()
    no_such_command = make("-cmd", command="/no/such/binary")
    with pytest.raises(EngineError) as raised:
        run_async(engine.run(no_such_command))
    assert "/no/such/binary" in str(raised.value)
    assert run_async(engine.inspect(no_such_command.name)) is None


def test_running_a_name_that_exists_is_refused_and_leaves_the_running_one_alone(
    engine: CliEngine, make: Any, run_async: RunAsync
) -> None:
    spec = make(secret_files=[SecretFile("/etc/app/token", b"first")], command="/bin/sh", args=["-c", IDLE])
    first = run_async(engine.run(spec))
    with pytest.raises(EngineError) as raised:
        run_async(engine.run(replace(spec, secret_files=[SecretFile("/etc/app/token", b"second")])))
    assert "exists" in str(raised.value)
    still = run_async(engine.inspect(spec.name))
    assert still is not None and still.running and still.id == first.id
    assert run_async(engine.exec(spec.name, ["cat", "/etc/app/token"])).stdout == b"first"


def test_spec_digest_is_keyed_and_follows_every_field() -> None:
    spec = ReplicaSpec(name="web-0", image="img", env={"A": "1"}, secret_files=[SecretFile("/s", b"v")])
    assert spec_digest(spec, b"k") == spec_digest(replace(spec), b"k")
    assert spec_digest(spec, b"k") != spec_digest(spec, b"other key")
    variants = [
        replace(spec, image="img2"),
        replace(spec, env={"A": "2"}),
        replace(spec, secret_files=[SecretFile("/s", b"w")]),
        replace(spec, args=["x"]),
        replace(spec, memory_bytes=1),
        replace(spec, volumes=[VolumeMount("v", "/v")]),
    ]
    assert len({spec_digest(v, b"k") for v in [spec, *variants]}) == 1 + len(variants)


def test_find_engine_prefers_podman_and_refuses_unknown_names(test_containers: ContainerKit) -> None:
    assert find_engine().name == "podman"
    assert find_engine("podman").binary == shutil.which("podman")
    with pytest.raises(EngineUnavailable):
        find_engine("containerd")


def test_the_session_clean_up_removes_everything_with_its_label(kit: ContainerKit) -> None:
    other = containers.new_run_id()
    label = f"{containers.TEST_RUN}={other}"
    kit.cli("run", "-d", "--label", label, kit.image)
    kit.cli("network", "create", "--label", label, f"t-{other}-net")
    kit.cli("volume", "create", "--label", label, f"t-{other}-vol")
    if kit.engine == "podman":  # docker has no secret store outside swarm mode
        kit.cli("secret", "create", "--label", label, f"t-{other}-sec", "-", input="x")
    assert len(containers.leftovers(other, kit.engine)) == {"podman": 4, "docker": 3}[kit.engine]
    containers.cleanup(other, kit.engine)
    assert containers.leftovers(other, kit.engine) == []


def test_list_is_one_ps_that_agrees_with_inspect(engine: CliEngine, make: Any, run_async: RunAsync) -> None:
    up = make("-up", ports=[8080])
    done = make("-done", command="/bin/sh", args=["-c", "exit 5"])
    run_async(engine.run(up))
    run_async(engine.run(done))
    run_async(_until_exited(engine, done.name))
    listed = {i.name: i for i in run_async(engine.list({WORKLOAD: "web", containers.TEST_RUN: engine_run(up)}))}
    for spec in (up, done):
        exact = run_async(engine.inspect(spec.name))
        assert exact is not None
        got = listed[spec.name]
        assert (got.id, got.image, got.state, got.exit_code, got.ports, got.labels) == (
            exact.id,
            exact.image,
            exact.state,
            exact.exit_code,
            exact.ports,
            exact.labels,
        )
        assert exact.started_at is not None
        if engine.name == "podman":
            assert got.started_at is not None
            assert abs((got.started_at - exact.started_at).total_seconds()) < 1  # to the second
        else:
            assert got.started_at is None  # docker's ps gives no times (listing.py)
    assert listed[done.name].exit_code == 5 and listed[up.name].ports.keys() == {8080}


def engine_run(spec: ReplicaSpec) -> str:
    return spec.labels[containers.TEST_RUN]


def test_run_itself_refuses_a_name_in_use(engine: CliEngine, make: Any, run_async: RunAsync) -> None:
    """``run --detach`` refuses the name (no ``inspect`` before it), through ``run`` and through
    ``start`` (``run`` without its report), and the running container is left alone."""
    spec = make(command="/bin/sh", args=["-c", IDLE])
    first = run_async(engine.run(spec))
    for again in (engine.run, engine.start):
        with pytest.raises(EngineError) as raised:
            run_async(again(replace(spec, env={"OTHER": "1"})))
        assert "a container of that name exists" in str(raised.value)
        still = run_async(engine.inspect(spec.name))
        assert still is not None and still.running and still.id == first.id


def test_start_makes_and_starts_a_container_without_reporting_it(
    engine: CliEngine, make: Any, run_async: RunAsync
) -> None:
    spec = make("-start", command="/bin/sh", args=["-c", IDLE])
    assert run_async(engine.start(spec)) is None
    info = run_async(engine.inspect(spec.name))
    assert info is not None and info.running and info.spec_hash == engine.digest(spec)
    no_such_command = make("-start-cmd", command="/no/such/binary")
    with pytest.raises(EngineError):
        run_async(engine.start(no_such_command))
    assert run_async(engine.inspect(no_such_command.name)) is None  # a failed start leaves nothing


def test_an_image_known_present_but_removed_behind_the_drivers_back_is_looked_up_again(
    engine: CliEngine, make: Any, kit: ContainerKit, run_async: RunAsync
) -> None:
    tag = f"localhost/plinth-test-busybox-gone:{kit.run_id}"
    kit.cli("tag", kit.image, tag)
    try:
        assert run_async(engine.image_present(tag)) is True
    finally:  # this name only: the image keeps its own
        kit.cli(*(("untag", tag, tag) if kit.engine == "podman" else ("rmi", tag)), check=False)
    assert run_async(engine.image_present(tag)) is True  # known present: not asked again
    spec = replace(make(), image=tag)
    with pytest.raises(ImagePullError) as raised:  # create failed, the image was gone: pulled, which fails here
        run_async(engine.run(spec))
    assert tag in str(raised.value)
    assert run_async(engine.image_present(tag)) is False
    assert run_async(engine.inspect(spec.name)) is None


def test_events_reach_each_subscriber_for_its_own_labels(
    engine: CliEngine, make: Any, kit: ContainerKit, run_async: RunAsync
) -> None:
    spec = make(workload="evented")
    mine = {WORKLOAD: "evented", containers.TEST_RUN: kit.run_id}
    others = {WORKLOAD: "not-evented", containers.TEST_RUN: kit.run_id}

    async def scenario() -> tuple[list[str], list[str]]:
        seen: dict[str, list[str]] = {"mine": [], "others": []}

        async def follow(key: str, labels: dict[str, str]) -> None:
            async for event in engine.events(labels):
                seen[key].append(f"{event.action} {event.name}")

        tasks = [asyncio.create_task(follow("mine", mine)), asyncio.create_task(follow("others", others))]
        wanted = {f"{action} {spec.name}" for action in ("create", "start", *ENDED[engine.name])}
        # The stream replays nothing from before it reads: make containers until one is seen
        # from its creation on (a stream that began reading between a create and its start saw
        # the start alone; the next container's create comes after it began).
        deadline = time.monotonic() + READY_WAIT_S
        while f"create {spec.name}" not in seen["mine"] and time.monotonic() < deadline:
            await engine.remove(spec.name)
            await engine.run(spec)
            await asyncio.sleep(0.5)
        await engine.remove(spec.name)
        while not wanted <= set(seen["mine"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return seen["mine"], seen["others"]

    got, others_got = run_async(scenario())
    assert {f"{action} {spec.name}" for action in ("create", "start", *ENDED[engine.name])} <= set(got), got
    assert others_got == []
