"""What should run: a pure function from a workload's documents to the replicas it wants.

:func:`plan_workload` takes a workload as the API serves it, its GVC and the GVC's locations
(names, in placement order) and answers one :class:`~plinth.runtime.containers.ReplicaSpec`
per replica and container, per location. It reads nothing else: secret references in env
values (``cpln://secret/NAME[.KEY]``) are resolved by the caller's ``resolve`` function, so
the plan stays pure and testable without a store or an engine.

The semantics (docs/runtime.md, "The plan"):

- **Replicas per location**: ``minScale`` after that location's ``localOptions``; none when
  suspended, with ``maxScale: 0``, or for ``cron`` (its jobs are not long-running replicas and
  are run by ``jobs.CronRunner``). Shared with the simulated runtime (``runtime/deployments.py``).
- **Names**: replica ``i`` of workload ``w`` is ``w-i`` (label :data:`REPLICA`, and the
  container's hostname) for every type; the engine container of one container of that
  replica is ``plinth_{org}_{gvc}_{location}_{w-i}_{container}`` (:func:`slot_name`). Names of
  the platform never hold ``_``, so the parts cannot run into each other. For ``stateful``
  this is the container's name for good; ``standard`` and ``serverless`` containers get a
  digest suffix from the reconciler, so a new replica can start beside the old one.
- **Labels**: the driver's identity labels plus :data:`REPLICA` and :data:`CONTAINER` (the
  replica's slot) and the caller's ``labels`` (e.g. a scope); the spec digest label
  (``plinth.spec-hash``) is stamped by the driver from the whole spec when it runs it.
- **Container**: image, ``command`` (the entrypoint), ``args``, env (GVC ``env`` first when
  ``inheritEnv``, the container's own winning; then the platform's ``CPLN_*`` names), ``cpu``
  and ``memory`` limits (the platform's defaults ``50m`` and ``128Mi`` when unset), and every
  port (``ports[].number`` and the deprecated ``port``) published on 127.0.0.1.
- **Force redeployment**: the ``cpln/deployTimestamp`` tag becomes the label
  :data:`DEPLOY_TIMESTAMP`, so a new value changes the spec, hence its digest, hence a rollout.
- **Volume sets**: a ``cpln://volumeset/NAME`` volume is an engine volume
  (:func:`volume_name`): a stateful replica's own (``..._vs_NAME_{index}``, kept across its
  restarts and updates), else one per location shared by the replicas. It is labelled
  :data:`VOLUME_SET`, so the volume set's removal hook finds it.
- **Secrets**: ``cpln://secret/NAME[.KEY]`` env values through ``resolve``, and
  ``cpln://secret/`` volumes as engine secret files through ``files``. A workload whose
  ``status.warning`` says a reference does not hold (the server's own judgement of existence,
  keys and the identity's ``reveal``) is refused with :class:`Blocked`, naming it.
- **The GVC's network**: every container joins :func:`network_name` with the DNS alias of the
  workload's ``status.internalName`` (``{workload}.{gvc}.cpln.local``) and the replica's
  ``replica-{i}.{workload}.{location}.{gvc}.cpln.local``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plinth.runtime.containers.protocol import (
    GVC,
    LOCATION,
    MANAGED,
    ORG,
    ReplicaSpec,
    SecretFile,
    VolumeMount,
    identity_labels,
)

# Re-exported: they were defined here before.
from plinth.runtime.controller.quantities import memory_bytes as memory_bytes
from plinth.runtime.controller.quantities import millicores as millicores
from plinth.runtime.controller.quantities import quantity as quantity
from plinth.runtime.deployments import replicas_at

#: The replica a container belongs to (``web-0``) and which of its containers it runs.
REPLICA = "plinth.replica"
CONTAINER = "plinth.container"
#: The workload's type: the reconciler replaces a ``stateful`` replica in place (stable name).
TYPE = "plinth.workload-type"
#: The workload's ``cpln/deployTimestamp`` tag (force redeployment), carried into the spec.
DEPLOY_TIMESTAMP = "plinth.deploy-timestamp"
#: The volume set an engine volume belongs to (its removal hook finds volumes by it).
VOLUME_SET = "plinth.volume-set"
VOLUME_SET_PREFIX = "cpln://volumeset/"
#: The platform's defaults for a container's resources.
DEFAULT_CPU, DEFAULT_MEMORY = "50m", "128Mi"
SECRET_PREFIX = "cpln://secret/"

#: Resolves a ``cpln://secret/NAME[.KEY]`` env value to the secret's value; whatever it raises
#: (a secret missing, not revealable) propagates out of :func:`plan_workload`.
Resolver = Callable[[str], str]
#: The files a ``cpln://secret/NAME[.KEY]`` volume mounted at a path holds (``SecretFile``s).
FileResolver = Callable[[str, str], Sequence[SecretFile]]
#: The platform's internal DNS domain (a workload's ``status.internalName``).
INTERNAL_DOMAIN = "cpln.local"


class Blocked(ValueError):
    """The server says a secret reference of the workload does not hold (``status.warning``)."""


def network_name(org: str, gvc: str) -> str:
    """The engine network of a GVC: its workloads reach each other there by internal name."""
    return f"plinth_{org}_{gvc}"


def internal_name(workload: str, gvc: str) -> str:
    """``{workload}.{gvc}.cpln.local``, what the server reports as ``status.internalName``."""
    return f"{workload}.{gvc}.{INTERNAL_DOMAIN}"


def secret_references(workload: Mapping[str, Any]) -> list[str]:
    """Every ``cpln://secret/`` reference of the workload's containers (env values, volumes)."""
    found: list[str] = []
    for container in (workload.get("spec") or {}).get("containers") or ():
        for entry in container.get("env") or ():
            if str(entry.get("value") or "").startswith(SECRET_PREFIX):
                found.append(str(entry["value"]))
        for volume in container.get("volumes") or ():
            if str(volume.get("uri") or "").startswith(SECRET_PREFIX):
                found.append(str(volume["uri"]))
    return list(dict.fromkeys(found))


def self_parts(doc: Mapping[str, Any]) -> list[str]:
    """The path segments of a document's ``self`` link (``['org', 'o1', 'gvc', 'main', ...]``)."""
    for link in doc.get("links") or ():
        if link.get("rel") == "self":
            return str(link.get("href", "")).strip("/").split("/")
    raise ValueError(f"{doc.get('kind', 'document')} {doc.get('name')!r} has no self link")


def slot_name(org: str, gvc: str, location: str, replica: str, container: str) -> str:
    """The engine name of one container of one replica (see the module's docstring)."""
    return f"plinth_{org}_{gvc}_{location}_{replica}_{container}"


def container_ports(container: Mapping[str, Any]) -> list[int]:
    """A container's port numbers: ``ports[].number``, then the deprecated ``port``."""
    numbers = [int(p["number"]) for p in container.get("ports") or () if p.get("number") is not None]
    if container.get("port") is not None and int(container["port"]) not in numbers:
        numbers.append(int(container["port"]))
    return numbers


def _env(
    container: Mapping[str, Any],
    gvc: Mapping[str, Any],
    injected: Mapping[str, str],
    resolve: Resolver,
) -> dict[str, str]:
    """The container's environment: inherited GVC env, its own (winning), secrets resolved;
    then the platform's injected names, which a workload cannot set (``CPLN_`` is reserved)."""
    entries: list[Mapping[str, Any]] = []
    if container.get("inheritEnv"):
        entries += list((gvc.get("spec") or {}).get("env") or ())
    entries += list(container.get("env") or ())
    env: dict[str, str] = {}
    for entry in entries:
        value = str(entry.get("value") or "")
        env[str(entry["name"])] = resolve(value) if value.startswith(SECRET_PREFIX) else value
    env.update(injected)
    return env


def volume_name(org: str, gvc: str, location: str, volume_set: str, index: int | None) -> str:
    """The engine volume of a volume set at a location: one per replica index for a stateful
    workload (``index``), one shared by every replica otherwise (``None``)."""
    base = f"plinth_{org}_{gvc}_{location}_vs_{volume_set}"
    return base if index is None else f"{base}_{index}"


def _volumes(
    container: Mapping[str, Any], where: tuple[str, str, str], index: int | None, labels: Mapping[str, str]
) -> tuple[VolumeMount, ...]:
    """The container's ``cpln://volumeset/`` volumes as engine volumes (others are not planned)."""
    org, gvc, location = where
    mounts = []
    for volume in container.get("volumes") or ():
        uri = str(volume.get("uri", ""))
        if uri.startswith(VOLUME_SET_PREFIX):
            volume_set = uri[len(VOLUME_SET_PREFIX) :].split("/")[0]
            own = {**labels, MANAGED: "true", ORG: org, GVC: gvc, LOCATION: location, VOLUME_SET: volume_set}
            name = volume_name(org, gvc, location, volume_set, index)
            mounts.append(VolumeMount(name, str(volume["path"]), labels=tuple(sorted(own.items()))))
    return tuple(mounts)


def plan_workload(
    workload: Mapping[str, Any],
    gvc: Mapping[str, Any],
    locations: Sequence[str],
    *,
    resolve: Resolver,
    labels: Mapping[str, str] | None = None,
    files: FileResolver | None = None,
) -> list[ReplicaSpec]:
    """The replicas ``workload`` wants on each of ``locations`` (module docstring), ordered by
    location, then replica index, then container (the order a stateful workload starts in).
    ``files`` gives a secret volume's files; without it secret volumes are not planned."""
    name = str(workload["name"])
    warning = (workload.get("status") or {}).get("warning")
    if warning and secret_references(workload):
        raise Blocked(str(warning))
    stateful = (workload.get("spec") or {}).get("type") == "stateful"
    planned: list[ReplicaSpec] = []
    for location in locations:
        for index in range(replicas_at(dict(workload), location)):
            volume_index = index if stateful else None
            planned += replica_specs(
                workload, gvc, location, f"{name}-{index}", volume_index, resolve, labels, files=files, mesh=True
            )
    return planned


def replica_specs(
    workload: Mapping[str, Any],
    gvc: Mapping[str, Any],
    location: str,
    replica: str,
    volume_index: int | None,
    resolve: Resolver,
    labels: Mapping[str, str] | None = None,
    *,
    files: FileResolver | None = None,
    mesh: bool = False,
) -> list[ReplicaSpec]:
    """One spec per container of the replica named ``replica`` (a job run's name for cron).
    With ``mesh`` it joins the GVC's network under its internal names (long-running replicas;
    the cron runner does not make networks, so its jobs stay on the engine's default one)."""
    parts = self_parts(workload)
    org, gvc_name, name = parts[1], parts[3], str(workload["name"])
    spec = workload.get("spec") or {}
    workload_type = str(spec.get("type") or "standard")
    extra = dict(labels or {})
    stamp = (workload.get("tags") or {}).get("cpln/deployTimestamp")
    if stamp is not None:
        extra[DEPLOY_TIMESTAMP] = str(stamp)
    planned: list[ReplicaSpec] = []
    aliases = (
        internal_name(name, gvc_name),
        f"replica-{replica.rsplit('-', 1)[-1]}.{name}.{location}.{gvc_name}.{INTERNAL_DOMAIN}",
    )
    for container in spec.get("containers") or ():
        ports = container_ports(container)
        secret_files: list[SecretFile] = []
        for volume in container.get("volumes") or ():
            uri = str(volume.get("uri") or "")
            if files is not None and uri.startswith(SECRET_PREFIX):
                secret_files += files(uri, str(volume["path"]))
        injected = {
            "CPLN_ORG": org,
            "CPLN_GVC": gvc_name,
            "CPLN_GVC_ALIAS": str(gvc.get("alias") or ""),
            "CPLN_LOCATION": location,
            "CPLN_WORKLOAD": name,
            "CPLN_NAME": replica,
        }
        env = _env(container, gvc, injected, resolve)
        if workload_type in ("standard", "serverless") and ports and "PORT" not in env:
            env["PORT"] = str(ports[0])  # the platform sets it when the workload did not
        planned.append(
            ReplicaSpec(
                name=slot_name(org, gvc_name, location, replica, str(container["name"])),
                image=str(container["image"]),
                labels={
                    **extra,
                    **identity_labels(org, gvc_name, name, location),
                    REPLICA: replica,
                    CONTAINER: str(container["name"]),
                    TYPE: workload_type,
                },
                command=container.get("command"),
                args=tuple(str(arg) for arg in container.get("args") or ()),
                env=env,
                cpu_millicores=millicores(str(container.get("cpu") or DEFAULT_CPU)),
                memory_bytes=memory_bytes(str(container.get("memory") or DEFAULT_MEMORY)),
                ports=tuple(ports),
                volumes=_volumes(container, (org, gvc_name, location), volume_index, dict(labels or {})),
                hostname=replica,
                network=network_name(org, gvc_name) if mesh else None,
                aliases=aliases if mesh else (),
                secret_files=tuple(secret_files),
            )
        )
    return planned
