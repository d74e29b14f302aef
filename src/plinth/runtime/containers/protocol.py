"""What a runtime controller needs from a container engine: the driver contract.

A controller (the reconciler that compares what should run with what runs) talks to an engine
only through :class:`ContainerEngine`; ``cli.CliEngine`` implements it for podman and docker,
and a Kubernetes driver would be one more implementation. Everything crossing the seam is
plain data defined here, so the controller knows no engine's vocabulary.

The contract, for every implementation:

- **Ownership by label.** Every container, network, volume and secret the driver makes carries
  ``plinth.managed=true`` (:data:`MANAGED`) plus the labels the caller asks for; ``list`` only
  ever returns containers carrying :data:`MANAGED`, so a controller can never touch what it
  does not manage.
- **Idempotent teardown.** ``stop`` and ``remove`` of a container that is already gone (or
  stopped) succeed: a level-triggered controller may repeat them freely.
- **Errors are surfaced, never swallowed.** A failing engine call raises :class:`EngineError`
  (``ImagePullError`` for a pull) carrying the engine's own message; a missing image is not an
  error of ``image_present`` (it answers ``False``).
- **Adoption.** ``run`` labels each container with :data:`SPEC_HASH`, a keyed digest of the
  replica spec (:func:`spec_digest`); a controller that finds a running container whose label
  equals the digest of the spec it wants adopts it instead of replacing it. The digest is keyed
  (HMAC) because the spec holds secret values: an unkeyed hash of a short secret could be
  guessed from the label.
- **Secrets stay out of argv and files Plinth keeps.** Environment values reach the engine
  through its process environment (``--env NAME``), never its command line, except for the
  few names the engine's CLI itself reads (:data:`ENGINE_ENV_NAMES`), which must be passed as
  ``NAME=VALUE``; secret files go through the engine's own secret store.
- **Loopback only.** Container ports are published on ``127.0.0.1`` with an engine-chosen host
  port, reported by ``list``/``inspect`` in :attr:`ContainerInfo.ports`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

#: The label every object the driver makes carries; ``list`` filters on it.
MANAGED = "plinth.managed"
#: Identity labels of a replica, set by :func:`identity_labels`.
ORG, GVC, WORKLOAD, LOCATION = "plinth.org", "plinth.gvc", "plinth.workload", "plinth.location"
#: The keyed digest of the replica spec a container was made from (adoption).
SPEC_HASH = "plinth.spec-hash"
#: The engine-side secrets made for a container, comma-separated, removed with it.
SECRETS = "plinth.secrets"

#: The log driver ``run`` gives each container, per engine (their own file formats: podman's
#: ``k8s-file`` writes CRI lines, docker's ``json-file`` JSON lines), and the size at which the
#: engine starts a new file (the log collector keeps up long before: docs/runtime.md, Logs).
LOG_DRIVERS = {"podman": "k8s-file", "docker": "json-file"}
LOG_FILE_MAX = "16mb"

#: Environment names the engine's CLI reads itself (or that name its configuration): a replica
#: env var of one of these names is passed on the command line, not through the environment.
ENGINE_ENV_NAMES = frozenset({"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "REGISTRY_AUTH_FILE"})
ENGINE_ENV_PREFIXES = ("CONTAINERS_", "CONTAINER_", "DOCKER_", "PODMAN_", "BUILDAH_", "STORAGE_", "XDG_")


def identity_labels(org: str, gvc: str, workload: str, location: str) -> dict[str, str]:
    """The labels naming whose replica a container is (all of them names, not links)."""
    return {MANAGED: "true", ORG: org, GVC: gvc, WORKLOAD: workload, LOCATION: location}


class EngineError(Exception):
    """An engine call failed; the message is the engine's own, with the operation named."""


class EngineUnavailable(EngineError):
    """No engine binary could be found or run."""


class ImagePullError(EngineError):
    """Pulling an image failed (no such image, registry unreachable, denied)."""


@dataclass(frozen=True, slots=True)
class VolumeMount:
    """A named engine volume mounted at ``path``. The reconcile pass creates it with ``labels``
    before the container runs (they are not part of the spec's digest)."""

    volume: str
    path: str
    read_only: bool = False
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SecretFile:
    """A file whose bytes are secret, delivered at ``path`` through the engine's secret store."""

    path: str
    value: bytes = field(repr=False)
    mode: int = 0o400


@dataclass(frozen=True, slots=True)
class ReplicaSpec:
    """One container to run: everything the engine must know, nothing about the API."""

    name: str
    image: str
    #: Identity labels (:func:`identity_labels`) and any others; :data:`MANAGED` is always added.
    labels: Mapping[str, str] = field(default_factory=dict)
    #: Replaces the image's entrypoint when set; ``args`` replace its command.
    command: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: Engine limits; ``None`` leaves the engine's default (no limit).
    cpu_millicores: int | None = None
    memory_bytes: int | None = None
    #: Container ports published on 127.0.0.1 with a host port the engine chooses.
    ports: Sequence[int] = ()
    #: The network to join (``None``: the engine's default) and the DNS names the container
    #: answers to inside it (``web.main.cpln.local``).
    network: str | None = None
    aliases: Sequence[str] = ()
    volumes: Sequence[VolumeMount] = ()
    secret_files: Sequence[SecretFile] = field(default=(), repr=False)
    hostname: str | None = None

    def canonical(self) -> bytes:
        """The spec as canonical JSON (secret values included): what :func:`spec_digest` hashes."""
        doc = {
            "name": self.name,
            "image": self.image,
            "labels": dict(sorted(self.labels.items())),
            "command": self.command,
            "args": list(self.args),
            "env": dict(sorted(self.env.items())),
            "cpu": self.cpu_millicores,
            "memory": self.memory_bytes,
            "ports": sorted(self.ports),
            "network": self.network,
            "aliases": sorted(self.aliases),
            "volumes": [[v.volume, v.path, v.read_only] for v in self.volumes],
            "secretFiles": [[s.path, s.value.hex(), s.mode] for s in self.secret_files],
            "hostname": self.hostname,
            # Containers run with the engine's file log driver (``LOG_DRIVERS``), which the log
            # collector reads: containers made before it was set are replaced once, not adopted.
            "logs": "file",
        }
        return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def spec_digest(spec: ReplicaSpec, key: bytes) -> str:
    """A keyed digest of ``spec`` (HMAC-SHA256, hex): equal specs give equal digests under one
    key, and the label reveals nothing about the secret values inside."""
    return hmac.new(key, spec.canonical(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """What the engine reports of one container."""

    id: str
    name: str
    image: str
    #: The engine's state word, in docker's vocabulary: ``created``, ``running``, ``exited``,
    #: ``paused``, ... (podman's transient ``stopped`` is reported as ``exited``).
    state: str
    exit_code: int
    #: Restarts the engine itself made (a restart policy); a controller counts its own.
    restart_count: int
    #: Exact from ``inspect``; ``list`` may give them to the second, or not at all (docker).
    started_at: datetime | None
    finished_at: datetime | None
    #: Container port → host port on 127.0.0.1.
    ports: Mapping[int, int]
    labels: Mapping[str, str]
    #: The file the engine writes the container's output to (``inspect`` only; empty when
    #: ``list`` made this, or when the engine keeps no file): what the log collector reads.
    log_path: str = ""

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def spec_hash(self) -> str | None:
        return self.labels.get(SPEC_HASH)


@dataclass(frozen=True, slots=True)
class ContainerEvent:
    """Something the engine did to a managed container, as its event stream says it."""

    #: The engine's word: ``create``, ``start``, ``died`` (docker: ``die``), ``remove``, ...
    action: str
    name: str
    id: str
    #: The container's labels (docker adds a few attributes of its own, such as ``name``).
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of a command run inside a container."""

    exit_code: int
    stdout: bytes
    stderr: bytes


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """A command to run inside a running container, streamed (the data plane's exec).

    ``argv`` runs as given, with no shell. With ``stdin`` the process reads what
    :meth:`ExecStream.write` sends until :meth:`ExecStream.close_stdin`; without, its stdin is
    empty. With ``tty`` it runs on a terminal of ``width`` x ``height`` (then stdout and stderr
    are the terminal); without, stdout and stderr come as one stream of pieces, each piece
    from one of them (the data plane's clients read one stream)."""

    argv: Sequence[str]
    stdin: bool = False
    tty: bool = False
    width: int = 80
    height: int = 24


class ExecStream(Protocol):
    """A running streamed exec (:meth:`ContainerEngine.exec_stream`). The process has started
    when the stream is handed out; nothing waits for input."""

    async def read(self) -> bytes:
        """The next piece of output as it comes; ``b""`` once the output has ended."""
        ...

    async def write(self, data: bytes) -> None:
        """Send ``data`` to the process's stdin (or terminal), waiting while its pipe is full."""
        ...

    async def close_stdin(self) -> None:
        """End of input (for a terminal: nothing, the process ends by itself or is killed)."""
        ...

    def resize(self, width: int, height: int) -> None:
        """A new terminal size (a session without a terminal ignores it)."""
        ...

    async def wait(self) -> int:
        """The command's exit code, once it has ended."""
        ...

    async def kill(self) -> None:
        """End it now (the session ended first) and reap what was started; idempotent."""
        ...


class ContainerEngine(Protocol):
    """The operations a runtime controller needs from an engine (see the module's contract)."""

    name: str

    def digest(self, spec: ReplicaSpec) -> str:
        """The :data:`SPEC_HASH` label ``run(spec)`` gives its container (under this driver's
        key): a controller compares it with a container's label to adopt it."""
        ...

    async def image_present(self, image: str) -> bool:
        """Whether ``image`` is in the engine's local store (then it is never pulled again)."""
        ...

    async def pull(self, image: str) -> None:
        """Pull ``image``; :class:`ImagePullError` with the engine's message when it fails."""
        ...

    async def run(self, spec: ReplicaSpec) -> ContainerInfo:
        """Create and start a container from ``spec`` (its image must be present) and report it.
        An existing container of the same name is an error and is left alone; when creating or
        starting fails, what this call made is removed before the error is raised (a cancelled
        call leaves a container it made, for the caller's next pass to adopt or replace)."""
        ...

    async def start(self, spec: ReplicaSpec) -> None:
        """:meth:`run` without the report: the container is made and started (the same
        refusals and clean-up), and nothing more is asked of the engine (a caller that watches
        the engine anyway, as the controller does, learns the rest from its next list)."""
        ...

    async def list(self, labels: Mapping[str, str] | None = None) -> list[ContainerInfo]:
        """Every managed container (running or not) carrying all of ``labels``."""
        ...

    async def inspect(self, name: str) -> ContainerInfo | None:
        """The container called ``name`` or ``None`` when there is none."""
        ...

    async def stop(self, name: str, timeout_s: float = 10) -> None:
        """Stop it (SIGTERM, then SIGKILL after ``timeout_s``); a stopped or gone one is fine."""
        ...

    async def remove(self, name: str) -> None:
        """Remove it (killing it if it still runs: ``stop`` first for a graceful end) and the
        engine secrets made for it; gone is fine."""
        ...

    async def exec(self, name: str, argv: Sequence[str], timeout_s: float = 30) -> ExecResult:
        """Run ``argv`` inside the running container and report its exit code and output."""
        ...

    async def exec_stream(self, name: str, request: ExecRequest) -> ExecStream:
        """Start ``request.argv`` inside the running container ``name`` and hand over its
        streams at once (:class:`ExecStream`); :class:`EngineError` when it cannot start."""
        ...

    def logs(self, name: str, since: datetime | None = None, follow: bool = False) -> AsyncIterator[bytes]:
        """Its output lines (stdout and stderr, merged), from ``since``; with ``follow``, until
        it stops or the iteration is closed."""
        ...

    def events(self, labels: Mapping[str, str] | None = None) -> AsyncIterator[ContainerEvent]:
        """What happens to the managed containers carrying all of ``labels``, from about now
        until the iteration is closed. It ends (or raises :class:`EngineError`) when the
        engine's stream does; events from before it started reading are not replayed, so a
        caller that must miss nothing lists after subscribing, and again when it ends."""
        ...

    async def ensure_network(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        """Create the network ``name`` (with DNS among its containers) unless it exists."""
        ...

    async def remove_network(self, name: str) -> None:
        """Remove the network; a missing one is fine."""
        ...

    async def ensure_volume(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        """Create the named volume unless it exists."""
        ...

    async def list_volumes(self, labels: Mapping[str, str]) -> Sequence[str]:
        """The names of the managed volumes carrying all of ``labels``."""
        ...

    async def remove_volume(self, name: str) -> None:
        """Remove the named volume (its data goes with it); a missing one is fine."""
        ...
