"""The engine's container events, from one long-running ``events`` command per driver.

``podman events --format json`` (``docker events --format '{{json .}}'``) streams what happens
to containers as it happens: created, started, died, removed. A controller that follows it
learns that a container ended without listing the engine every second.

- **One process for every subscriber.** :class:`EventHub` runs one ``events`` command, filtered
  to containers carrying ``plinth.managed=true``, and hands each event to every subscriber whose
  labels the container carries (the engines OR several label filters, so the rest are matched
  here). It starts with the first subscriber and stops with the last; a hub belongs to one
  asyncio event loop.
- **The stream may end** (the engine restarted, the command failed): each subscription then
  ends too, raising :class:`EngineError` with the engine's message when there is one. A
  subscriber that needs every change lists the engine after subscribing, and again after its
  subscription ends: events from before the command was reading are not replayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from plinth.runtime.containers import process
from plinth.runtime.containers.protocol import MANAGED, ContainerEvent, EngineError, EngineUnavailable

log = logging.getLogger(__name__)


def event_argv(engine: str) -> list[str]:
    """The ``events`` command's arguments for ``engine`` (after the binary)."""
    fmt = "json" if engine == "podman" else "{{json .}}"
    return ["events", "--format", fmt, "--filter", "type=container", "--filter", f"label={MANAGED}=true"]


def parse_event(line: bytes | str) -> ContainerEvent | None:
    """One line of the stream (podman's shape or docker's), or ``None`` when it is not a
    container event this driver reads."""
    try:
        doc: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(doc, dict) or str(doc.get("Type", "container")) != "container":
        return None
    actor = doc.get("Actor") or {}
    attributes = dict(doc.get("Attributes") or actor.get("Attributes") or {})
    # Docker's actions carry details after a colon ("exec_start: sh -c ...").
    action = str(doc.get("Status") or doc.get("Action") or doc.get("status") or "").split(":", 1)[0].strip()
    name = str(doc.get("Name") or attributes.get("name") or "")
    if not action:
        return None
    labels = {str(k): str(v) for k, v in attributes.items()}
    return ContainerEvent(action=action, name=name, id=str(doc.get("ID") or actor.get("ID") or ""), labels=labels)


class EventHub:
    """One ``events`` command shared by every subscriber of one event loop (module docstring)."""

    def __init__(self, binary: str, engine: str) -> None:
        self.binary, self.engine = binary, engine
        self._subscribers: dict[asyncio.Queue[ContainerEvent | None], dict[str, str]] = {}
        self._pump: asyncio.Task[None] | None = None
        self._error = ""

    async def subscribe(self, labels: Mapping[str, str] | None = None) -> AsyncIterator[ContainerEvent]:
        """The events of containers carrying every one of ``labels``, until the stream ends."""
        queue: asyncio.Queue[ContainerEvent | None] = asyncio.Queue()
        self._subscribers[queue] = dict(labels or {})
        if self._pump is None or self._pump.done():
            self._error = ""
            self._pump = asyncio.create_task(self._run(), name=f"{self.engine} events")
        try:
            while (event := await queue.get()) is not None:
                yield event
            if self._error:
                raise EngineError(f"{self.engine} events ended: {self._error}")
        finally:
            self._subscribers.pop(queue, None)
            if not self._subscribers and self._pump is not None:
                pump, self._pump = self._pump, None
                pump.cancel()  # its own clean-up stops the command: let it, before the loop may close
                await asyncio.wait([pump])

    async def _run(self) -> None:
        proc: asyncio.subprocess.Process | None = None
        try:
            try:
                proc = await process.start(
                    self.binary,
                    *event_argv(self.engine),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
            except OSError as exc:
                raise EngineUnavailable(f"cannot run {self.binary}: {exc}") from exc
            assert proc.stdout is not None and proc.stderr is not None
            while line := await proc.stdout.readline():
                event = parse_event(line)
                if event is None:
                    continue
                for queue, labels in list(self._subscribers.items()):
                    if labels.items() <= event.labels.items():
                        queue.put_nowait(event)
            await proc.wait()
            err = (await proc.stderr.read()).decode(errors="replace").strip()
            self._error = err.splitlines()[-1] if err else f"exit code {proc.returncode}"
        except EngineError as exc:
            self._error = str(exc)
        except Exception as exc:  # the subscribers must hear that the stream ended, whatever ended it
            log.exception("reading %s events failed", self.engine)
            self._error = str(exc) or type(exc).__name__
        finally:
            for queue in list(self._subscribers):
                queue.put_nowait(None)
            if proc is not None and proc.returncode is None:
                proc.kill()
                with contextlib.suppress(ProcessLookupError):
                    await proc.wait()
