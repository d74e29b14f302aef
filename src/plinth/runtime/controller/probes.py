"""Readiness and liveness probes: what a workload's container asks for, one check, and the
thresholds that turn checks into a verdict.

- :func:`parse_probe` reads ``readinessProbe``/``livenessProbe`` of a container as the API
  serves it (defaults filled as the API fills them: ``initialDelaySeconds`` 10 for readiness
  and 60 for liveness, ``periodSeconds`` 10, ``timeoutSeconds`` 1, ``successThreshold`` 1,
  ``failureThreshold`` 3; ``httpGet`` path ``/`` and the container's first port).
- :func:`check` runs one probe against a running container. ``httpGet`` and ``tcpSocket`` (and
  ``grpc``, checked as a TCP connection) reach the container **only through its port
  published on 127.0.0.1**; ``exec`` runs through the engine. It answers ``None`` for a pass,
  else why it failed.
- :class:`ProbeTracker` counts consecutive passes and failures against the thresholds, and
  says when the next check is due (pure: the caller passes the clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import httpx

from plinth.runtime.containers.protocol import ContainerEngine, ContainerInfo, EngineError
from plinth.runtime.controller.plan import container_ports

ProbeKind = Literal["readinessProbe", "livenessProbe"]
INITIAL_DELAY_S: dict[str, float] = {"readinessProbe": 10, "livenessProbe": 60}


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe: its handler (``http``, ``tcp``, ``exec``) and its timing."""

    handler: str
    port: int | None = None
    path: str = "/"
    scheme: str = "http"
    headers: tuple[tuple[str, str], ...] = ()
    command: tuple[str, ...] = ()
    initial_delay_s: float = 0
    period_s: float = 10
    timeout_s: float = 1
    success_threshold: int = 1
    failure_threshold: int = 3


def parse_probe(container: Mapping[str, Any], kind: ProbeKind) -> Probe | None:
    """The container's ``kind`` probe, or ``None`` when it has none (module docstring)."""
    doc = container.get(kind)
    if not doc:
        return None
    timing = Probe(
        "",
        initial_delay_s=float(doc.get("initialDelaySeconds", INITIAL_DELAY_S[kind])),
        period_s=float(doc.get("periodSeconds", 10)),
        timeout_s=float(doc.get("timeoutSeconds", 1)),
        success_threshold=int(doc.get("successThreshold", 1)),
        failure_threshold=int(doc.get("failureThreshold", 3)),
    )
    if "exec" in doc:
        return replace(timing, handler="exec", command=tuple(doc["exec"].get("command") or ()))
    if "httpGet" in doc:
        http = doc["httpGet"]
        return replace(
            timing,
            handler="http",
            port=http.get("port") or next(iter(container_ports(container)), None),
            path=http.get("path") or "/",
            scheme=str(http.get("scheme") or "HTTP").lower(),
            headers=tuple((h["name"], h["value"]) for h in http.get("httpHeaders") or ()),
        )
    handler = doc.get("tcpSocket") or doc.get("grpc") or {}
    return replace(timing, handler="tcp", port=handler.get("port") or next(iter(container_ports(container)), None))


async def check(probe: Probe, driver: ContainerEngine, info: ContainerInfo) -> str | None:
    """Run ``probe`` once against the container ``info``: ``None`` if it passed, else why not."""
    if probe.handler == "exec":
        try:
            result = await driver.exec(info.name, probe.command, timeout_s=probe.timeout_s)
        except (EngineError, TimeoutError) as exc:
            return f"exec probe failed: {exc or 'timed out'}"
        if result.exit_code != 0:
            return f"exec probe exited with {result.exit_code}"
        return None
    host_port = info.ports.get(probe.port) if probe.port is not None else None
    if host_port is None:
        return f"probe port {probe.port} is not published"
    if probe.handler == "tcp":
        try:
            async with asyncio.timeout(probe.timeout_s):  # not wait_for: it can swallow a cancellation
                _, writer = await asyncio.open_connection("127.0.0.1", host_port)
        except (OSError, TimeoutError) as exc:
            return f"tcp probe on port {probe.port} failed: {exc or 'timed out'}"
        writer.close()
        return None
    url = f"{probe.scheme}://127.0.0.1:{host_port}{probe.path}"
    try:
        async with httpx.AsyncClient(verify=False, timeout=probe.timeout_s) as client:
            response = await client.get(url, headers=dict(probe.headers))
    except httpx.HTTPError as exc:
        return f"http probe {probe.path} on port {probe.port} failed: {type(exc).__name__}"
    if not 200 <= response.status_code < 400:
        return f"http probe {probe.path} on port {probe.port} answered {response.status_code}"
    return None


@dataclass
class ProbeTracker:
    """Consecutive results of one probe on one container, against its thresholds.

    ``passing`` is ``None`` until a threshold is first reached, then ``True`` after
    ``successThreshold`` passes in a row, ``False`` after ``failureThreshold`` failures in a row.
    """

    probe: Probe
    started: float
    successes: int = 0
    failures: int = 0
    last: float | None = None
    passing: bool | None = None
    message: str = ""

    def due(self, now: float) -> bool:
        if now < self.started + self.probe.initial_delay_s:
            return False
        return self.last is None or now - self.last >= self.probe.period_s

    def next_due(self) -> float:
        if self.last is None:
            return self.started + self.probe.initial_delay_s
        return self.last + self.probe.period_s

    def record(self, failure: str | None, now: float) -> None:
        self.last = now
        if failure is None:
            self.successes, self.failures = self.successes + 1, 0
            if self.successes >= self.probe.success_threshold:
                self.passing, self.message = True, ""
        else:
            self.successes, self.failures, self.message = 0, self.failures + 1, failure
            if self.failures >= self.probe.failure_threshold:
                self.passing = False


def container_probes(workload: Mapping[str, Any], container: str) -> tuple[Probe | None, Probe | None]:
    """(readiness, liveness) of the container named ``container`` of a workload document."""
    for doc in (workload.get("spec") or {}).get("containers") or ():
        if doc.get("name") == container:
            return parse_probe(doc, "readinessProbe"), parse_probe(doc, "livenessProbe")
    return None, None
