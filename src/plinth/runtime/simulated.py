"""The default runtime: every workload runs as its spec says, at once and without fault.

What it reports, all derived from the stored items on each call (it keeps no state, so every
worker and replica answers the same):

- one deployment per location of the GVC's placement, each having processed the workload's
  current version, ready right after each write, with one ``versions`` entry for that version;
- replicas per location from the autoscaling lower bound (``minScale``, after the location's
  ``localOptions``), zero when suspended, for cron, or with ``maxScale: 0``;
- images as given (no registry is asked for digests);
- a workload the engine places as ``blocked`` (a secret reference that does not hold) runs
  nowhere yet: not ready, no replica ready, the reasons as the message, in the summary and in
  every deployment; it becomes ready with the write that clears the last reason;
- commands complete when they are accepted: a ``runCronWorkload`` shows as a successful job
  execution named ``command-{id}`` in its location's deployment, started and completed at the
  command's creation; a ``stopReplica`` completes (the replica "restarts" at once).

What it does not do: run containers, pull images, probe readiness, fire cron schedules (no
scheduled executions appear), or scale with load.
"""

from __future__ import annotations

from collections.abc import Sequence

from plinth.runtime.base import CommandOutcome, Doc, Placement, WorkloadSummary
from plinth.runtime.deployments import container_statuses, deployment_doc, replicas_at


class SimulatedRuntime:
    name = "simulated"
    observes = False

    def summary(self, placement: Placement) -> WorkloadSummary:
        replicas = sum(replicas_at(placement.workload, location) for location in placement.locations)
        if placement.blocked:
            return WorkloadSummary(ready=False, replicas=replicas, message=blocked_message(placement))
        return WorkloadSummary(ready=bool(placement.locations), replicas=replicas)

    async def deployments(self, placement: Placement, commands: Sequence[Doc]) -> list[Doc]:
        workload = placement.workload
        ready = not placement.blocked
        message = blocked_message(placement)
        out: list[Doc] = []
        for location in placement.locations:
            replicas = replicas_at(workload, location)
            version = {
                "name": str(workload["version"]),
                "created": workload.get("lastModified"),
                "workload": workload["version"],
                "gvc": placement.gvc.get("version", 1),
                "containers": container_statuses(placement, replicas, ready=ready),
                "ready": ready,
                "message": message,
            }
            executions = [_execution(command) for command in commands if _runs_at(command, location)]
            out.append(
                deployment_doc(
                    placement,
                    location,
                    ready=ready,
                    message=message,
                    processed=workload["version"],
                    versions=[version],
                    executions=executions,
                )
            )
        return out

    async def submit(self, placement: Placement, command: Doc) -> CommandOutcome:
        spec = command.get("spec") or {}
        location_link = f"{placement.href.split('/gvc/')[0]}/location/{spec.get('location', '')}"
        if command["type"] == "runCronWorkload":
            status: Doc = {
                "replica": f"command-{command['id']}",
                "clusterIdByLocation": {spec.get("location", ""): location_link},
                "minimumWorkloadVersion": placement.workload["version"],
            }
        else:
            status = {
                "podId": spec.get("replica") or f"{placement.workload['name']}-0",
                "clusterIdByLocation": {spec.get("location", ""): location_link},
            }
        return CommandOutcome("completed", status)


def blocked_message(placement: Placement) -> str:
    return "; ".join(placement.blocked)


def _runs_at(command: Doc, location: str) -> bool:
    return command.get("type") == "runCronWorkload" and (command.get("spec") or {}).get("location") == location


def _execution(command: Doc) -> Doc:
    """A job execution for an on-demand run (types-ts cronjob.ts)."""
    return {
        "name": f"command-{command['id']}",
        "workloadVersion": command.get("status", {}).get("minimumWorkloadVersion", 0),
        "status": "successful",
        "startTime": command["created"],
        "completionTime": command["created"],
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "lastDetectionTime": command["created"],
                "lastTransitionTime": command["created"],
                "message": "",
                "reason": "",
            }
        ],
        "replica": f"command-{command['id']}",
        "containers": {},
    }
