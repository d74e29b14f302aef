"""The runtime protocol: what the engine asks of whatever runs workloads.

Everything is plain JSON-shaped data (the API's own documents), so a runtime needs nothing
of the engine, the kinds or the store:

- a workload item as the API serves it (``spec``, ``version``, ``lastModified``, links);
- its GVC item (``spec.staticPlacement.locationLinks`` says where it runs, ``alias`` names
  its endpoints);
- its commands (``runCronWorkload``, ``stopReplica``) as stored, oldest first.

A runtime answers with the deployment documents of types-ts deployment.ts (one per location), a
summary for the workload's ``status``, and the lifecycle a new command enters. The engine
stores what it must keep (commands); a runtime may keep its own state elsewhere (a cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Doc = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one workload runs and under which names, decided by the engine from its GVC."""

    workload: Doc
    gvc: Doc
    #: The workload's API link, ``/org/{org}/gvc/{gvc}/workload/{name}``.
    href: str
    #: The GVC's location names, in placement order, each once.
    locations: tuple[str, ...]
    #: The public base domain of generated host names (``--base-domain``).
    base_domain: str
    #: Why the workload cannot start now, one sentence each (a secret it references does not
    #: exist, or its identity may not reveal it): a runtime reports it not ready, with these as
    #: its message, until the engine places it with none.
    blocked: tuple[str, ...] = ()
    #: What the runtime controller last reported of the workload (the stored observation,
    #: ``runtime/observations.py``), for a runtime whose ``observes`` is true; ``None`` before
    #: any report, and always for the others (the engine does not read it for them).
    observed: Doc | None = None


@dataclass(frozen=True, slots=True)
class WorkloadSummary:
    """What a workload's ``status`` shows of its runtime: ready everywhere it should run, and
    how many replicas run across its locations."""

    ready: bool
    replicas: int
    message: str = ""


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """A command's ``lifecycleStage`` right after it was accepted, and its ``status``."""

    lifecycle_stage: str
    status: Doc


class Runtime(Protocol):
    """Runs workloads, or says what running them looks like. Implementations must be safe to
    call from every worker process; answers are computed for each call."""

    name: str
    #: Whether answers come from what a controller reported (``POST /org/{org}/-runtime/
    #: observations``): the engine then reads the stored observation into ``Placement.observed``.
    observes: bool

    def summary(self, placement: Placement) -> WorkloadSummary:
        """The workload's runtime state for its ``status`` (called on every write)."""
        ...

    async def deployments(self, placement: Placement, commands: Sequence[Doc]) -> list[Doc]:
        """One deployment document per location of the placement, in its order."""
        ...

    async def submit(self, placement: Placement, command: Doc) -> CommandOutcome:
        """Carry out a command the engine has validated; it is stored with this outcome."""
        ...
