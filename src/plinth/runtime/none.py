"""``--runtime none``: nothing runs, and every deployment says so.

For a server that only keeps configuration (a registry of intent, or a CI check of manifests):
each location of a workload reports a deployment that is not ready, whose message says that
no runtime is attached, so ``cpln apply --ready`` fails instead of waiting on nothing.
Commands are accepted and stay ``pending``.
"""

from __future__ import annotations

from collections.abc import Sequence

from plinth.runtime.base import CommandOutcome, Doc, Placement, WorkloadSummary
from plinth.runtime.deployments import deployment_doc

MESSAGE = "No runtime is attached to this Plinth server (--runtime none): nothing runs"


class NoRuntime:
    name = "none"
    observes = False

    def summary(self, placement: Placement) -> WorkloadSummary:
        return WorkloadSummary(ready=False, replicas=0, message=MESSAGE)

    async def deployments(self, placement: Placement, commands: Sequence[Doc]) -> list[Doc]:
        return [
            deployment_doc(placement, location, ready=False, message=MESSAGE, processed=0, versions=[], executions=[])
            for location in placement.locations
        ]

    async def submit(self, placement: Placement, command: Doc) -> CommandOutcome:
        return CommandOutcome("pending", {})
