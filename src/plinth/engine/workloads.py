"""A workload's runtime endpoints: its deployments and its commands (types-ts deployment.ts, command.ts).

The runtime (``plinth.runtime``) says what deployments report and how a command ends; this
module does everything else the way the engine does it for items: the workload and its GVC
are read from the store, access is checked on the workload (``view`` to read deployments and
commands, ``exec.runCronWorkload`` / ``exec.stopReplica`` to send one), and commands are
stored as records of their own under the workload (``Key(org, "command", "{gvc}/{name}", id)``),
deleted with it.
"""

from __future__ import annotations

from typing import Any

import orjson

from plinth.engine.access import Access, require, stamp_of
from plinth.engine.opaque import token_key
from plinth.engine.paging import decode_cursor, encode_cursor
from plinth.engine.render import new_id
from plinth.engine.requestinfo import RequestInfo
from plinth.engine.service import Engine, Target, storage_error
from plinth.errors import NotFound, ValidationFailed, not_found
from plinth.kinds.base import Item
from plinth.kinds.validation import validate_model
from plinth.kinds.workload.commands import COMMAND_PERMISSIONS, CommandRequest, command_errors
from plinth.runtime.base import Placement
from plinth.storage.base import Key, Put, Record, StorageError
from plinth.storage.query import ListRequest, PageStart

COMMAND = "command"
#: Commands read at once to build job executions (the newest ``historyLimit`` are shown).
COMMANDS_READ = 1000


async def placement_of(engine: Engine, org: str, workload: Item, gvc: Item, href: str) -> Placement:
    return await engine.statuses.placement(engine.kinds["workload"], org, workload, gvc, href)


def commands_href(info: RequestInfo) -> str:
    return f"/org/{info.org}/gvc/{info.gvc}/workload/{info.name}/-command"


def command_parent(gvc: str, workload: str) -> str:
    return f"{gvc}/{workload}"


async def _workload(engine: Engine, info: RequestInfo, access: Access, permission: str) -> tuple[Target, Item, Item]:
    """The workload ``info`` names and its GVC, once ``access`` holds ``permission`` on it."""
    t = engine.target(RequestInfo(kind=info.kind, org=info.org, gvc=info.gvc, name=info.name))
    if t.kind.name != "workload" or t.gvc is None:
        raise NotFound(f"No API path matches this {t.kind.name}", {"kind": t.kind.name})
    gvc = await engine.read_container(t)
    record = await engine.read(t, fresh=True)
    if record is None:
        raise not_found("workload", t.name)
    workload: Item = orjson.loads(record.doc)
    require(access, t.kind, permission, t.href, stamp_of(record), lambda: workload)
    return t, workload, gvc or {}


async def _commands(engine: Engine, t: Target, limit: int, start: PageStart | None) -> list[Record]:
    request = ListRequest(t.org, COMMAND, command_parent(t.gvc or "", t.name), limit, start)
    try:
        return await engine.storage.list_page(request)
    except StorageError as exc:
        raise storage_error(exc, "workload", t.name) from exc


async def deployments(engine: Engine, info: RequestInfo, access: Access) -> dict[str, Any]:
    """``GET .../workload/{name}/deployment``: one deployment per location, as a list."""
    t, workload, gvc = await _workload(engine, info, access, "view")
    placement = await placement_of(engine, t.org, workload, gvc, t.href)
    commands = [orjson.loads(r.doc) for r in await _commands(engine, t, COMMANDS_READ, None)]
    commands.sort(key=lambda c: c["created"], reverse=True)
    history = ((workload["spec"].get("job") or {}).get("historyLimit")) or 5
    items = await engine.statuses.runtime.deployments(placement, commands[:history])
    return {
        "kind": "list",
        "itemKind": "deployment",
        "items": items,
        "links": [{"rel": "self", "href": f"{t.href}/deployment"}],
    }


async def deployment(engine: Engine, info: RequestInfo, location: str, access: Access) -> dict[str, Any]:
    """``GET .../deployment/{location}``: 404 for a location the GVC is not placed in."""
    listed = await deployments(engine, info, access)
    for item in listed["items"]:
        if item["name"] == location:
            return item
    raise not_found("deployment", location)


async def run_command(engine: Engine, info: RequestInfo, body: Any, access: Access) -> dict[str, Any]:
    """``POST -command``: validate, hand to the runtime, store with its outcome (201)."""
    fields, errors = validate_model(CommandRequest, body, "")
    permission = COMMAND_PERMISSIONS.get(fields["type"], "exec") if fields else "exec"
    t, workload, gvc = await _workload(engine, info, access, permission)
    if errors or fields is None:
        raise ValidationFailed(errors, "command")
    placement = await placement_of(engine, t.org, workload, gvc, t.href)
    problems = command_errors(fields, workload, placement.locations)
    if problems:
        raise ValidationFailed(problems, "command")
    now, command_id = engine.clock(), new_id()
    href = f"{commands_href(info)}/{command_id}"
    command: dict[str, Any] = {
        "id": command_id,
        "kind": COMMAND,
        "version": 1,
        "type": fields["type"],
        "created": now,
        "lastModified": now,
        "tags": fields.get("tags") or {},
        "links": [{"rel": "self", "href": href}, {"rel": "workload", "href": t.href}],
        "lifecycleStage": "pending",
        "spec": fields["spec"],
        "status": {},
    }
    outcome = await engine.statuses.runtime.submit(placement, command)
    command["lifecycleStage"] = outcome.lifecycle_stage
    command["status"] = outcome.status
    key = Key(t.org, COMMAND, command_parent(t.gvc or "", t.name), command_id)
    try:
        await engine.storage.commit([Put(Record(key, command_id, 1, orjson.dumps(command)), None)])
    except StorageError as exc:
        raise storage_error(exc, "workload", t.name) from exc
    return command


async def list_commands(
    engine: Engine, info: RequestInfo, limit: int, cursor: str | None, access: Access
) -> dict[str, Any]:
    """``GET -command``: the workload's commands, a page at a time (``next`` link)."""
    t, _, _ = await _workload(engine, info, access, "view")
    base = commands_href(info)
    key = await token_key(engine.storage)
    start = decode_cursor(key, base, cursor).start if cursor else None
    rows = await _commands(engine, t, limit + 1, start)
    links = [{"rel": "self", "href": base}]
    if len(rows) > limit:
        rows = rows[:limit]
        token = encode_cursor(key, base, PageStart(rows[-1].key.parent, rows[-1].key.name))
        links.append({"rel": "next", "href": f"{base}?limit={limit}&cursor={token}"})
    return {"kind": "list", "itemKind": COMMAND, "items": [orjson.loads(r.doc) for r in rows], "links": links}


async def get_command(engine: Engine, info: RequestInfo, command_id: str, access: Access) -> dict[str, Any]:
    """``GET -command/{id}``."""
    t, _, _ = await _workload(engine, info, access, "view")
    key = Key(t.org, COMMAND, command_parent(t.gvc or "", t.name), command_id)
    try:
        record = await engine.storage.get(key, fresh=True)
    except StorageError as exc:
        raise storage_error(exc, "workload", t.name) from exc
    if record is None:
        raise not_found(COMMAND, command_id)
    found: dict[str, Any] = orjson.loads(record.doc)
    return found
