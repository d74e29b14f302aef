"""``paths`` of the OpenAPI document: every route ``server/routes.py`` serves, for every kind.

Path shapes follow ``engine/requestinfo.py``; which methods exist follows the kind's
``verbs`` exactly as the router and engine check them:

- ``list``: GET on the collection (and, for GVC-scoped kinds, the org-wide listing
  ``/org/{org}/{kind}``) and the ``-query`` endpoints (POST a query, GET to continue one);
- ``create``: POST on the collection; ``replace``: PUT on the collection and on the item;
  ``get``, ``patch``, ``delete``: GET, PATCH, DELETE on the item;
- ``-eventlog`` and ``-accessreport`` on every item, whatever the verbs (the router does not
  check them), and ``-schema/permissions`` on the collection of every kind with permissions
  (the org's at ``/org/{org}/org/-schema/permissions``; a GVC-scoped kind's at the org level);
- the kind's own actions and sub-resources (``KindSpec.actions``): ``-addKey``, ``-invite``,
  ``-for/email/{email}``, a workload's ``deployment[/{location}]`` and ``-command[/{id}]``.

Responses name the real statuses: 201 with ``Location`` for a POST create and a PUT that
created, 200 for updates and for every ``dryRun`` write, 202 with no body for DELETE, an
action's declared status (201 with no ``Location`` for ``-addKey``: it creates no item);
every response carries ``x-request-id``; errors share the ``Error`` body.
"""

from __future__ import annotations

from typing import Any

from plinth.engine.paging import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from plinth.kinds.base import KindAction, KindSpec
from plinth.server._openapi_schemas import COMMON_NAME, KindSchemas, name_schema, ref, schema_prefix

Schema = dict[str, Any]
Operation = dict[str, Any]
PathItem = dict[str, Any]

#: Errors every authenticated operation may answer: 408 and 431 come from the connection guard
#: (``server/protocol.py``) before any routing, 429 from the rate limit.
COMMON_ERRORS = (401, 403, 404, 408, 429, 431, 500, 503)
PAGED_ERRORS = (400, *COMMON_ERRORS)
BODY_ERRORS = (400, 413, 415, *COMMON_ERRORS)
WRITE_ERRORS = (400, 409, 413, 415, *COMMON_ERRORS)
DELETE_ERRORS = (409, *COMMON_ERRORS)


#: The spellings of a boolean query parameter the server accepts (``server/http.py``, ``Request.flag``).
FLAG_PATTERN = "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|1|0)$"


def _param(name: str) -> Schema:
    return {"$ref": f"#/components/parameters/{name}"}


def parameters() -> dict[str, Schema]:
    """The shared query parameters (``engine/paging.py``, ``server/routes.py``)."""
    return {
        "Limit": {
            "name": "limit",
            "in": "query",
            "description": "Page size (empty: the default).",
            "allowEmptyValue": True,
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE, "default": DEFAULT_PAGE_SIZE},
        },
        "Cursor": {
            "name": "cursor",
            "in": "query",
            "description": "Opaque continuation token, from the href of a 'next' link (empty: the first page).",
            "allowEmptyValue": True,
            "schema": {"type": "string"},
        },
        "QueryCursor": {
            "name": "cursor",
            "in": "query",
            "required": True,
            "description": "The token of a query result's 'next' link; it carries the query itself.",
            "schema": {"type": "string", "minLength": 1},
        },
        "Watch": {
            "name": "watch",
            "in": "query",
            "description": (
                "true: answer with a stream of change events (WatchEvent) instead of a page: NDJSON, or "
                "Server-Sent Events with Accept: text/event-stream (docs/watch.md)."
            ),
            "allowEmptyValue": True,
            "schema": {"anyOf": [{"type": "boolean"}, {"type": "string", "pattern": FLAG_PATTERN}]},
        },
        "ResourceVersion": {
            "name": "resourceVersion",
            "in": "query",
            "description": (
                "With watch: start right after this version (an event's or a bookmark's, opaque); 410 "
                "list_again when the change log no longer holds what follows it (or for a bare number, a "
                "version from before versions were sealed). Without: start now."
            ),
            "schema": {"type": "string", "pattern": "^([A-Za-z0-9_-]{22}|[0-9]{1,19})$"},
        },
        "SendInitialEvents": {
            "name": "sendInitialEvents",
            "in": "query",
            "description": (
                "With watch: first send the current items as ADDED, then a BOOKMARK with initialEventsEnd."
            ),
            "allowEmptyValue": True,
            "schema": {"anyOf": [{"type": "boolean"}, {"type": "string", "pattern": FLAG_PATTERN}]},
        },
        "LastEventId": {
            "name": "Last-Event-ID",
            "in": "header",
            "description": "With watch: as resourceVersion (what a browser's EventSource sends when it reconnects).",
            "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
        },
        "DryRun": {
            "name": "dryRun",
            "in": "query",
            "description": (
                "Validate and answer with the resulting item (200) without saving it. true/false in any case, "
                "1/0, yes/no; an empty value (?dryRun) is true; anything else is a 400."
            ),
            "allowEmptyValue": True,
            "schema": {"anyOf": [{"type": "boolean"}, {"type": "string", "pattern": FLAG_PATTERN}]},
        },
    }


def headers() -> dict[str, Schema]:
    return {
        "XRequestId": {
            "description": "The request id (a client-sent x-request-id of 1-64 letters, digits and '-', or a new one).",
            "schema": {"type": "string"},
        },
        "Location": {"description": "The link of the created item.", "schema": {"type": "string"}},
        "RetryAfter": {
            "description": "Whole seconds until the caller's rate limit lets a request through again.",
            "required": True,
            "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
        },
    }


#: The watch parameters of a list and of a query (``server/watch_stream.py``).
WATCH_PARAMS = ("Watch", "ResourceVersion", "SendInitialEvents", "LastEventId")
#: A watch may also answer 410 (list again) and 429 (too many watches); the stream's ERROR
#: events carry the usual error body.
WATCH_ERRORS = (410,)


def _watchable(reply: Schema) -> Schema:
    """``reply`` (a page) that also answers a watch: NDJSON or SSE events."""
    reply["content"]["application/x-ndjson"] = {"schema": ref("WatchEvent")}
    reply["content"]["text/event-stream"] = {
        "schema": {"type": "string", "description": "id: <resourceVersion>, event: <type>, data: <WatchEvent>"}
    }
    reply["description"] += "; with watch=true, a stream of WatchEvent"
    return reply


def _reply(description: str, schema: str | None = None, location: bool = False) -> Schema:
    out: Schema = {"description": description, "headers": {"x-request-id": {"$ref": "#/components/headers/XRequestId"}}}
    if location:
        out["headers"]["Location"] = {"$ref": "#/components/headers/Location"}
    if schema is not None:
        out["content"] = {"application/json": {"schema": ref(schema)}}
    return out


def error_responses(codes: dict[int, list[str]]) -> dict[str, Schema]:
    """``Error{status}`` for every status the error vocabulary has, its codes narrowed."""
    out: dict[str, Schema] = {}
    for status, names in sorted(codes.items()):
        narrowed = {"allOf": [ref("Error"), {"properties": {"status": {"const": status}, "code": {"enum": names}}}]}
        reply = _reply(f"Error ({', '.join(names)})")
        reply["content"] = {"application/json": {"schema": narrowed}}
        if status == 429:
            reply["headers"]["Retry-After"] = {"$ref": "#/components/headers/RetryAfter"}
        out[f"Error{status}"] = reply
    return out


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


class KindPaths:
    """The path items of one kind; ``statuses`` are the error statuses that exist, ``schemas``
    name the components (the bodies of the kind's actions)."""

    def __init__(self, kind: KindSpec, statuses: frozenset[int], schemas: KindSchemas) -> None:
        self.kind = kind
        self.statuses = statuses
        self.schemas = schemas
        self.prefix = schema_prefix(kind)
        self.cap = kind.name.capitalize()

    def _op(
        self,
        op_id: str,
        summary: str,
        ok: dict[str, Schema],
        errors: tuple[int, ...],
        params: tuple[str, ...] = (),
        body: str | None = None,
        body_required: bool = True,
    ) -> Operation:
        op: Operation = {"operationId": op_id, "summary": summary, "tags": [self.kind.presentation.title]}
        op["x-plinth-kind"] = self.kind.name
        if params:
            op["parameters"] = [_param(p) for p in params]
        if body is not None:
            op["requestBody"] = {"required": body_required, "content": {"application/json": {"schema": ref(body)}}}
        failures = {str(s): {"$ref": f"#/components/responses/Error{s}"} for s in errors if s in self.statuses}
        op["responses"] = {**ok, **failures}
        return op

    def _path_params(self, *names: str, item: bool = False) -> list[Schema]:
        out = [{"name": n, "in": "path", "required": True, "schema": _segment()} for n in names]
        if item:
            out.append({"name": "name", "in": "path", "required": True, "schema": name_schema(self.kind)})
        return out

    def _collection(self, params: list[Schema], in_org: bool = False) -> PathItem:
        k, p, verbs = self.kind, self.prefix, self.kind.access.verbs
        path: PathItem = {"parameters": params}
        if "list" in verbs:
            suffix = "InOrg" if in_org else ""
            where = " across every GVC of the org" if in_org else ""
            path["get"] = self._op(
                f"list{plural(self.cap)}{suffix}",
                f"List {plural(k.presentation.title)}{where}",
                {"200": _watchable(_reply("A page of items", f"{p}List"))},
                (*PAGED_ERRORS, *WATCH_ERRORS),
                ("Limit", "Cursor", *WATCH_PARAMS),
            )
        if in_org:
            return path
        written = _reply(f"The {k.presentation.title} (dryRun)", p)
        created = _reply(f"Created; Location links to the new {k.presentation.title}", p, location=True)
        if "create" in verbs:
            path["post"] = self._op(
                f"create{self.cap}",
                f"Create a {k.presentation.title}",
                {"200": written, "201": created},
                WRITE_ERRORS,
                ("DryRun",),
                f"{p}Create",
            )
            if k.scope == "root":
                path["post"]["description"] = "Needs the server-admin right (the bootstrap key); 403 otherwise."
        if "replace" in verbs:
            updated = _reply(f"Updated, unchanged, or dryRun: the {k.presentation.title}", p)
            path["put"] = self._op(
                f"apply{self.cap}",
                f"Create or replace a {k.presentation.title} named in the body (apply)",
                {"200": updated, "201": created},
                WRITE_ERRORS,
                ("DryRun",),
                f"{p}Create",
            )
        return path

    def _item(self, params: list[Schema]) -> PathItem:
        k, p, verbs = self.kind, self.prefix, self.kind.access.verbs
        path: PathItem = {"parameters": params}
        item = _reply(f"The {k.presentation.title}", p)
        if "get" in verbs:
            path["get"] = self._op(f"get{self.cap}", f"Get a {k.presentation.title}", {"200": item}, COMMON_ERRORS)
        if "replace" in verbs:
            created = _reply(f"Created; Location links to the new {k.presentation.title}", p, location=True)
            path["put"] = self._op(
                f"replace{self.cap}",
                f"Create or replace a {k.presentation.title}",
                {"200": item, "201": created},
                WRITE_ERRORS,
                ("DryRun",),
                f"{p}Replace",
            )
        if "patch" in verbs:
            path["patch"] = self._op(
                f"patch{self.cap}",
                f"Update a {k.presentation.title} (deep merge)",
                {"200": item},
                WRITE_ERRORS,
                ("DryRun",),
                f"{p}Patch",
            )
        if "delete" in verbs:
            path["delete"] = self._op(
                f"delete{self.cap}",
                f"Delete a {k.presentation.title}",
                {"202": _reply("Deleted (no body)")},
                DELETE_ERRORS,
            )
        return path

    def _query(self, params: list[Schema], suffix: str = "") -> PathItem:
        k, p = self.kind, self.prefix
        result = {"200": _reply("A page of matching items", f"{p}QueryResult")}
        watched = {"200": _watchable(_reply("A page of matching items", f"{p}QueryResult"))}
        post = self._op(
            f"query{self.cap}{suffix}",
            f"Query {plural(k.presentation.title)}",
            watched,
            (*BODY_ERRORS, *WATCH_ERRORS),
            ("Limit", *WATCH_PARAMS),
            f"{p}Query",
            # No body is the empty query (every item): the official CLI's `get` sends none.
            body_required=False,
        )
        get = self._op(
            f"continueQuery{self.cap}{suffix}",
            f"The next page of a {k.presentation.title} query",
            result,
            PAGED_ERRORS,
            ("Limit", "QueryCursor"),
        )
        return {"parameters": params, "post": post, "get": get}

    def _eventlog(self, params: list[Schema]) -> PathItem:
        ok = {"200": _reply("A page of events, oldest first", "EventList")}
        op = self._op(f"get{self.cap}Eventlog", f"The event log of a {self.kind.presentation.title}", ok, PAGED_ERRORS)
        op["parameters"] = [_param("Limit"), _param("Cursor")]
        return {"parameters": params, "get": op}

    def _access_report(self, params: list[Schema]) -> PathItem:
        ok = {"200": _reply("Every permission of the kind, with the policies that grant it", "AccessReport")}
        op = self._op(
            f"get{self.cap}AccessReport", f"Who may do what to a {self.kind.presentation.title}", ok, COMMON_ERRORS
        )
        op["description"] = "Needs view on the item."
        return {"parameters": params, "get": op}

    def _permissions(self, params: list[Schema]) -> PathItem:
        ok = {"200": _reply("The permissions and their implications", f"{self.prefix}Permissions")}
        summary = f"The permissions a policy may grant on {plural(self.kind.presentation.title)}"
        return {"parameters": params, "get": self._op(f"get{self.cap}PermissionSchema", summary, ok, COMMON_ERRORS)}

    def _action(self, action: KindAction, params: list[Schema]) -> PathItem:
        """A declared action; each ``{x}`` of its path is a string parameter."""
        extra = [
            {"name": seg[1:-1], "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
            for seg in action.path.split("/")
            if seg.startswith("{") and seg.endswith("}")
        ]
        answer = action.response or (self.prefix if action.answer is None else self.schemas.body_name(action.answer))
        ok = {str(action.status): _reply(action.summary, answer)}
        body = None if action.body is None else self.schemas.body_name(action.body)
        errors = BODY_ERRORS if body is not None else COMMON_ERRORS
        op = self._op(action.operation_id, action.summary, ok, errors, body=body)
        return {"parameters": params + extra, action.method.lower(): op}

    def paths(self) -> dict[str, PathItem]:
        k = self.kind
        out: dict[str, PathItem] = {}
        if k.scope == "root":
            base, base_params, item_params = "/org", [], [_org_as_name(k)]
            out["/org"] = self._collection([])
            out["/org/{org}"] = self._item(item_params)
            out["/org/{org}/-eventlog"] = self._eventlog(item_params)
            out["/org/{org}/-accessreport"] = self._access_report(item_params)
            # Orgs do not nest: the org kind's permissions are where every kind's are, under an org.
            kind_params = self._path_params("org")
            item = "/org/{org}"
        elif k.scope == "org":
            base = f"/org/{{org}}/{k.name}"
            item, item_params, kind_params = (
                base + "/{name}",
                self._path_params("org", item=True),
                self._path_params("org"),
            )
            base_params = kind_params
            out[base] = self._collection(kind_params)
            if "list" in k.access.verbs:
                out[base + "/-query"] = self._query(kind_params)
        else:
            base = f"/org/{{org}}/gvc/{{gvc}}/{k.name}"
            item, item_params, kind_params = (
                base + "/{name}",
                self._path_params("org", "gvc", item=True),
                self._path_params("org"),
            )
            base_params = self._path_params("org", "gvc")
            out[base] = self._collection(base_params)
            if "list" in k.access.verbs:
                out[f"/org/{{org}}/{k.name}"] = self._collection(kind_params, in_org=True)
                out[f"/org/{{org}}/{k.name}/-query"] = self._query(kind_params)
                out[base + "/-query"] = self._query(self._path_params("org", "gvc"), "InGvc")
        if k.scope != "root":
            out[item] = self._item(item_params)
            out[item + "/-eventlog"] = self._eventlog(item_params)
            out[item + "/-accessreport"] = self._access_report(item_params)
        if k.access.permissions:
            out[f"/org/{{org}}/{k.name}/-schema/permissions"] = self._permissions(kind_params)
        for action in k.actions:
            if k.scope == "root" and not action.on_item:
                raise ValueError(f"{k.name}: the router serves no action on /org itself ({action.path})")
            where, params = (item, item_params) if action.on_item else (base, base_params)
            path_item = self._action(action, params)
            # Two actions may share a path with different methods (GET and POST ``-command``).
            out[f"{where}/{action.path}"] = {**out.get(f"{where}/{action.path}", {}), **path_item}
        return {path: item for path, item in out.items() if set(item) - {"parameters"}}


def _segment() -> Schema:
    """An org or GVC name in a path (the common name rule)."""
    return dict(COMMON_NAME)


def _org_as_name(kind: KindSpec) -> Schema:
    return {"name": "org", "in": "path", "required": True, "schema": name_schema(kind)}


def system_paths() -> dict[str, PathItem]:
    """The open paths (``server/system.py``): no credentials needed."""

    def get(op_id: str, summary: str, ok: dict[str, Schema], probe: bool = False) -> PathItem:
        op = {"operationId": op_id, "summary": summary, "tags": ["system"], "security": []}
        # Health probes are never rate limited (server/app.py); the other open paths are, per address.
        errors = (408, 431, 500) if probe else (408, 429, 431, 500)
        failures = {str(s): {"$ref": f"#/components/responses/Error{s}"} for s in errors}
        return {"get": {**op, "responses": {**ok, **failures}}}

    openapi = _reply("This document")
    openapi["content"] = {"application/json": {"schema": {"type": "object"}}}
    return {
        "/discovery": get("getDiscovery", "Service endpoints", {"200": _reply("Endpoints", "Discovery")}),
        "/about": get("getAbout", "Server name, version and store", {"200": _reply("About", "About")}),
        "/healthz": get("getHealth", "Liveness", {"200": _reply("Alive", "Health")}, probe=True),
        "/readyz": get(
            "getReadiness",
            "Readiness: the store answers",
            {"200": _reply("Ready", "Readiness"), "503": _reply("Not ready", "Readiness")},
            probe=True,
        ),
        "/openapi.json": get("getOpenApi", "This OpenAPI document", {"200": openapi}),
    }
