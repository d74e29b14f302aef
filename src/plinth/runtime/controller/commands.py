"""Commands the controller takes: ``runCronWorkload`` and ``stopReplica``, as they really run.

With ``--runtime containers`` the server stores a command ``pending``. :class:`CommandRunner`
asks for the org's ``pending`` and ``running`` commands (``GET /org/{org}/-runtime/commands``)
every ``interval_s``, carries them out and reports each stage reached (``POST`` on the same
path): ``pending -> running -> completed | failed``.

- **runCronWorkload** starts a run now in the command's location through the loop's
  :class:`~.jobs.CronRunner` (``run_now``), with the command's ``containerOverrides`` applied
  to the workload's containers (``image``, ``cpu``, ``memory``, ``command``, ``args``, ``env``
  by name). It is ``running`` while the run is active and ``completed`` or ``failed`` (with
  the run's message) when it ends. The run shows in the location's ``jobExecutions`` as
  ``command-{id}`` (``execution_names``, which the reporter reads), and its running
  containers as the replica ``command-{id}`` on the data plane: the official CLI's ``cron run
  -i`` finds the replica whose name contains the command's id and opens a shell in it.
- **stopReplica** stops the named replica's containers (default ``{workload}-0``; SIGTERM,
  SIGKILL after 10 s) and removes them, and wakes the loop, whose next pass starts the replica
  again (a replacement, not a crash: no restart is counted). ``completed``; ``failed`` when no
  such replica runs in that location.
- A command ``running`` that this process does not know (the controller restarted during the
  run) is ``failed``: its outcome was lost with the process.

The runner is a task beside :meth:`~.loop.ControlLoop.run` (``run(loop)``); it does nothing
before the loop's informer has listed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import httpx

from plinth.runtime.containers.protocol import GVC, LOCATION, WORKLOAD
from plinth.runtime.controller.jobs import JobRun
from plinth.runtime.controller.plan import REPLICA

if TYPE_CHECKING:
    from plinth.runtime.controller.loop import ControlLoop

log = logging.getLogger(__name__)
Doc = dict[str, Any]
STOP_TIMEOUT_S = 10.0
OVERRIDABLE = ("image", "cpu", "memory", "command", "args")
FINISHED = {"succeeded": "completed", "failed": "failed", "replaced": "failed"}


class CommandRunner:
    """Takes one org's commands (module docstring)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        org: str,
        *,
        verify: bool | str = True,
        interval_s: float = 1.0,
        execution_names: dict[str, str] | None = None,
    ) -> None:
        self.org, self.interval_s = org, interval_s
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers={"Authorization": f"Bearer {token}"}, timeout=10.0, verify=verify
        )
        self.path = f"/org/{org}/-runtime/commands"
        #: Job run name -> execution name (``command-{id}``), for the reporter.
        self.execution_names: dict[str, str] = execution_names if execution_names is not None else {}
        self._runs: dict[str, JobRun] = {}

    async def run(self, loop: ControlLoop) -> None:
        """Take commands every ``interval_s`` until cancelled; errors are logged and retried."""
        try:
            await loop.informer.wait_synced()
            while True:
                try:
                    await self.tick(loop)
                except Exception:
                    log.exception("org %s: taking commands failed; trying again", self.org)
                await asyncio.sleep(self.interval_s)
        finally:
            await self.client.aclose()

    async def tick(self, loop: ControlLoop) -> None:
        response = await self.client.get(self.path)
        if response.status_code in (404, 410):
            return  # the org is gone
        response.raise_for_status()
        updates: list[Doc] = []
        for command in response.json()["items"]:
            update = await self._take(loop, command)
            if update is not None:
                updates.append(update)
        if updates:
            posted = await self.client.post(self.path, json={"commands": updates})
            if posted.status_code not in (200, 404, 410):
                raise RuntimeError(f"reporting commands: {posted.status_code} {posted.text[:200]}")

    async def _take(self, loop: ControlLoop, command: Doc) -> Doc | None:
        base = {"gvc": command["gvc"], "workload": command["workload"], "id": command["id"]}
        stage, kind = command.get("lifecycleStage"), command.get("type")
        if stage == "running":
            run = self._runs.get(command["id"])
            if run is None:
                return {**base, "lifecycleStage": "failed", "status": {"message": "the controller restarted"}}
            if run.status == "active":
                return None
            del self._runs[command["id"]]
            return {**base, "lifecycleStage": FINISHED.get(run.status, "failed"), "status": _outcome(run)}
        workload = loop.informer.workloads.get((command["gvc"], command["workload"]))
        gvc = loop.informer.gvcs.get(command["gvc"])
        if workload is None or gvc is None:
            return None  # not in the cache yet (or going): the next tick sees it
        spec = command.get("spec") or {}
        location = str(spec.get("location", ""))
        if kind == "stopReplica":
            return {**base, **await self._stop(loop, command["workload"], command["gvc"], location, spec)}
        if kind == "runCronWorkload":
            overridden = _overridden(workload, spec.get("containerOverrides") or [])
            run = await loop.cron.run_now(overridden, gvc, location, replica=f"command-{command['id']}")
            self.execution_names[run.name] = f"command-{command['id']}"
            self._runs[command["id"]] = run
            loop.wake()  # the reporter shows the new execution
            return {**base, "lifecycleStage": "running", "status": {"replica": f"command-{command['id']}"}}
        return {**base, "lifecycleStage": "failed", "status": {"message": f"unknown command type {kind!r}"}}

    async def _stop(self, loop: ControlLoop, workload: str, gvc: str, location: str, spec: Mapping[str, Any]) -> Doc:
        replica = str(spec.get("replica") or f"{workload}-0")
        labels = {**loop.scope, GVC: gvc, WORKLOAD: workload, LOCATION: location, REPLICA: replica}
        found = await loop.driver.list(labels)
        if not found:
            return {"lifecycleStage": "failed", "status": {"message": f"no replica {replica} runs in {location}"}}
        for info in found:
            await loop.driver.stop(info.name, STOP_TIMEOUT_S)
            await loop.driver.remove(info.name)
        loop.wake()  # the next pass starts it again
        return {"lifecycleStage": "completed", "status": {"podId": replica}}


def _outcome(run: JobRun) -> Doc:
    out: Doc = {"replica": run.name}
    if run.exit_code is not None:
        out["exitCode"] = run.exit_code
    if run.message:
        out["message"] = run.message
    return out


def _overridden(workload: Mapping[str, Any], overrides: list[Any]) -> Doc:
    """``workload`` with a command's ``containerOverrides`` applied (module docstring)."""
    doc: Doc = copy.deepcopy(dict(workload))
    by_name = {str(o.get("name")): o for o in overrides if isinstance(o, dict)}
    for container in (doc.get("spec") or {}).get("containers") or []:
        override = by_name.get(str(container.get("name")))
        if override is None:
            continue
        container.update({k: override[k] for k in OVERRIDABLE if k in override})
        if override.get("env"):
            env = {e.get("name"): e for e in container.get("env") or []}
            env.update({e.get("name"): e for e in override["env"]})
            container["env"] = list(env.values())
    return doc
