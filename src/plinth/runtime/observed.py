"""``--runtime containers``: a workload's status and deployments are what a runtime controller
last observed and reported (``runtime/observations.py``), stored by the server and handed in
``Placement.observed``.

Per location the GVC is placed in, with ``wanted`` the replicas the spec asks there (the
autoscaling lower bound after ``localOptions``; none when suspended, for cron or with
``maxScale: 0``) and ``current`` the workload's version:

- a replica runs the version its template serves (``versions``); a location has *processed*
  the current version when the controller planned it and at least ``wanted`` replicas run it
  (``lastProcessedVersion``); until then it shows the highest version that many replicas run;
- it is *ready* when it processed the current version and ``wanted`` of those replicas pass
  their readiness probes;
- ``versions[]`` has one entry per version its replicas run, newest first, so a rollout shows
  old and new side by side, and always one for the current version;
- the workload is ready when every location is (and it is placed somewhere, and nothing
  blocks it); ``currentReplicaCount`` counts the replicas observed; the message says why not:
  the runtime's blockers, the controller's own message, else the first replica's reason.

Before any report: not ready anywhere, ``waiting for the runtime controller``. Commands stay
``pending`` until the controller takes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plinth.runtime.base import CommandOutcome, Doc, Placement, WorkloadSummary
from plinth.runtime.deployments import deployment_doc, replicas_at
from plinth.runtime.observations import observed_location, replica_version

WAITING = "waiting for the runtime controller"


class ContainersRuntime:
    """Answers from what the runtime controller observed. ``dataplane_url`` is the base URL of
    the controller's data plane (``--dataplane-listen``): each deployment's ``status.remote``
    is ``{dataplane_url}/location/{location}``, where the official CLI lists replicas and
    opens exec sessions (docs/runtime.md, "The data plane"); ``None`` leaves it out."""

    name = "containers"
    observes = True

    def __init__(self, dataplane_url: str | None = None) -> None:
        self.dataplane_url = dataplane_url.rstrip("/") if dataplane_url else None

    def summary(self, placement: Placement) -> WorkloadSummary:
        observed = placement.observed
        if observed is None:
            return WorkloadSummary(ready=False, replicas=0, message=blocked_or(placement, WAITING))
        views = [_LocationView(placement, location) for location in placement.locations]
        replicas = sum(len(view.replicas) for view in views)
        ready = bool(views) and all(view.ready for view in views) and not placement.blocked
        if ready:
            return WorkloadSummary(ready=True, replicas=replicas)
        reason = str(observed.get("message") or "") or next((v.message for v in views if v.message), "")
        if not views:
            reason = reason or "no location: the GVC is placed nowhere"
        return WorkloadSummary(ready=False, replicas=replicas, message=blocked_or(placement, reason))

    async def deployments(self, placement: Placement, commands: Sequence[Doc]) -> list[Doc]:
        out: list[Doc] = []
        for location in placement.locations:
            view = _LocationView(placement, location)
            ready = view.ready and not placement.blocked
            message = "" if ready else blocked_or(placement, view.message or WAITING)
            doc = deployment_doc(
                placement,
                location,
                ready=ready,
                message=message,
                processed=view.processed,
                versions=view.versions(),
                executions=list(view.entry.get("jobExecutions") or []),
            )
            doc["status"]["deploying"] = view.processed < view.current
            if self.dataplane_url:
                # Per location: replica names (web-0) repeat across locations, and an exec's
                # first frame names only the GVC and the replica.
                doc["status"]["remote"] = f"{self.dataplane_url}/location/{location}"
            out.append(doc)
        return out

    async def submit(self, placement: Placement, command: Doc) -> CommandOutcome:
        return CommandOutcome("pending", {})


def blocked_or(placement: Placement, message: str) -> str:
    return "; ".join(placement.blocked) if placement.blocked else message


class _LocationView:
    """One location's observation read against the workload's current version."""

    def __init__(self, placement: Placement, location: str) -> None:
        self.placement = placement
        self.observed: Doc = placement.observed or {}
        self.entry = observed_location(placement.observed, location)
        self.replicas: list[Doc] = list(self.entry.get("replicas") or [])
        # A write's candidate has no version yet: it is a version no controller has planned.
        version = placement.workload.get("version")
        self.current = int(version) if version is not None else int(self.observed.get("planned", 0)) + 1
        self.wanted = replicas_at(placement.workload, location)
        self.by_version: dict[int, list[Doc]] = {}
        for replica in self.replicas:
            self.by_version.setdefault(replica_version(self.observed, replica), []).append(replica)
        planned = int(self.observed.get("planned", 0)) >= self.current
        running = len(self.by_version.get(self.current, []))
        if planned and running >= self.wanted:
            self.processed = self.current
        else:
            full = [v for v, rs in self.by_version.items() if v and len(rs) >= self.wanted and v < self.current]
            self.processed = max(full, default=0)
        ready_now = sum(1 for r in self.by_version.get(self.current, []) if r.get("ready"))
        self.ready = bool(self.observed) and self.processed == self.current and ready_now >= self.wanted

    @property
    def message(self) -> str:
        if self.ready:
            return ""
        if self.observed.get("message"):
            return str(self.observed["message"])
        for replica in self.replicas:
            if not replica.get("ready") and replica.get("message"):
                return str(replica["message"])
        if not self.observed:
            return WAITING
        ready = sum(1 for r in self.by_version.get(self.current, []) if r.get("ready"))
        return f"{ready} of {self.wanted} replicas ready at version {self.current}"

    def versions(self) -> list[Doc]:
        numbers = sorted({*self.by_version, self.current} - {0}, reverse=True)
        return [self._version(v, self.by_version.get(v, [])) for v in numbers]

    def _version(self, version: int, replicas: list[Doc]) -> Doc:
        ready = bool(replicas) and all(r.get("ready") for r in replicas)
        if version == self.current:
            ready = self.ready
        message = next((str(r.get("message")) for r in replicas if not r.get("ready") and r.get("message")), "")
        return {
            "name": str(version),
            "created": self.placement.workload.get("lastModified"),
            "workload": version,
            "gvc": self.placement.gvc.get("version", 1),
            "containers": _containers(self.placement, replicas),
            "ready": ready,
            "message": "" if ready else message,
        }


def _containers(placement: Placement, replicas: list[Doc]) -> dict[str, Doc]:
    """ContainerStatus by container name (types-ts containerstatus.ts), summed over ``replicas``."""
    spec = {str(c.get("name", "")): c for c in (placement.workload.get("spec") or {}).get("containers") or []}
    out: dict[str, Doc] = {}
    for replica in replicas:
        for container in replica.get("containers") or []:
            name = str(container.get("name", ""))
            declared: dict[str, Any] = spec.get(name, {})
            entry = out.setdefault(
                name,
                {
                    "name": name,
                    "image": container.get("image") or declared.get("image", ""),
                    "ready": True,
                    "resources": {
                        "replicas": 0,
                        "replicasReady": 0,
                        "cpu": declared.get("cpu", ""),
                        "memory": declared.get("memory", ""),
                    },
                    "message": "",
                    "restarts": {"count": 0},
                },
            )
            ready = bool(container.get("ready"))
            entry["ready"] = entry["ready"] and ready
            entry["resources"]["replicas"] += 1
            entry["resources"]["replicasReady"] += int(ready)
            entry["restarts"]["count"] += int(container.get("restarts", 0))
            if not ready and not entry["message"]:
                entry["message"] = str(container.get("message", ""))
    return out
