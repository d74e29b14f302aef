"""Every org's control loop, and one gateway for all of them.

:class:`Fleet` watches the orgs its key may see (``GET /org?watch=true``: a key of the
server-admin account sees every org) and keeps one :class:`~.loop.ControlLoop` per org:

- **A new org** gets a loop at once (its watch event); **a deleted org**'s loop is stopped and
  every container in its scope is removed (replicas and cron runs alike: nothing of it is
  wanted any more).
- **Orgs deleted while no controller ran**: once the org list has been read, containers in
  scope whose ``plinth.org`` names no org are removed the same way. Nothing is collected
  before that first full list (an empty list would mean "remove everything"), nor without
  scope labels (``plinth serve`` always gives ``plinth.store``): other installations' orgs are
  unknown here, not deleted. The log lines of a gone org are dropped too (``logkeeper.py``).
- **One gateway.** Each loop's route table is kept by org; every change loads the union of all
  of them into the one gateway (routes of different orgs never share a host: a workload's host
  carries its GVC's alias, a domain is unique across orgs).
- **Stopping** (:meth:`Fleet.run` cancelled) stops every loop and leaves the containers
  running; :meth:`Fleet.remove_all` removes the scope's containers (``--remove-containers-on-exit``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from plinth.runtime.containers.protocol import ORG, ContainerEngine
from plinth.runtime.controller.commands import CommandRunner
from plinth.runtime.controller.informer import READ_TIMEOUT_S, RELIST_INTERVAL_S, Informer, _Stream
from plinth.runtime.controller.logkeeper import LogKeeper
from plinth.runtime.controller.loop import ControlLoop
from plinth.runtime.controller.reporter import Reporter
from plinth.runtime.gateway.domains import DEFAULT_BASE_DOMAIN
from plinth.runtime.gateway.routes import RouteTable
from plinth.runtime.logs import LogService
from plinth.runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Gateway = Callable[[RouteTable], Awaitable[None]]


def _name(doc: Mapping[str, Any]) -> str:
    return str(doc["name"])


class Fleet:
    """One control loop per org, one gateway for all (module docstring)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        driver: ContainerEngine,
        *,
        labels: Mapping[str, str] | None = None,
        gateway: Gateway | None = None,
        base_domain: str = DEFAULT_BASE_DOMAIN,
        verify: bool | str = True,
        relist_interval_s: float = RELIST_INTERVAL_S,
        make_loop: Callable[[Informer, Gateway | None], ControlLoop] | None = None,
        logs: LogService | None = None,
    ) -> None:
        self.base_url, self.token, self.driver, self.verify = base_url, token, driver, verify
        self.labels = dict(labels or {})
        self.gateway, self.base_domain = gateway, base_domain
        self.relist_interval_s = relist_interval_s
        self.make_loop = make_loop or self._default_loop
        #: Drops the log lines of what is gone (``logkeeper.py``), when a log service runs.
        self.logs = LogKeeper(logs) if logs is not None else None
        #: What _Stream needs of its owner: a client, the relist interval and ``changed``.
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/x-ndjson"},
            timeout=httpx.Timeout(10.0, read=READ_TIMEOUT_S),
            verify=verify,
        )
        # _Stream reads only ``client``, ``relist_interval_s`` and ``changed()`` of its owner.
        self._orgs = _Stream(self, "/org", _name, None)  # type: ignore[arg-type]
        self.loops: dict[str, tuple[ControlLoop, asyncio.Task[None]]] = {}
        self._tables: dict[str, RouteTable] = {}
        self._gateway_lock = asyncio.Lock()
        self._changed = asyncio.Event()

    def _default_loop(self, informer: Informer, gateway: Gateway | None) -> ControlLoop:
        reporter = Reporter(self.base_url, self.token, informer.org, verify=self.verify)
        return ControlLoop(
            informer,
            self.driver,
            labels=self.labels,
            gateway=gateway,
            base_domain=self.base_domain,
            after_pass=reporter,
            after_probe=reporter.after_probe,
            logs=self.logs,
        )

    async def _run_org(self, loop: ControlLoop) -> None:
        """An org's loop, and beside it the runner that takes the org's commands; the runner
        names the cron runs it starts for the loop's reporter (``command-{id}``)."""
        reporter = loop.after_pass if isinstance(loop.after_pass, Reporter) else None
        commands = CommandRunner(
            self.base_url,
            self.token,
            loop.informer.org,
            verify=self.verify,
            execution_names=reporter.execution_names if reporter is not None else None,
        )
        taking = asyncio.create_task(commands.run(loop), name=f"plinth-commands-{loop.informer.org}")
        try:
            await loop.run()
        finally:
            await cancel_and_wait(taking)
            if reporter is not None:
                with contextlib.suppress(Exception):
                    await reporter.close()

    def changed(self) -> None:
        self._changed.set()

    @property
    def orgs(self) -> set[str]:
        return set(self._orgs.items)

    async def run(self) -> None:
        """Keep a loop per org until cancelled; containers keep running after."""
        stream = asyncio.create_task(self._orgs.run())
        try:
            await self._orgs.synced.wait()
            await self._collect_unknown_orgs()
            while True:
                self._changed.clear()
                await self._sync()
                await self._changed.wait()
        finally:
            await cancel_and_wait(stream)
            for org in list(self.loops):
                await self._stop_loop(org)
            with contextlib.suppress(Exception):
                await self.client.aclose()

    async def _sync(self) -> None:
        wanted = self.orgs
        for org in sorted(wanted - set(self.loops)):
            informer = Informer(
                self.base_url, self.token, org, relist_interval_s=self.relist_interval_s, verify=self.verify
            )
            loop = self.make_loop(informer, self._gateway_for(org) if self.gateway else None)
            self.loops[org] = (loop, asyncio.create_task(self._run_org(loop), name=f"plinth-loop-{org}"))
            log.info("org %s: control loop started", org)
        for org in sorted(set(self.loops) - wanted):
            await self._stop_loop(org)
            await self.remove_all({ORG: org})
            if self.logs is not None:
                await self.logs.drop_orgs([org])
            log.info("org %s is gone: its loop stopped and its containers removed", org)

    async def _stop_loop(self, org: str) -> None:
        _, task = self.loops.pop(org)
        await cancel_and_wait(task)
        if self._tables.pop(org, None) is not None and self.gateway is not None:
            with contextlib.suppress(Exception):
                await self._load()

    async def _collect_unknown_orgs(self) -> None:
        """Remove the containers in scope of orgs that no longer exist (module docstring)."""
        if not self.labels:  # without a scope of its own, another installation's orgs would look deleted
            log.warning("no scope labels: containers of orgs this server does not know are left alone")
            return
        if self.logs is not None:  # the log store is this controller's own: its orgs are this store's
            await self.logs.drop_orgs(await self.logs.orgs() - self.orgs)
        try:
            infos = await self.driver.list(self.labels)
        except Exception:
            log.exception("listing containers to collect deleted orgs failed")
            return
        for org in sorted({info.labels.get(ORG, "") for info in infos} - self.orgs - {""}):
            log.info("org %s no longer exists: removing its containers", org)
            await self.remove_all({ORG: org})

    async def remove_all(self, scope: Mapping[str, str] | None = None) -> int:
        """Remove every container carrying the fleet's labels (and ``scope``); how many went."""
        removed, labels = 0, {**self.labels, **dict(scope or {})}
        if not labels:  # never every managed container of the machine
            return 0
        for info in await self.driver.list(labels):
            try:
                await self.driver.remove(info.name)
                removed += 1
            except Exception:
                log.exception("removing %s failed", info.name)
        return removed

    def _gateway_for(self, org: str) -> Gateway:
        async def apply(table: RouteTable) -> None:
            self._tables[org] = table
            await self._load()

        return apply

    async def _load(self) -> None:
        """Load every org's routes into the gateway, as one table."""
        assert self.gateway is not None
        async with self._gateway_lock:
            routes = [route for org in sorted(self._tables) for route in self._tables[org].routes]
            await self.gateway(RouteTable(tuple(routes)))
