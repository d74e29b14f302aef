"""``POST /org/{org}/-runtime/observations``: where a runtime controller reports what it observed;
``GET``/``POST /org/{org}/-runtime/commands``: the commands it takes, and the stages they reach.

Plinth's own extension (docs/api.md, "Runtime reports"; docs/runtime.md). Only a principal
holding the server-admin right may post (403 otherwise): the controller runs with such a key,
and nobody else may tell the server what runs. The body is validated whole (400 naming every
field path, nothing stored), then each workload's observation is stored with its status
(``engine/observations.py``). The answer names the workloads ``stored``, ``unchanged`` (no
write) and ``missing`` (no such workload: deleted meanwhile). The commands path answers the
same way (``engine/observed_commands.py``).
"""

from __future__ import annotations

from typing import Any

import orjson

from plinth.auth.principal import Principal
from plinth.engine.observations import parse_batch, store_observations
from plinth.engine.observed_commands import active_commands, parse_updates, update_commands
from plinth.engine.runtime_access import AccessQuestion
from plinth.errors import Forbidden, MethodNotAllowed
from plinth.runtime.observations import CommandBatch, ObservationBatch
from plinth.server import runtime_access
from plinth.server.http import Request
from plinth.server.reply import Reply, Services

ACTION = "-runtime"
PATH = "/org/{org}/-runtime/observations"
COMMANDS_PATH = "/org/{org}/-runtime/commands"
ENDPOINTS = ("observations", "commands", "access")


def org_of(path: str) -> str | None:
    """The org of a report (or access) path, or ``None`` when ``path`` is not one."""
    parts = path.split("/")
    if len(parts) == 5 and parts[1] == "org" and parts[3] == ACTION and parts[4] in ENDPOINTS:
        return parts[2] or None
    return None


async def serve(svc: Services, req: Request, org: str, body: object, who: Principal) -> Reply:
    if req.path.endswith("/access"):
        return await runtime_access.serve(svc, req, org, body, who)
    commands = req.path.endswith("/commands")
    allowed = ("GET", "POST") if commands else ("POST",)
    if req.method not in allowed:
        raise MethodNotAllowed(f"This endpoint answers {' and '.join(allowed)}", {"allow": ", ".join(allowed)})
    if not who.server_admin:
        raise Forbidden(
            "Only a server-admin principal (the runtime controller) may report to the server",
            {"permission": "server-admin"},
        )
    if commands and req.method == "GET":
        return Reply(200, orjson.dumps({"items": await active_commands(svc.engine, org)}))
    if commands:
        result = await update_commands(svc.engine, org, parse_updates(body))
    else:
        result = await store_observations(svc.engine, org, parse_batch(body))
    return Reply(200, orjson.dumps(result.as_dict()))


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with pydantic's ``#/$defs/...`` references replaced by what they name."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inlined(v, defs) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_inlined(v, defs) for v in node]
    return node


def _schema(model: Any) -> dict[str, Any]:
    raw = model.model_json_schema()
    return _inlined({k: v for k, v in raw.items() if k != "$defs"}, raw.get("$defs", {}))


def _reply(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {"x-request-id": {"$ref": "#/components/headers/XRequestId"}},
        "content": {"application/json": {"schema": schema}},
    }


def openapi_paths() -> dict[str, Any]:
    """The path's entry in /openapi.json (``server/openapi.py`` adds it to the kinds' paths):
    the request body is the wire model's own JSON schema, so the two cannot differ."""
    body = _schema(ObservationBatch)
    names = {"type": "array", "items": {"type": "string"}}
    answer = {
        "type": "object",
        "required": ["stored", "unchanged", "missing"],
        "properties": {"stored": names, "unchanged": names, "missing": names},
    }
    errors = (400, 401, 403, 404, 405, 408, 413, 415, 429, 431, 500, 503)
    failures = {str(s): {"$ref": f"#/components/responses/Error{s}"} for s in errors}
    org = [{"name": "org", "in": "path", "required": True, "schema": {"type": "string"}}]
    listed = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array"}}}
    commands = {
        "parameters": org,
        "get": {
            "operationId": "listRuntimeCommands",
            "summary": "The org's commands still pending or running (Plinth's extension; server admin only)",
            "tags": ["runtime"],
            "responses": {"200": _reply("Pending and running commands", listed), **failures},
        },
        "post": {
            "operationId": "reportRuntimeCommands",
            "summary": "Report the lifecycle stage commands reached (Plinth's extension; server admin only)",
            "tags": ["runtime"],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _schema(CommandBatch)}}},
            "responses": {"200": _reply("Stored, unchanged and missing commands", answer), **failures},
        },
    }
    access = {
        "parameters": org,
        "post": {
            "operationId": "checkRuntimeAccess",
            "summary": "May the caller use a permission on an item; record what it does there (Plinth's extension)",
            "tags": ["runtime"],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _schema(AccessQuestion)}},
            },
            "responses": {
                "200": _reply(
                    "Allowed: the caller's principal",
                    {"type": "object", "required": ["principal"], "properties": {"principal": {"type": "string"}}},
                ),
                **failures,
            },
        },
    }
    return {
        runtime_access.PATH: access,
        COMMANDS_PATH: commands,
        PATH: {
            "parameters": [{"name": "org", "in": "path", "required": True, "schema": {"type": "string"}}],
            "post": {
                "operationId": "reportRuntimeObservations",
                "summary": "Report what the runtime controller observed (Plinth's extension; server admin only)",
                "tags": ["runtime"],
                "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                "responses": {
                    "200": _reply("Stored, unchanged and missing workloads", answer),
                    **{str(s): {"$ref": f"#/components/responses/Error{s}"} for s in errors},
                },
            },
        },
    }
