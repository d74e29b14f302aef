"""What a runtime controller reports of the workloads it runs: the wire form of
``POST /org/{org}/-runtime/observations`` (Plinth's own extension, docs/api.md).

The controller posts a batch, ``{"workloads": [Observation, ...]}``; the server stores each
:class:`Observation` as it came (one record per workload, removed with it) and the
``containers`` runtime (``runtime/observed.py``) answers the workload's status and deployments
from it. Everything here is plain data: the model is shared by the server, which validates
what it stores, and the controller, which builds what it posts.

- ``replicas``, per location: what runs now, each replica with the ``template`` it runs (an
  opaque name of the replica's container specs: the controller's spec digests), ``ready``
  (its readiness probes pass), ``restarts`` and a ``message`` when not ready;
- ``versions``: the workload version each template serves (``{template: version}``), so the
  server can tell which replicas run the workload's current version;
- ``planned``: the workload version the controller last planned from (0: none yet);
- ``message``: why the workload as a whole does not run as asked (``image missing: ...``,
  ``crash loop: exit code 3``, ``secret missing: NAME``, ``no location``), or empty.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Workloads (or commands) one post carries: the server's bound on every array (docs/api.md,
#: Limits), which answers 400 above it. Not declared as ``maxItems`` too: a body that long can
#: pass the 1 MiB body bound and be refused with 413 first, which a schema cannot promise.
MAX_WORKLOADS = 1000
#: Bound on names, templates and messages (a message is cut by the controller, not refused).
MAX_NAME = 64
MAX_TEXT = 2000


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ContainerObservation(_Closed):
    """One container of a replica."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    image: str = Field(default="", max_length=MAX_TEXT)
    ready: bool = False
    restarts: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=MAX_TEXT)


class ReplicaObservation(_Closed):
    """One replica in one location."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    template: str = Field(min_length=1, max_length=MAX_TEXT)
    ready: bool = False
    restarts: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=MAX_TEXT)
    containers: list[ContainerObservation] = Field(default_factory=list, max_length=64)


class LocationObservation(_Closed):
    name: str = Field(min_length=1, max_length=MAX_NAME)
    replicas: list[ReplicaObservation] = Field(default_factory=list)  # bounded as every array
    #: Cron runs in this location (types-ts cronjob.ts job executions), newest first.
    jobExecutions: list[dict[str, Any]] = Field(default_factory=list, max_length=100)


class Observation(_Closed):
    """One workload as the controller last observed it."""

    gvc: str = Field(min_length=1, max_length=MAX_NAME)
    name: str = Field(min_length=1, max_length=MAX_NAME)
    planned: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=MAX_TEXT)
    versions: dict[str, int] = Field(default_factory=dict, max_length=100)  # templates still running
    locations: list[LocationObservation] = Field(default_factory=list, max_length=100)


class ObservationBatch(_Closed):
    workloads: list[Observation]  # at most MAX_WORKLOADS, as every array


def replica_version(observed: dict[str, Any], replica: dict[str, Any]) -> int:
    """The workload version ``replica`` runs (0 when its template is not known)."""
    return int((observed.get("versions") or {}).get(replica.get("template", ""), 0))


def observed_location(observed: dict[str, Any] | None, location: str) -> dict[str, Any]:
    """The observation of one location (empty when nothing was reported there)."""
    for entry in (observed or {}).get("locations") or []:
        if entry.get("name") == location:
            return dict(entry)
    return {"name": location, "replicas": []}


#: A command's lifecycle (types-go pkg/command): where each stage may go next.
COMMAND_NEXT: dict[str, frozenset[str]] = {
    "pending": frozenset({"running", "completed", "failed", "cancelled"}),
    "running": frozenset({"completed", "failed", "cancelled"}),
}


class CommandUpdate(_Closed):
    """A command's new lifecycle stage, as the controller reports it (``-runtime/commands``)."""

    gvc: str = Field(min_length=1, max_length=MAX_NAME)
    workload: str = Field(min_length=1, max_length=MAX_NAME)
    id: str = Field(min_length=1, max_length=MAX_NAME)
    lifecycleStage: Literal["running", "completed", "failed", "cancelled"]
    #: Merged into the command's ``status`` (a run's replica name, an error message).
    status: dict[str, Any] = Field(default_factory=dict, max_length=20)


class CommandBatch(_Closed):
    commands: list[CommandUpdate]  # at most MAX_WORKLOADS, as every array
