"""``ContainerEngine`` for podman and docker, driven through their command-line clients.

The two CLIs agree on everything used here (``run --detach``, ``inspect``'s JSON, ``-p
127.0.0.1::PORT``, ``--network-alias``, label filters), so one class drives both; it runs them
as asyncio subprocesses with the process environment as it is, so the engine's own
configuration applies (podman reads ``CONTAINERS_CONF``, docker ``DOCKER_HOST``), and names no
network, registry or runtime of its own.

Where they differ:

- secret files use podman's secret store (``podman secret create`` from stdin, mounted with
  ``--secret NAME,type=mount,target=PATH``); docker keeps secrets only in swarm mode, so with
  docker they are files on a tmpfs bind-mounted read-only (``tmpfs_secrets``);
- ``exec`` exit code 125 is podman's own failure (no such container, not running), raised as an
  error rather than reported as the command's exit code; docker's own failures exit 1;
- ``rm --force`` needs podman's ``--time 0`` to kill at once (docker's has no such option);
- ``ps``'s JSON (``listing``) and the events stream's (``events``) have different shapes.

Engine commands are what a pass waits on (each is a CLI start-up plus, with podman, its storage
lock), so the driver runs as few as it can: ``list`` is one ``ps``; ``start`` is one ``run
--detach`` (create and start in one command), which itself refuses a name in use (checked first
only for a spec with secret files, whose engine secrets share the container's name); ``run`` is
``start`` and one ``inspect``; an image, or a network, once known present in this process is not
looked up again (``run --detach`` is told never to pull: when it fails on an image removed behind
the driver's back, ``start`` looks again, pulls it and runs once more).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from plinth.runtime.containers import process
from plinth.runtime.containers.events import EventHub
from plinth.runtime.containers.execstream import start_exec
from plinth.runtime.containers.listing import STATES, parse_ps
from plinth.runtime.containers.protocol import (
    ENGINE_ENV_NAMES,
    ENGINE_ENV_PREFIXES,
    LOG_DRIVERS,
    LOG_FILE_MAX,
    MANAGED,
    SECRETS,
    SPEC_HASH,
    ContainerEvent,
    ContainerInfo,
    EngineError,
    EngineUnavailable,
    ExecRequest,
    ExecResult,
    ExecStream,
    ImagePullError,
    ReplicaSpec,
    spec_digest,
)
from plinth.runtime.containers.tmpfs_secrets import TmpfsSecrets

ENGINES = ("podman", "docker")
#: Upper bounds on one CLI call, so a wedged engine surfaces as an error instead of a hang.
CALL_TIMEOUT_S = 60.0
PULL_TIMEOUT_S = 600.0
#: The network mode that shares the host's namespace (podman's and docker's word).
HOST_NETWORKS = frozenset({"host"})
#: Words in an engine's error that mean "there is no such object" (podman's and docker's).
_GONE = ("no such", "not known", "not found")
#: ``create``'s refusal of a name in use: podman's "that name is already in use", docker's
#: "Conflict. The container name ... is already in use".
_TAKEN = "already in use"
#: ``rm --force`` at once: podman's waits out the stop timeout without ``--time 0``; docker's
#: kills at once and has no such option.
RM_AT_ONCE = {"podman": ("--time", "0"), "docker": ()}


class _NameTaken(Exception):
    """``run`` refused the name: a container of that name exists (and is not this call's)."""


def find_engine(choice: str | None = None, hash_key: bytes = b"") -> CliEngine:
    """The engine ``choice`` names (``podman`` or ``docker``), or by default podman when it is
    on ``PATH``, else docker; :class:`EngineUnavailable` when the one needed is missing."""
    if choice is not None and choice not in ENGINES:
        raise EngineUnavailable(f"unknown container engine '{choice}' (choose podman or docker)")
    for name in (choice,) if choice else ENGINES:
        binary = shutil.which(name)
        if binary:
            return CliEngine(name, binary, hash_key)
    wanted = choice or "podman or docker"
    raise EngineUnavailable(f"no container engine found: install {wanted} (e.g. apt-get install podman)")


def _gone(stderr: str) -> bool:
    text = stderr.lower()
    return any(word in text for word in _GONE)


def _time(value: Any) -> datetime | None:
    """An engine timestamp (RFC 3339 with up to nanoseconds), ``None`` for the zero time."""
    if not isinstance(value, str) or not value or value.startswith("0001-01-01"):
        return None
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?", value)
    if match is None:
        return None
    fraction = (match.group(2) or ".0")[:7]
    zone = match.group(3) or "Z"
    return datetime.fromisoformat(match.group(1) + fraction + ("+00:00" if zone == "Z" else zone))


def _ports(doc: Mapping[str, Any]) -> dict[int, int]:
    """Container port → host port, for the TCP ports published on 127.0.0.1."""
    found: dict[int, int] = {}
    for key, bindings in ((doc.get("NetworkSettings") or {}).get("Ports") or {}).items():
        port, _, proto = str(key).partition("/")
        if proto not in ("", "tcp"):
            continue
        for binding in bindings or ():
            if binding.get("HostIp") in ("127.0.0.1", "", None) and binding.get("HostPort"):
                found[int(port)] = int(binding["HostPort"])
                break
    return found


def parse_inspect(doc: Mapping[str, Any]) -> ContainerInfo:
    """A :class:`ContainerInfo` from one element of ``inspect``'s JSON (podman's or docker's)."""
    state = doc.get("State") or {}
    config = doc.get("Config") or {}
    return ContainerInfo(
        id=str(doc.get("Id", "")),
        name=str(doc.get("Name", "")).lstrip("/"),
        image=str(doc.get("ImageName") or config.get("Image") or ""),
        state=STATES.get(str(state.get("Status")), str(state.get("Status", "unknown"))),
        exit_code=int(state.get("ExitCode") or 0),
        restart_count=int(doc.get("RestartCount") or 0),
        started_at=_time(state.get("StartedAt")),
        finished_at=_time(state.get("FinishedAt")),
        ports=_ports(doc),
        labels=dict(config.get("Labels") or {}),
        # Podman 4 and docker name the log file at the top (podman also under HostConfig).
        log_path=str(doc.get("LogPath") or ((doc.get("HostConfig") or {}).get("LogConfig") or {}).get("Path") or ""),
    )


#: Podman refuses longer secret names ("only 64 [a-zA-Z0-9-_.] characters allowed").
SECRET_NAME_MAX = 64


def secret_name(container: str, index: int) -> str:
    """The engine secret of a container's ``index``-th secret file: named after the container
    when that fits podman's limit, else after a digest of its name (still one per container)."""
    name = f"{container}-secret-{index}"
    if len(name) <= SECRET_NAME_MAX:
        return name
    return f"plinth-secret-{hashlib.sha256(container.encode()).hexdigest()[:40]}-{index}"


def _label_args(labels: Mapping[str, str]) -> list[str]:
    return [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]


def _engine_reads(name: str) -> bool:
    return name in ENGINE_ENV_NAMES or name.startswith(ENGINE_ENV_PREFIXES)


class CliEngine:
    """Drives ``binary`` (podman or docker). ``hash_key`` keys the spec digest labels
    (:func:`~plinth.runtime.containers.protocol.spec_digest`): keep it stable across restarts,
    or nothing is adopted. ``secret_tmpfs``: where docker's secret files go (``tmpfs_secrets``)."""

    def __init__(self, name: str, binary: str, hash_key: bytes = b"", secret_tmpfs: str | None = None) -> None:
        self.name = name
        self.binary = binary
        self._hash_key = hash_key
        #: Images and networks known present (module docstring): never looked up again.
        self._images: set[str] = set()
        self._networks: set[str] = set()
        self._hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EventHub] = weakref.WeakKeyDictionary()
        self._tmpfs = TmpfsSecrets(secret_tmpfs)

    def digest(self, spec: ReplicaSpec) -> str:
        return spec_digest(spec, self._hash_key)

    async def _call(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = CALL_TIMEOUT_S,
    ) -> tuple[int, bytes, bytes]:
        """Run the engine CLI; (exit code, stdout, stderr). Never raises for a non-zero exit."""
        environ = {**os.environ, **env} if env else None
        try:
            proc = await process.start(
                self.binary,
                *args,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=environ,
            )
        except OSError as exc:
            raise EngineUnavailable(f"cannot run {self.binary}: {exc}") from exc
        try:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
            # that arrives as the command ends, and a cancelled controller then runs on.
            async with asyncio.timeout(timeout_s):
                out, err = await proc.communicate(stdin)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise EngineError(f"{self.name} {args[0]} did not answer within {timeout_s:g} s") from None
        finally:
            if proc.returncode is None and args[:1] == ("secret",):
                # Cancelled while writing podman's secret store: let it finish. Killed mid-write,
                # podman 4.3's file driver leaves its data file empty, and every later secret
                # command fails ("unexpected end of JSON input") until it is repaired by hand.
                if proc.stdin is not None:
                    proc.stdin.close()  # a value cut short fails the create; it never hangs
                with contextlib.suppress(ProcessLookupError, TimeoutError):
                    await asyncio.wait_for(asyncio.shield(proc.wait()), timeout_s)
            if proc.returncode is None:  # cancelled: do not leave the CLI running
                proc.kill()
                with contextlib.suppress(ProcessLookupError):
                    await proc.wait()
        assert proc.returncode is not None
        return proc.returncode, out, err

    async def _check(self, what: str, *args: str, **kwargs: Any) -> bytes:
        """Run the CLI and return its stdout; :class:`EngineError` naming ``what`` when it fails."""
        code, out, err = await self._call(*args, **kwargs)
        if code != 0:
            raise EngineError(f"{what}: {err.decode(errors='replace').strip() or f'exit code {code}'}")
        return out

    # Images

    async def image_present(self, image: str) -> bool:
        if image in self._images:
            return True
        code, _, err = await self._call("image", "inspect", "--format", "{{.Id}}", image)
        if code == 0:
            self._images.add(image)
            return True
        if _gone(err.decode(errors="replace")):
            return False
        raise EngineError(f"looking up image {image}: {err.decode(errors='replace').strip()}")

    async def pull(self, image: str) -> None:
        code, _, err = await self._call("pull", "--quiet", image, timeout_s=PULL_TIMEOUT_S)
        if code != 0:
            raise ImagePullError(f"pulling {image}: {err.decode(errors='replace').strip() or f'exit code {code}'}")
        self._images.add(image)

    # Containers

    async def run(self, spec: ReplicaSpec) -> ContainerInfo:
        await self.start(spec)
        info = await self.inspect(spec.name)
        if info is None:
            raise EngineError(f"container {spec.name} vanished right after it started")
        return info

    async def start(self, spec: ReplicaSpec) -> None:
        # Replicas are reached by users' exec sessions: never the host's namespaces. The driver
        # passes no --privileged, --pid, --ipc or --userns; a network naming the host's (or
        # another container's, ``container:NAME``, or a path, ``ns:PATH``) is refused.
        if spec.network is not None and (spec.network in HOST_NETWORKS or ":" in spec.network):
            raise EngineError(f"{spec.name}: network '{spec.network}' would share a namespace; refused")
        # Podman keeps secret files in its secret store; docker (whose store needs swarm mode)
        # gets them on a tmpfs, bind-mounted read-only (tmpfs_secrets).
        in_store = self.name == "podman"
        stored = spec.secret_files if in_store else ()
        secrets = [secret_name(spec.name, index) for index in range(len(stored))]
        on_tmpfs = bool(spec.secret_files) and not in_store
        labels = {**spec.labels, MANAGED: "true", SPEC_HASH: self.digest(spec)}
        if secrets:
            labels[SECRETS] = ",".join(secrets)
        args = ["run", "--detach", "--name", spec.name, "--pull", "never"]
        # A file the log collector reads (runtime/logs), bounded by the engine's own rotation.
        args += ["--log-driver", LOG_DRIVERS[self.name], "--log-opt", f"max-size={LOG_FILE_MAX}"]
        args += _label_args(labels)
        passed: dict[str, str] = {}
        for key, value in spec.env.items():
            if _engine_reads(key):  # the CLI itself would read it: only on its command line
                args += ["--env", f"{key}={value}"]
            else:  # the value travels in the CLI's environment, never in argv
                args += ["--env", key]
                passed[key] = value
        if spec.hostname:
            args += ["--hostname", spec.hostname]
        if spec.command is not None:
            args += ["--entrypoint", spec.command]
        if spec.cpu_millicores is not None:
            args += ["--cpus", f"{spec.cpu_millicores / 1000:g}"]
        if spec.memory_bytes is not None:
            args += ["--memory", str(spec.memory_bytes)]
        for port in spec.ports:
            args += ["--publish", f"127.0.0.1::{port}"]
        if spec.network:
            args += ["--network", spec.network]
            for alias in spec.aliases:
                args += ["--network-alias", alias]
        for mount in spec.volumes:
            args += ["--volume", f"{mount.volume}:{mount.path}" + (":ro" if mount.read_only else "")]
        for secret, file in zip(secrets, stored, strict=True):
            args += ["--secret", f"{secret},type=mount,target={file.path},mode={file.mode:04o}"]
        if on_tmpfs:
            args += self._tmpfs.mount_args(spec.name, spec.secret_files)
        args += [spec.image, *spec.args]
        # Secret files are named after the container: refused before they are touched, so the
        # failure path below never removes a running replica's secrets. Without secrets,
        # ``create`` itself refuses a name in use (one command less).
        if spec.secret_files and await self.inspect(spec.name) is not None:
            raise EngineError(f"creating container {spec.name}: a container of that name exists")
        files = spec.name if on_tmpfs else None  # whose tmpfs files a failure removes
        made = False  # whether a container of this call may exist (``run`` got past its name check)
        try:
            for secret, file in zip(secrets, stored, strict=True):
                await self._call("secret", "rm", secret)  # a leftover of a failed attempt
                store = ("secret", "create", *_label_args(labels), secret, "-")  # the value comes on stdin
                await self._check(f"storing secret file {file.path}", *store, stdin=file.value)
            if on_tmpfs:
                self._tmpfs.write(spec.name, spec.secret_files)
            made = True
            await self._run(spec, args, passed)
        except _NameTaken:
            # Refused before anything was made: the container of that name is not this call's.
            await asyncio.shield(self._remove(None, secrets, files))
            raise EngineError(f"creating container {spec.name}: a container of that name exists") from None
        except asyncio.CancelledError:
            # The caller is stopping (a controller on SIGTERM), which is no failure: a container
            # made stays, labelled, for the next pass to adopt (its start may well have gone
            # through) or replace. Secrets made for a container not made go.
            if not made:
                await asyncio.shield(self._remove(None, secrets, files))
            raise
        except BaseException:
            # Leave nothing half-made behind (``run`` may have created it and failed to start it).
            await asyncio.shield(self._remove(spec.name if made else None, secrets, files))
            raise

    async def _run(self, spec: ReplicaSpec, args: Sequence[str], env: Mapping[str, str]) -> None:
        """``run --detach`` (create and start in one command), raising :class:`_NameTaken` for a
        name in use. A failure after the create (the start's) leaves the container made, for
        the caller to remove. An image the driver knew present but that is gone (removed behind
        its back) is pulled, and ``run`` tried once more (nothing was created then)."""
        for attempt in (1, 2):
            code, _, err = await self._call(*args, env=env)
            if code == 0:
                return
            message = err.decode(errors="replace").strip() or f"exit code {code}"
            if _TAKEN in message.lower() and "name" in message.lower():
                raise _NameTaken(message)
            self._networks.discard(spec.network or "")  # the next ensure_network looks again
            if attempt == 1 and spec.image in self._images:
                self._images.discard(spec.image)
                if not await self.image_present(spec.image):
                    await self.pull(spec.image)
                    continue
            raise EngineError(f"running container {spec.name}: {message}")

    async def list(self, labels: Mapping[str, str] | None = None) -> list[ContainerInfo]:
        # One ``ps`` gives all a list needs (``listing``'s docstring says what is less exact).
        args = ["ps", "--all", "--no-trunc", "--format", "json" if self.name == "podman" else "{{json .}}"]
        for key, value in {MANAGED: "true", **(labels or {})}.items():
            args += ["--filter", f"label={key}={value}"]
        infos = parse_ps(await self._check("listing containers", *args), self.name)
        if self.name != "podman" and self._tmpfs.sweep_due():  # podman keeps none there
            await self._sweep_secret_files()
        return [info for info in infos if info.labels.get(MANAGED) == "true"]

    async def _sweep_secret_files(self) -> None:
        """Remove the tmpfs secret files of containers that are gone (removed behind the
        driver's back, by hand or by another tool): every managed container counts, whatever
        the scope of this driver's lists."""
        code, out, _ = await self._call("ps", "--all", "--format", "{{.Names}}", "--filter", f"label={MANAGED}=true")
        if code == 0:
            self._tmpfs.sweep(set(out.decode(errors="replace").split()))

    def events(self, labels: Mapping[str, str] | None = None) -> AsyncIterator[ContainerEvent]:
        loop = asyncio.get_running_loop()
        hub = self._hubs.get(loop)
        if hub is None:
            hub = self._hubs[loop] = EventHub(self.binary, self.name)
        return hub.subscribe(labels)

    async def inspect(self, name: str) -> ContainerInfo | None:
        code, out, err = await self._call("container", "inspect", name)
        if code != 0:
            if _gone(err.decode(errors="replace")):
                return None
            raise EngineError(f"inspecting container {name}: {err.decode(errors='replace').strip()}")
        docs = json.loads(out)
        return parse_inspect(docs[0]) if docs else None

    async def stop(self, name: str, timeout_s: float = 10) -> None:
        seconds = str(max(0, math.ceil(timeout_s)))
        code, _, err = await self._call("stop", "--time", seconds, name, timeout_s=timeout_s + CALL_TIMEOUT_S)
        if code != 0 and not _gone(err.decode(errors="replace")):
            raise EngineError(f"stopping container {name}: {err.decode(errors='replace').strip()}")

    async def remove(self, name: str) -> None:
        # Kills a running container at once (docker's ``rm --force`` always does): a graceful
        # end is ``stop``'s job, called first by whoever wants one.
        info = await self.inspect(name)
        secrets = [s for s in (info.labels.get(SECRETS, "") if info else "").split(",") if s]
        await self._remove(name, secrets, name if self.name != "podman" else None)

    async def _remove(self, name: str | None, secrets: Sequence[str], files: str | None = None) -> None:
        """Remove the container ``name``, then its engine ``secrets`` and the tmpfs secret
        files of the container ``files`` names (each when given)."""
        if name is not None:
            code, _, err = await self._call("rm", "--force", *RM_AT_ONCE[self.name], name)
            if code != 0 and not _gone(err.decode(errors="replace")):
                raise EngineError(f"removing container {name}: {err.decode(errors='replace').strip()}")
        if files is not None:
            self._tmpfs.remove(files)
        for secret in secrets:
            code, _, err = await self._call("secret", "rm", secret)
            if code != 0 and not _gone(err.decode(errors="replace")):
                raise EngineError(f"removing secret {secret}: {err.decode(errors='replace').strip()}")

    async def exec(self, name: str, argv: Sequence[str], timeout_s: float = 30) -> ExecResult:
        code, out, err = await self._call("exec", name, *argv, timeout_s=timeout_s)
        if code == 125 and self.name == "podman":  # podman's own failure, not the command's
            raise EngineError(f"exec in container {name}: {err.decode(errors='replace').strip()}")
        # docker exits 1 for its own failures, as a command may: told apart by asking.
        gone = code == 1 and self.name == "docker" and _gone(err.decode(errors="replace"))
        if gone and await self.inspect(name) is None:
            raise EngineError(f"exec in container {name}: {err.decode(errors='replace').strip()}")
        return ExecResult(code, out, err)

    async def exec_stream(self, name: str, request: ExecRequest) -> ExecStream:
        return await start_exec(self.binary, name, request)

    async def logs(self, name: str, since: datetime | None = None, follow: bool = False) -> AsyncIterator[bytes]:
        if await self.inspect(name) is None:
            raise EngineError(f"logs of container {name}: no such container")
        args = ["logs"]
        if since is not None:
            args += ["--since", since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")]
        if follow:
            args.append("--follow")
        proc = await process.start(
            self.binary,
            *args,
            name,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,  # the container's stderr comes out as the CLI's
        )
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                yield line
        finally:
            if proc.returncode is None:
                proc.kill()
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()

    # Networks and volumes

    async def ensure_network(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        if name in self._networks:
            return
        # ``create`` alone: one that exists is refused with "exists", which is as good (one
        # command, not an ``inspect`` before it).
        label_args = _label_args({**(labels or {}), MANAGED: "true"})
        code, _, err = await self._call("network", "create", *label_args, name)
        if code != 0 and "exists" not in err.decode(errors="replace"):  # another caller won the race
            raise EngineError(f"creating network {name}: {err.decode(errors='replace').strip()}")
        self._networks.add(name)

    async def remove_network(self, name: str) -> None:
        self._networks.discard(name)
        code, _, err = await self._call("network", "rm", name)
        if code != 0 and not _gone(err.decode(errors="replace")):
            raise EngineError(f"removing network {name}: {err.decode(errors='replace').strip()}")

    async def ensure_volume(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        code, _, _ = await self._call("volume", "inspect", name)
        if code == 0:
            return
        label_args = _label_args({**(labels or {}), MANAGED: "true"})
        code, _, err = await self._call("volume", "create", *label_args, name)
        if code != 0 and "exists" not in err.decode(errors="replace"):
            raise EngineError(f"creating volume {name}: {err.decode(errors='replace').strip()}")

    async def list_volumes(self, labels: Mapping[str, str]) -> Sequence[str]:
        filters = [arg for k, v in {**labels, MANAGED: "true"}.items() for arg in ("--filter", f"label={k}={v}")]
        code, out, err = await self._call("volume", "ls", "--quiet", *filters)
        if code != 0:
            raise EngineError(f"listing volumes: {err.decode(errors='replace').strip()}")
        return tuple(sorted(line for line in out.decode().split() if line))

    async def remove_volume(self, name: str) -> None:
        code, _, err = await self._call("volume", "rm", name)
        if code != 0 and not _gone(err.decode(errors="replace")):
            raise EngineError(f"removing volume {name}: {err.decode(errors='replace').strip()}")
