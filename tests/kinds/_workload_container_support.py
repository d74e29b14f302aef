"""Shared builders for the workload container tests: they drive the engine's real pure pipeline."""

from __future__ import annotations

import copy
from typing import Any

from plinth.engine.pipeline import build_candidate, strip_server_owned
from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.workload import WORKLOAD

PARENT: Item = {"id": "5d9c0c52-8d5e-4f0b-9d43-1c7a52f0e111", "name": "main", "spec": {}}
CTX = KindContext(org="acme", now="2026-01-01T00:00:00.000Z", gvc="main", parent=PARENT, id="wl-0001")


def write(
    spec: Any = None, *, body: dict[str, Any] | None = None, old: Item | None = None
) -> tuple[Item, list[FieldError]]:
    """Run one workload write as the engine does: strip server-owned fields, then build."""
    full = {"spec": copy.deepcopy(spec)} if body is None else copy.deepcopy(body)
    return build_candidate(WORKLOAD, strip_server_owned(WORKLOAD, full), old, CTX, "web")


def container(name: str = "app", **fields: Any) -> dict[str, Any]:
    """A container with just a name and an image, plus ``fields``."""
    return {"name": name, "image": "nginx:1.27", **fields}


def workload(*containers: dict[str, Any], type: str = "standard", **fields: Any) -> dict[str, Any]:
    """A workload spec of ``type`` holding ``containers`` (one default container when none)."""
    return {"type": type, "containers": list(containers) or [container()], **fields}


def pairs(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(error.path, error.message) for error in errors]


def paths(errors: list[FieldError]) -> list[str]:
    return [error.path for error in errors]


def errors_for(spec: dict[str, Any], old: Item | None = None) -> list[str]:
    return paths(write(spec, old=old)[1])


def stored_container(spec: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """The stored container ``index`` of ``spec``; fails the test when the write is refused."""
    item, errors = write(spec)
    assert errors == []
    result: dict[str, Any] = item["spec"]["containers"][index]
    return result


def tagged_write(spec: dict[str, Any], tags: dict[str, Any]) -> tuple[Item, list[FieldError]]:
    """A write of ``spec`` by an item that already carries ``tags``.

    The ``cpln/`` prefix is reserved on create, but an item may keep reserved tags it already
    carries: an update that leaves them unchanged passes the common tag rules.
    """
    old, _ = write(workload(type=spec.get("type", "standard")))
    old["tags"] = dict(tags)
    return write(body={"tags": dict(tags), "spec": spec}, old=old)


def assert_written_twice_the_same(spec: dict[str, Any]) -> Item:
    """Write ``spec``, then write the stored spec again: both clean, the second the same item,
    keys in the same order (re-applying a stored workload must change nothing). The first item."""
    first, errors = write(spec)
    assert errors == []
    second, errors = write(first["spec"])
    assert errors == []
    assert second == first
    assert [list(c) for c in second["spec"]["containers"]] == [list(c) for c in first["spec"]["containers"]]
    return first
