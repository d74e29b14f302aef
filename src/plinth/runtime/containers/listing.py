"""Containers as ``ps --format json`` lists them: one engine command for a whole ``list``.

``podman ps --all --format json`` prints one JSON array whose elements carry everything a
controller reads of a container (id, name, image, state, exit code, labels, published ports,
start and exit times as Unix seconds). ``docker ps --all --format '{{json .}}'`` prints one JSON
object per line, in a flatter shape: labels as one ``k=v,k=v`` string, ports as text
(``127.0.0.1:32768->8080/tcp``), the exit code only inside ``Status`` (``Exited (7) 3 seconds
ago``), and no times.

What a list gives less precisely than ``inspect`` (which stays exact, for the one container it
names):

- ``started_at``/``finished_at``: to the second with podman, ``None`` with docker;
- ``restart_count``: what the engine's ``ps`` reports (podman 4.3 and docker report none: 0).
  The driver never sets an engine restart policy, so the engine never restarts a container it
  made and the count is 0 anyway; the controller counts restarts itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from plinth.runtime.containers.protocol import ContainerInfo

#: Podman's words that mean what docker's plain ones do: ``stopped`` is an exited container
#: whose clean-up is still pending, ``configured`` one created but not yet initialised.
STATES = {"stopped": "exited", "configured": "created"}
#: ``127.0.0.1:32768->8080/tcp``, or a range (``...:32768-32769->8080-8081/tcp``: its first port).
_DOCKER_PORT = re.compile(r"^(?:(?P<ip>[^,\s]*):)?(?P<host>\d+)(?:-\d+)?->(?P<port>\d+)(?:-\d+)?/(?P<proto>\w+)$")
_EXITED = re.compile(r"^Exited \((-?\d+)\)")


def parse_ps(out: bytes, engine: str) -> list[ContainerInfo]:
    """The containers in ``ps``'s output of ``engine`` (``podman``: one array; ``docker``:
    one object a line)."""
    text = out.decode(errors="replace").strip()
    if not text:
        return []
    if engine == "podman":
        return [_podman(doc) for doc in json.loads(text) or ()]
    return [_docker(json.loads(line)) for line in text.splitlines() if line.strip()]


def _unix(value: Any) -> datetime | None:
    """Podman's Unix seconds; ``None`` for the zero time (a negative number) or none."""
    if not isinstance(value, int | float) or value <= 0:
        return None
    return datetime.fromtimestamp(value, UTC)


def _loopback(ip: Any) -> bool:
    return ip in ("127.0.0.1", "", None)


def _podman_ports(entries: Any) -> dict[int, int]:
    """Container port → host port, TCP on 127.0.0.1 (``range`` consecutive ports per entry)."""
    found: dict[int, int] = {}
    for entry in entries or ():
        ip = entry.get("host_ip", entry.get("hostIP"))
        proto = entry.get("protocol") or "tcp"
        port = entry.get("container_port", entry.get("containerPort"))
        host = entry.get("host_port", entry.get("hostPort"))
        if proto != "tcp" or not _loopback(ip) or not port or not host:
            continue
        for offset in range(int(entry.get("range") or 1)):
            found.setdefault(int(port) + offset, int(host) + offset)
    return found


def _podman(doc: Mapping[str, Any]) -> ContainerInfo:
    names = doc.get("Names") or [""]
    state = str(doc.get("State") or "unknown")
    return ContainerInfo(
        id=str(doc.get("Id") or doc.get("ID") or ""),
        name=str(names[0] if isinstance(names, list) else names),
        image=str(doc.get("Image") or ""),
        state=STATES.get(state, state),
        exit_code=int(doc.get("ExitCode") or 0),
        restart_count=int(doc.get("Restarts") or 0),
        started_at=_unix(doc.get("StartedAt")),
        finished_at=_unix(doc.get("ExitedAt")),
        ports=_podman_ports(doc.get("Ports")),
        labels=dict(doc.get("Labels") or {}),
    )


def docker_labels(text: str) -> dict[str, str]:
    """Docker's ``k=v,k=v`` label text. A piece without ``=`` continues the value before it
    (a value holding a comma, as ``plinth.secrets`` does); a value holding ``,x=`` cannot be
    told apart from two labels, and the driver makes none."""
    labels: dict[str, str] = {}
    last: str | None = None
    for piece in text.split(",") if text else ():
        key, sep, value = piece.partition("=")
        if sep:
            labels[key], last = value, key
        elif last is not None:
            labels[last] += "," + piece
    return labels


def _docker_ports(text: str) -> dict[int, int]:
    found: dict[int, int] = {}
    for item in (text or "").split(","):
        match = _DOCKER_PORT.match(item.strip())
        if match is None or match["proto"] != "tcp" or not _loopback(match["ip"] or ""):
            continue
        found.setdefault(int(match["port"]), int(match["host"]))
    return found


def _docker(doc: Mapping[str, Any]) -> ContainerInfo:
    status = str(doc.get("Status") or "")
    state = str(doc.get("State") or "")
    if not state:  # older docker: only the status text
        state = "running" if status.startswith("Up") else status.split(" ", 1)[0].lower() or "unknown"
    exited = _EXITED.match(status)
    labels = doc.get("Labels")
    return ContainerInfo(
        id=str(doc.get("ID") or ""),
        name=str(doc.get("Names") or "").split(",")[0],
        image=str(doc.get("Image") or ""),
        state=STATES.get(state, state),
        exit_code=int(exited.group(1)) if exited else 0,
        restart_count=0,
        started_at=None,
        finished_at=None,
        ports=_docker_ports(str(doc.get("Ports") or "")),
        labels=dict(labels) if isinstance(labels, Mapping) else docker_labels(str(labels or "")),
    )
