"""What the control loop observed, posted to the API (``POST /org/{org}/-runtime/observations``).

:class:`Reporter` is the loop's ``after_pass`` hook: after every pass (and the prober wakes the
loop whenever a container ended or a back-off is over) it builds one observation per workload
of the informer's cache (``runtime/observations.py``) and posts those that differ from what it
last posted successfully. Its :meth:`~Reporter.after_probe` is the loop's ``after_probe``: when
the prober's verdicts change (or a container appears) between passes, it posts just those
workloads' observations at once, built as a pass would build them but with the last pass's
plan, and without learning from it: which version a workload's plan serves is only learnt
from a pass (the informer's cache may already hold a version no pass planned yet). A failed post raises, which the loop
reports as an error of the pass and retries after ``retry_s``; an org that is gone (404, 410)
is fine: there is nothing left to report to.

- **Replicas** come from ``supervisor.observed()``: its entries (one per container) are grouped
  by location and replica, and a replica's containers running a planned template are kept apart
  from those running another (during a rollout the old and new replica ``web-0`` coexist). A
  replica's ``template`` is its containers' spec digests (12 hex digits each, by container
  name) joined with ``+``.
- **Versions.** The loop plans from the workload as the informer holds it, so the planned
  replicas' templates serve the workload's ``version``; the reporter remembers that mapping
  for the templates it saw planned, so an old replica still running during a rollout keeps
  its version. A restarted controller has forgotten it: the server keeps what was reported
  before for the templates still running (docs/runtime.md).
- **Cron runs** (``loop.cron.executions()``) are each location's ``jobExecutions``, newest
  first; an on-demand run (``commands.py``) is named ``command-{id}``.
- **Messages**: the workload's plan error (a secret, a bad quantity: held), else the pass's
  engine error for it (an image that cannot be pulled), else ``crash loop: exit code N`` when
  a replica keeps ending, else ``no location`` when its GVC is placed nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx

from plinth.runtime.containers.protocol import GVC, LOCATION, WORKLOAD, ReplicaSpec
from plinth.runtime.controller.informer import gvc_locations
from plinth.runtime.controller.jobs import JobRun
from plinth.runtime.controller.plan import CONTAINER, REPLICA
from plinth.runtime.controller.reconcile import ReconcileReport, engine_name
from plinth.runtime.observations import MAX_TEXT, MAX_WORKLOADS

if TYPE_CHECKING:
    from plinth.runtime.controller.loop import ControlLoop

Doc = dict[str, Any]
_EXIT = re.compile(r"exited with code (\d+)")
_BACKOFF_LEFT = re.compile(r"back-off \d+ s ")  # changes every pass: not worth a write


class ReportFailed(Exception):
    """The server did not take the observations (they are posted again after the retry)."""


class Reporter:
    """Posts one org's observations; call it as the loop's ``after_pass``."""

    def __init__(self, base_url: str, token: str, org: str, *, verify: bool | str = True) -> None:
        self.org = org
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(10.0),
            verify=verify,
        )
        #: What the server last took, by ``gvc/name``.
        self.sent: dict[str, Doc] = {}
        self.posts = 0
        self._versions: dict[str, int] = {}
        self._planned: dict[str, int] = {}
        self._images: dict[str, str] = {}
        #: Job run name -> execution name (``command-{id}`` for on-demand runs: ``commands.py``).
        self.execution_names: dict[str, str] = {}

    async def __call__(
        self, loop: ControlLoop, specs: Sequence[ReplicaSpec], held: Mapping[Any, str], report: ReconcileReport
    ) -> None:
        docs = self.observations(loop, specs, held, report)
        changed = [doc for key, doc in docs.items() if self.sent.get(key) != doc]
        for key in set(self.sent) - set(docs):
            del self.sent[key]  # gone from the cache: the server removed its record with it
        for start in range(0, len(changed), MAX_WORKLOADS):
            await self._post(changed[start : start + MAX_WORKLOADS])

    async def after_probe(self, loop: ControlLoop, workloads: Collection[str]) -> None:
        """Post the observations of ``workloads`` (``gvc/name``) that changed, as the prober
        sees them now, with the last pass's plan (module docstring); nothing before a pass."""
        if loop.last_plan is None:
            return
        specs, held, report = loop.last_plan
        docs = self.observations(loop, specs, held, report, learn=False)
        changed = [docs[key] for key in sorted(workloads) if key in docs and self.sent.get(key) != docs[key]]
        for start in range(0, len(changed), MAX_WORKLOADS):
            await self._post(changed[start : start + MAX_WORKLOADS])

    async def _post(self, batch: list[Doc]) -> None:
        try:
            response = await self.client.post(f"/org/{self.org}/-runtime/observations", json={"workloads": batch})
        except httpx.HTTPError as exc:
            raise ReportFailed(f"posting observations failed: {exc}") from exc
        if response.status_code not in (200, 404, 410):
            raise ReportFailed(f"posting observations: {response.status_code} {response.text[:200]}")
        self.posts += 1
        for doc in batch:
            self.sent[f"{doc['gvc']}/{doc['name']}"] = doc

    async def close(self) -> None:
        await self.client.aclose()

    # -- building the documents ------------------------------------------------------------

    def observations(
        self,
        loop: ControlLoop,
        specs: Sequence[ReplicaSpec],
        held: Mapping[Any, str],
        report: ReconcileReport,
        *,
        learn: bool = True,
    ) -> dict[str, Doc]:
        """One observation per workload of the cache, by ``gvc/name``. ``learn``: remember the
        version each planned workload and template serves (a pass's report, not a probe's)."""
        planned = self._plan(loop, specs, learn)
        observed = loop.supervisor.observed()
        executions = loop.cron.executions()
        out: dict[str, Doc] = {}
        for (gvc_name, name), workload in sorted(loop.informer.workloads.items()):
            key = f"{gvc_name}/{name}"
            full = f"{self.org}/{key}"
            gvc = loop.informer.gvcs.get(gvc_name) or {}
            if learn and (self.org, gvc_name, name) not in held and full not in report.errors:
                self._planned[key] = int(workload.get("version", 0))
            entries = observed.get(full)
            replicas = entries.replicas if entries is not None else []
            locations = _locations(replicas, planned.get(key, set()), self._images)
            version = int(workload.get("version", 0))
            for run in executions.get(full, []):
                entry = next((loc for loc in locations if loc["name"] == run.location), None)
                if entry is None:
                    entry = {"name": run.location, "replicas": []}
                    locations.append(entry)
                entry.setdefault("jobExecutions", []).insert(0, self._execution(run, version))
            templates = {r["template"] for loc in locations for r in loc["replicas"]}
            message = held.get((self.org, gvc_name, name)) or explained(report.errors.get(full, ""))
            message = message or _crash(locations)
            if not message and gvc and not gvc_locations(gvc):
                message = "no location: the GVC is placed nowhere"
            out[key] = {
                "gvc": gvc_name,
                "name": name,
                "planned": self._planned.get(key, 0),
                "message": message[:MAX_TEXT],
                "versions": {t: v for t, v in self._versions.items() if t in templates},
                "locations": locations,
            }
        return out

    def _execution(self, run: JobRun, version: int) -> Doc:
        """A cron run as a job execution (types-ts cronjob.ts); an on-demand run is named
        ``command-{id}`` (``execution_names``, filled by the command runner)."""
        doc: Doc = {
            "name": self.execution_names.get(run.name, run.name),
            "workloadVersion": version,
            "status": EXECUTION_STATUS.get(run.status, "failed"),
            "startTime": _iso(run.started),
            "conditions": [],
            "replica": run.replica_name,
            "containers": {},
        }
        if run.ended is not None:
            doc["completionTime"] = _iso(run.ended)
            kind = "Complete" if run.status == "succeeded" else "Failed"
            when = _iso(run.ended)
            doc["conditions"] = [
                {
                    "type": kind,
                    "status": "True",
                    "lastDetectionTime": when,
                    "lastTransitionTime": when,
                    "message": run.message[:MAX_TEXT],
                    "reason": "",
                }
            ]
        return doc

    def _plan(self, loop: ControlLoop, specs: Sequence[ReplicaSpec], learn: bool = True) -> dict[str, set[str]]:
        """Remember (when ``learn``) the version and images of each planned replica template;
        the planned container digests by ``gvc/name``."""
        replicas: dict[tuple[str, str, str, str], list[tuple[str, str]]] = {}
        for spec in specs:
            labels = spec.labels
            # As the reconcile pass stamps it: the digest of the spec under its engine name.
            digest = loop.driver.digest(replace(spec, name=engine_name(spec, loop.driver)))[:12]
            if learn:
                self._images[digest] = spec.image
            slot = (labels[GVC], labels[WORKLOAD], labels[LOCATION], labels[REPLICA])
            replicas.setdefault(slot, []).append((labels[CONTAINER], digest))
        digests: dict[str, set[str]] = {}
        for (gvc_name, name, _, _), containers in replicas.items():
            if learn:
                workload = loop.informer.workloads.get((gvc_name, name)) or {}
                self._versions[_template(containers)] = int(workload.get("version", 0))
            digests.setdefault(f"{gvc_name}/{name}", set()).update(d for _, d in containers)
        return digests


#: A run's status (``jobs.JobRun``) as a job execution's (types-ts cronjob.ts).
EXECUTION_STATUS = {"active": "active", "succeeded": "successful", "failed": "failed", "replaced": "removed"}


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _template(containers: list[tuple[str, str]]) -> str:
    return "+".join(digest or "-" for _, digest in sorted(containers))


def _locations(replicas: Sequence[Any], planned: set[str], images: Mapping[str, str]) -> list[Doc]:
    """Replica documents by location (see the module docstring), in a stable order."""
    groups: dict[tuple[str, str, bool], list[Any]] = {}
    for entry in replicas:
        groups.setdefault((entry.location, entry.replica, entry.template in planned), []).append(entry)
    by_location: dict[str, list[Doc]] = {}
    for (location, replica, _), entries in sorted(groups.items()):
        entries.sort(key=lambda e: e.container)
        containers = [
            {
                "name": e.container or "main",
                "image": images.get(e.template, ""),
                "ready": e.ready,
                "restarts": e.restarts,
                "message": _stable(e.message),
            }
            for e in entries
        ]
        ready = all(e.ready for e in entries)
        by_location.setdefault(location, []).append(
            {
                "name": replica,
                "template": _template([(e.container, e.template) for e in entries]),
                "ready": ready,
                "restarts": max(e.restarts for e in entries),
                "message": "" if ready else next((c["message"] for c in containers if c["message"]), ""),
                "containers": containers,
            }
        )
    return [{"name": location, "replicas": found} for location, found in sorted(by_location.items())]


def explained(error: str) -> str:
    """An engine error of the pass as the workload's message: a failed pull (the driver's
    ``pulling IMAGE: reason``) says the image is missing."""
    if error.startswith("pulling "):
        return "image missing: " + error.removeprefix("pulling ")
    return error


def _stable(message: str) -> str:
    return _BACKOFF_LEFT.sub("back-off ", message)[:MAX_TEXT]


def _crash(locations: list[Doc]) -> str:
    """``crash loop: exit code N`` when a replica has restarted after ending with ``N``."""
    for location in locations:
        for replica in location["replicas"]:
            found = _EXIT.search(replica["message"])
            if found and replica["restarts"]:
                return f"crash loop: exit code {found.group(1)}"
    return ""
