"""The ``components.schemas`` of the OpenAPI document, derived from the kind declarations.

Per kind ``K`` (component prefix :func:`schema_prefix`, e.g. ``VolumeSet``):

- ``K``: the item as served: the envelope, the kind's top-level fields, ``spec`` (the pydantic
  ``spec_model``'s own JSON Schema, its ``$defs`` hoisted into components) and a free-form
  ``status``;
- ``KCreate`` (POST and PUT on the collection: ``name`` required), ``KReplace`` (PUT on the
  item: ``name`` optional, must match the path) and ``KPatch`` (PATCH: see
  ``_openapi_partial``). Server-owned fields may be sent and are ignored, so that a GET's
  output can be PUT back;
- ``KList``, ``KQuery`` (the query body), ``KQueryResult``;
- ``KPermissions``: the answer of ``-schema/permissions`` (``engine/accessinfo.py``).

The bodies and answers of a kind's declared actions (``KindSpec.actions``: ``body`` and
``answer``) are their pydantic models' JSON Schemas, hoisted like the spec models under the
models' class names (``AddKeyRequest``, ``InviteRequest``, ``NewServiceAccountKey``,
``Invitations``); an answer model points at the shared components below by ``$ref``
(``kinds/actions.py``: ``Links``, ``component``).

Shared: ``Link``, ``Tags``, ``TagsInput``, ``ItemLinks``, ``Event``, ``EventList``, ``Error``,
the answer of the access report every kind has (``AccessReport``) and the bodies of the open
paths. Every name is checked for clashes with the hoisted model
names, so a kind whose model is called ``Link`` fails loudly instead of overwriting one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from plinth.auth.policy import MatchKind
from plinth.errors import APIError
from plinth.kinds.base import KindSpec, default_name_rule
from plinth.kinds.org import org_name_rule
from plinth.meta import (
    CLIENT_SETTABLE_RESERVED_TAGS,
    DESCRIPTION_MAX,
    NAME_MAX,
    NAME_PATTERN,
    RESERVED_TAG_PREFIX,
    SERVER_OWNED,
    TAGS_MAX,
)
from plinth.server._openapi_partial import PREFIX, Partials

Schema = dict[str, Any]
NULL: Schema = {"type": "null"}
_COMPONENT_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
SCALAR: Schema = {"type": ["string", "number", "boolean"]}
DATE_TIME: Schema = {"type": "string", "format": "date-time"}
IGNORED = "Server-owned: may be sent (so a GET's output can be PUT back) and is ignored."

COMMON_NAME: Schema = {"type": "string", "pattern": NAME_PATTERN.pattern, "maxLength": NAME_MAX}
#: JSON Schemas of the name rules in use. A kind with another rule gets a plain string here
#: (its rule still applies; the server answers 400); a ``name_schema`` on KindSpec would
#: let each kind declare its own.
NAME_SCHEMAS: Mapping[Callable[[str], str | None], Schema] = {
    default_name_rule: COMMON_NAME,
    org_name_rule: {**COMMON_NAME, "not": {"anyOf": [{"const": "index"}, {"pattern": "^xserve-"}]}},
}


def ref(name: str) -> Schema:
    return {"$ref": PREFIX + name}


def schema_prefix(kind: KindSpec) -> str:
    """The component-name stem of a kind: its title without spaces (``VolumeSet``, ``GVC``)."""
    return re.sub(r"[^A-Za-z0-9]", "", kind.presentation.title) or kind.name.capitalize()


def name_schema(kind: KindSpec) -> Schema:
    return dict(NAME_SCHEMAS.get(kind.schema.name_rule, {"type": "string", "minLength": 1}))


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, NULL]}


def _obj(properties: Schema, required: Iterable[str] = (), *, closed: bool = True, **extra: Any) -> Schema:
    out: Schema = {"type": "object", **extra, "properties": properties}
    req = [r for r in required if r in properties]
    if req:
        out["required"] = req
    if closed:
        out["additionalProperties"] = False
    return out


def _shared() -> dict[str, Schema]:
    """Kind-independent schemas."""
    link = _obj({"rel": {"type": "string"}, "href": {"type": "string"}}, ["rel", "href"])
    cpln = re.escape(RESERVED_TAG_PREFIX)
    tags_input = {
        "type": ["object", "null"],
        "description": (
            f"At most {TAGS_MAX} tags; values are strings, numbers or booleans (null removes a tag). Keys under "
            f"'{RESERVED_TAG_PREFIX}' are reserved, except {', '.join(sorted(CLIENT_SETTABLE_RESERVED_TAGS))} "
            "(and reserved tags the item already carries, sent back unchanged)."
        ),
        "maxProperties": TAGS_MAX,
        "propertyNames": {
            "minLength": 1,
            "anyOf": [{"not": {"pattern": f"^{cpln}"}}, {"enum": sorted(CLIENT_SETTABLE_RESERVED_TAGS)}],
        },
        "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
    }
    event_context = _obj(
        {
            "category": {"type": "string"},
            "link": {"type": "string"},
            "version": {"type": "integer"},
            "principalLink": {"type": "string"},
        },
        closed=False,
    )
    event = _obj(
        {
            "id": {"type": "string", "format": "uuid"},
            "kind": {"const": "event"},
            "created": DATE_TIME,
            "lastEventTime": DATE_TIME,
            "eventCount": {"type": "integer", "minimum": 1},
            "status": {"type": "string", "description": "What happened: created, updated, deleted."},
            "pinned": {"type": "boolean"},
            "context": event_context,
        },
        ["id", "kind", "created", "status"],
        closed=False,
    )
    codes = sorted({cls.code for cls in _error_classes()})
    error = _obj(
        {
            "status": {"type": "integer", "description": "The HTTP status, repeated."},
            "message": {"type": "string"},
            "code": {"type": "string", "enum": codes},
            "details": {"description": "Free-form; a 400 'invalid' carries {errors: [{path, message}]}."},
            "id": {"type": "string", "description": "The request id (also in x-request-id); quote it in reports."},
        },
        ["status", "message", "code", "id"],
    )
    return {
        **_action_answers(),
        "Link": link,
        "Tags": {"type": "object", "maxProperties": TAGS_MAX, "additionalProperties": SCALAR},
        "TagsInput": tags_input,
        "ItemLinks": _obj(
            {"kind": {"type": "string"}, "name": {"type": "string"}, "links": {"type": "array", "items": ref("Link")}},
            ["kind", "name", "links"],
            description="A query result entry when the query asked for fetch: links.",
        ),
        "Event": event,
        "EventList": _obj(
            {
                "kind": {"const": "list"},
                "itemKind": {"const": "event"},
                "items": {"type": "array", "items": ref("Event")},
                "links": {"type": "array", "items": ref("Link")},
            },
            ["kind", "itemKind", "items", "links"],
        ),
        "Error": error,
        "WatchEvent": _obj(
            {
                "type": {"type": "string", "enum": ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]},
                "resourceVersion": {
                    "type": "string",
                    "pattern": "^[A-Za-z0-9_-]{22}$",
                    "description": (
                        "Opaque. Resume after this event with ?resourceVersion= (SSE: the id, Last-Event-ID)."
                    ),
                },
                "object": {
                    "description": "The item as a GET shows it (DELETED: its last state); ERROR: the error body."
                },
                "initialEventsEnd": {"const": True, "description": "On the BOOKMARK after the initial items."},
            },
            ["type"],
            description="One event of a watch (?watch=true): a line of NDJSON, or an SSE event's data (docs/watch.md).",
        ),
        "Discovery": _obj(
            {
                "endpoints": {"type": "object", "additionalProperties": {"type": "string"}},
                "firebase": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            ["endpoints"],
            closed=False,
        ),
        "About": _obj({"name": {"type": "string"}, "version": {"type": "string"}, "store": {"type": "string"}}),
        "Health": _obj({"status": {"const": "ok"}}, ["status"]),
        "Readiness": _obj(
            {"status": {"enum": ["ready", "starting", "unavailable"]}, "message": {"type": "string"}}, ["status"]
        ),
    }


def _action_answers() -> dict[str, Schema]:
    """What the actions every kind has answer (``engine/accessinfo.py``); the answers of a kind's
    own actions are the models it declares (``KindAction.answer``)."""
    binding = _obj(
        {
            "principalLink": {"type": "string"},
            "grantingPolicyLink": {"type": "string"},
            "grantedPermissions": {"type": "array", "items": {"type": "string"}},
            "match": {"enum": list(get_args(MatchKind)), "description": "How the policy covers the item."},
        },
        ["principalLink", "grantingPolicyLink", "grantedPermissions", "match"],
    )
    permission = _obj(
        {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "bindings": {"type": "array", "items": binding},
        },
        ["name", "description", "bindings"],
    )
    report = {
        "kind": {"const": "accessreport"},
        "permissions": {"type": "array", "items": permission, "description": "Every permission of the kind."},
        "created": DATE_TIME,
        "links": {"type": "array", "items": ref("Link")},
    }
    return {"AccessReport": _obj(report, report, description="Who holds which permission on the item, and why.")}


def _error_classes() -> list[type[APIError]]:
    found: list[type[APIError]] = [APIError]
    for cls in found:
        found += [sub for sub in cls.__subclasses__() if sub not in found]
    return found


def error_codes() -> dict[int, list[str]]:
    """Every status an :class:`APIError` can carry, with its codes (500 is the catch-all)."""
    out: dict[int, list[str]] = {}
    for cls in _error_classes():
        out.setdefault(cls.status, [])
        if cls.code not in out[cls.status]:
            out[cls.status].append(cls.code)
    return out


class KindSchemas:
    """The schemas of every kind, built once per registry."""

    def __init__(self, kinds: Mapping[str, KindSpec]) -> None:
        self.kinds = kinds
        models: list[type[BaseModel]] = []
        for kind in kinds.values():
            declared = (
                kind.schema.spec_model,
                kind.schema.top_level_model,
                *(action.body for action in kind.actions),
                *(action.answer for action in kind.actions),
            )
            models += [m for m in declared if m is not None and m not in models]
        refs, top = models_json_schema(
            [(m, "validation") for m in models], by_alias=True, ref_template=PREFIX + "{model}"
        )
        self.defs: dict[str, Schema] = top.get("$defs", {})
        self.model_refs: dict[type[BaseModel], Schema] = {m: refs[(m, "validation")] for m in models}
        self.partials = Partials(self.defs)

    def body_name(self, model: type[BaseModel]) -> str:
        """The component name of a model an action declares (its body's or its answer's)."""
        return str(self.model_refs[model]["$ref"]).removeprefix(PREFIX)

    def _model(self, model: type[BaseModel]) -> Schema:
        """The hoisted definition behind a model's reference."""
        return self.defs[self.model_refs[model]["$ref"].removeprefix(PREFIX)]

    def _top_level(self, kind: KindSpec) -> tuple[Schema, list[str]]:
        if kind.schema.top_level_model is None:
            return {}, []
        model = self._model(kind.schema.top_level_model)
        return dict(model.get("properties", {})), list(model.get("required", []))

    def _spec(self, kind: KindSpec) -> Schema | None:
        return None if kind.schema.spec_model is None else dict(self.model_refs[kind.schema.spec_model])

    def item(self, kind: KindSpec) -> Schema:
        top, top_required = self._top_level(kind)
        props: Schema = {
            "id": {"type": "string", "format": "uuid"},
            "name": name_schema(kind),
            "kind": {"const": kind.name},
            "version": {"type": "integer", "minimum": 1, "description": "Goes up by one on every change."},
        }
        if kind.schema.has_description:
            props["description"] = {"type": "string", "maxLength": DESCRIPTION_MAX}
        if kind.schema.has_tags:
            props["tags"] = ref("Tags")
        props |= {"created": DATE_TIME, "lastModified": DATE_TIME}
        props["links"] = {"type": "array", "items": ref("Link"), "description": "self, org, gvc (GVC-scoped kinds)"}
        if kind.scope == "gvc":
            props["gvc"] = {"type": "string", "description": "The name of the parent GVC."}
        for key in sorted(kind.schema.server_fields):
            props[key] = {"description": "Set by the server."}
        props |= top
        spec = self._spec(kind)
        if spec is not None:
            props["spec"] = spec
        props["status"] = {"type": "object", "additionalProperties": True, "description": "Computed by the server."}
        required = [*props.keys() - {"gvc", *kind.schema.server_fields, *top}, *top_required]
        if kind.scope == "gvc":
            required.append("gvc")
        return _obj(props, sorted(required), title=kind.presentation.title)

    def _writable(self, kind: KindSpec, spec: Schema | None, *, patch: bool = False) -> Schema:
        """Fields a client sends in every write, plus the ignored server-owned ones.

        With ``patch``, the kind's top-level fields are patch-shaped (``_openapi_partial``).
        """
        props: Schema = {"name": name_schema(kind), "kind": {"const": kind.name}}
        if kind.schema.has_description:
            description = {
                "type": ["string", "null"],
                "maxLength": DESCRIPTION_MAX,
                "pattern": r"^(\S([\s\S]*\S)?)?$",
                "description": "No leading or trailing whitespace; empty or absent means the name.",
            }
            props["description"] = description
        if kind.schema.has_tags:
            props["tags"] = ref("TagsInput")
        if kind.scope == "gvc":
            props["gvc"] = {"type": "string", "description": "If sent: the GVC of the path (its name or link)."}
        top = self._top_level(kind)[0]
        props |= {k: self.partials.of(v) for k, v in top.items()} if patch else top
        if spec is not None:
            props["spec"] = spec
        elif kind.schema.spec_model is None:
            props["spec"] = {"anyOf": [NULL, {"type": "object", "maxProperties": 0}], "description": "No spec."}
        props["version"] = {
            "type": ["integer", "null"],
            "description": "Optional precondition: the write answers 409 unless the stored version equals it.",
        }
        for key in sorted((SERVER_OWNED - {"version"}) | kind.schema.server_fields):
            props[key] = {"description": IGNORED}
        return props

    def write(self, kind: KindSpec, *, name_required: bool) -> Schema:
        """The body of POST/PUT: a whole item (``name_required`` on the collection)."""
        spec = self._spec(kind)
        if spec is not None and not kind.schema.spec_required:
            spec = nullable(spec)
        props = self._writable(kind, spec)
        required = (["name"] if name_required else []) + (["spec"] if kind.schema.spec_required else [])
        where = "the collection" if name_required else "the item (a name, if sent, must match the path)"
        return _obj(props, required, description=f"A {kind.presentation.title} to write to {where}. {IGNORED}")

    def patch(self, kind: KindSpec) -> Schema:
        """The body of PATCH: a deep merge into the stored item (``engine/patch.py``)."""
        spec: Schema | None = None
        full_spec = self._spec(kind)
        if full_spec is not None:
            spec = self.partials.of(full_spec)
            if not kind.schema.spec_required:
                spec, full_spec = nullable(spec), nullable(full_spec)
        props = self._writable(kind, spec, patch=True)
        if kind.schema.has_tags:
            props["$replace/tags"] = ref("TagsInput")
            props["$drop/tags"] = {"type": "array", "items": {"type": "string"}, "description": "Tag keys to remove."}
        if full_spec is not None:
            props["$replace/spec"] = full_spec
        description = (
            "Merged into the stored item: objects merge, null removes a field, arrays replace; "
            "'$replace/f', '$append/f', '$drop/f' and '$patch/f' edit field f wholesale or by element "
            "('$replace/f' and a plain 'f' in the same object are a 400). " + IGNORED
        )
        return _obj(props, description=description)

    def query(self, kind: KindSpec) -> Schema:
        """The body of ``-query`` (``engine/querywire.py``), with the kind's queryable properties."""
        queryable = {
            "anyOf": [
                {"enum": list(kind.presentation.query_properties)},
                {"type": "string", "pattern": r"^(spec|status)(\.[A-Za-z0-9_$@-]+)+$"},
            ]
        }
        subjects: list[Schema] = [
            {"required": ["property"], "properties": {"property": queryable}},
            {"required": ["tag"], "properties": {"tag": {"type": "string", "minLength": 1}}},
        ]
        props: Schema = {
            "op": {"enum": ["=", "!=", ">", ">=", "<", "<=", "~", "=~", "contains", "exists", "!exists"]},
            "property": {"type": "string"},
            "tag": {"type": "string"},
            "value": {"type": ["string", "number", "boolean", "null"]},
        }
        if kind.scope == "gvc":
            props["rel"] = {"const": "gvc"}
            subjects.append({"required": ["rel"], "properties": {"op": {"enum": ["=", "!="]}}})
        term = _obj(props, description="Exactly one of property, rel, tag; value unless op is exists or !exists.")
        term["oneOf"] = subjects
        term["anyOf"] = [
            {"required": ["value"]},
            {"required": ["op"], "properties": {"op": {"enum": ["exists", "!exists"]}}},
        ]
        spec = _obj(
            {
                "match": {"enum": ["all", "any", "none"]},
                "terms": {"type": ["array", "null"], "items": term},
                "sort": {
                    "type": ["object", "null"],
                    "properties": {"by": queryable, "order": {"enum": ["asc", "desc"]}},
                    "required": ["by"],
                },
            }
        )
        return _obj(
            {
                "kind": {"description": "Any value, ignored: the path names the kind (some clients send junk)."},
                "context": {"type": ["object", "null"], "description": "Accepted and ignored."},
                "fetch": {"enum": ["items", "links"]},
                "spec": nullable(spec),
            }
        )

    def components(self) -> dict[str, Schema]:
        """Every schema, by component name; raises ``ValueError`` on a clash or a bad name."""
        out: dict[str, Schema] = {}

        def add(name: str, schema: Schema) -> None:
            if name in out or not _COMPONENT_NAME.match(name):
                raise ValueError(f"OpenAPI component name '{name}' clashes or is not a valid name")
            out[name] = schema

        for name, schema in self.defs.items():
            add(name, schema)
        for name, schema in self.partials.all().items():
            add(name, schema)
        for name, schema in _shared().items():
            add(name, schema)
        for kind in self.kinds.values():
            p = schema_prefix(kind)
            add(p, self.item(kind))
            add(f"{p}Create", self.write(kind, name_required=True))
            add(f"{p}Replace", self.write(kind, name_required=False))
            add(f"{p}Patch", self.patch(kind))
            add(f"{p}List", self._list(kind, "list", ref(p)))
            add(f"{p}Query", self.query(kind))
            result = self._list(kind, "queryresult", {"anyOf": [ref(p), ref("ItemLinks")]})
            result["properties"]["query"] = ref(f"{p}Query")
            result["required"].append("query")
            add(f"{p}QueryResult", result)
            if kind.access.permissions:
                add(f"{p}Permissions", self.permissions(kind))
        return out

    def permissions(self, kind: KindSpec) -> Schema:
        """The answer of ``-schema/permissions``: the kind's permissions and their implications."""
        names: Schema = {"enum": sorted(kind.access.permissions)}
        entry = _obj({"name": names, "description": {"type": "string"}}, ["name", "description"])
        props = {
            "kind": {"const": "permissions"},
            "targetKind": {"const": kind.name},
            "items": {"type": "array", "items": entry},
            "implied": {
                "type": "object",
                "propertyNames": names,
                "additionalProperties": {"type": "array", "items": names},
                "description": "Permission -> the permissions it grants too (manage lists itself).",
            },
            "links": {"type": "array", "items": ref("Link")},
        }
        return _obj(props, props)

    def _list(self, kind: KindSpec, list_kind: str, item: Schema) -> Schema:
        return _obj(
            {
                "kind": {"const": list_kind},
                "itemKind": {"const": kind.name},
                "items": {"type": "array", "items": item},
                "links": {"type": "array", "items": ref("Link"), "description": "self; next when more items exist"},
            },
            ["kind", "itemKind", "items", "links"],
        )
