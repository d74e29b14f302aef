"""Finding replicas and their containers in the engine, by the labels the controller gave them
(``controller/plan.py``): always within the controller's scope labels, so a data plane never
reaches a container its controller does not manage. A cron run's running containers are a
replica too, named by their ``plinth.job-replica`` label (``controller/jobs.py``: the run's
name, or ``command-{id}`` for an on-demand run, which ``cpln workload cron run -i`` looks for)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from plinth.runtime.containers.protocol import GVC, LOCATION, ORG, WORKLOAD, ContainerEngine, ContainerInfo
from plinth.runtime.controller.jobs import JOB_REPLICA
from plinth.runtime.controller.plan import CONTAINER, REPLICA


def _order(name: str) -> tuple[str, int, str]:
    """Replica names sort by workload, then index (``web-2`` before ``web-10``)."""
    match = re.fullmatch(r"(.*)-(\d+)", name)
    return (match.group(1), int(match.group(2)), name) if match else (name, -1, name)


@dataclass(frozen=True, slots=True)
class Target:
    """The container an exec session runs in."""

    engine_name: str
    workload: str
    container: str


class Replicas:
    """Looks replicas up with one engine listing each."""

    def __init__(self, driver: ContainerEngine, scope: Mapping[str, str]) -> None:
        self.driver = driver
        self.scope = dict(scope)

    async def names(self, org: str, gvc: str, workload: str, location: str) -> list[str]:
        """The running replicas of a workload at a location, in index order."""
        labels = {**self.scope, ORG: org, GVC: gvc, WORKLOAD: workload, LOCATION: location}
        running = [info for info in await self.driver.list(labels) if info.running]
        names = {info.labels.get(REPLICA) or info.labels.get(JOB_REPLICA, "") for info in running}
        return sorted(names - {""}, key=_order)

    async def target(self, org: str, gvc: str, location: str, replica: str, container: str | None) -> Target | None:
        """The running container ``container`` (or the replica's first) of ``replica``; replica
        names are unique within a GVC's location (``{workload}-{index}``)."""
        found: list[ContainerInfo] = []
        for label in (REPLICA, JOB_REPLICA):  # a long-running replica, else a cron run's
            labels = {**self.scope, ORG: org, GVC: gvc, LOCATION: location, label: replica}
            if container:
                labels[CONTAINER] = container
            found = sorted((info for info in await self.driver.list(labels) if info.running), key=lambda i: i.name)
            if found:
                break
        if not found:
            return None
        info = found[0]
        return Target(info.name, info.labels.get(WORKLOAD, ""), info.labels.get(CONTAINER, ""))
