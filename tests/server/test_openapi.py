"""``/openapi.json``: valid OpenAPI 3.1, complete for every registered kind, and true.

"Complete" is derived from the registry (scope and verbs), never from a list written here.
"True" is checked two ways: items built by the real write pipeline validate against the
documented schemas, and every documented operation is called on the real ASGI app, with
each answer's status, headers and body checked against the document (a small, deterministic
cousin of what schemathesis does).
"""

from __future__ import annotations

import asyncio
import copy
import string
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from bench.workload_spec import realistic_spec
from plinth.engine.pipeline import build_candidate
from plinth.engine.render import client_view, finish_item
from plinth.kinds import REGISTRY
from plinth.kinds.actions import ActionContext, Answer
from plinth.kinds.base import Item, KindAction, KindContext, KindSpec
from plinth.kinds.serviceaccount import AddKeyRequest
from plinth.server.openapi import build_document, openapi_document

ORG = "acme"
NOW = "2025-01-02T03:04:05.678Z"
METHODS = ("get", "put", "post", "patch", "delete")
DOC_URI = "urn:plinth:openapi"

#: Fuller bodies for kinds known today, to exercise more of each schema than the minimal
#: body derived from it. A kind missing here is still covered by the derived body.
RICH_SPECS: dict[str, dict[str, Any]] = {
    "workload": realistic_spec(),
    "org": {
        "sessionTimeoutSeconds": 900,
        "logging": {"s3": {"bucket": "logs", "region": "us-east-1", "credentials": "//secret/s3"}},
        "observability": {"logsRetentionDays": 30, "defaultAlertEmails": ["ops@example.com"]},
        "security": {"threatDetection": {"enabled": True, "minimumSeverity": "warning"}},
        "tracing": {"sampling": 12.5, "provider": {"otel": {"endpoint": "otel:4317"}}},
    },
    "gvc": {
        # The one location the workload's deployment and command examples name.
        "staticPlacement": {"locationLinks": ["//location/aws-us-east-1"]},
        "loadBalancer": {"dedicated": True, "redirect": {"class": {"status5xx": "https://example.com"}}},
        "env": [{"name": "A", "value": "1"}],
        "endpointNamingFormat": "org",
    },
    "volumeset": {
        "initialCapacity": 20,
        "snapshots": {"retentionDuration": "7d", "schedule": "0 1 * * *"},
        "autoscaling": {
            "maxCapacity": 100,
            "minFreePercentage": 10,
            "scalingFactor": 2,
            "predictive": {"enabled": True},
        },
    },
}


# -- the document, and resolving references in it ----------------------------------------


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return orjson.loads(openapi_document(REGISTRY))


def _registry(doc: dict[str, Any]) -> Registry:
    return Registry().with_resource(DOC_URI, Resource.from_contents(doc, default_specification=DRAFT202012))


def validator(doc: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for ``schema``, whose ``#/components/...`` refs point into ``doc``."""
    rooted = orjson.loads(orjson.dumps(schema).replace(b'"#/components/', f'"{DOC_URI}#/components/'.encode()))
    return Draft202012Validator(rooted, registry=_registry(doc))


def component(doc: dict[str, Any], name: str) -> Draft202012Validator:
    return validator(doc, {"$ref": f"#/components/schemas/{name}"})


def resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from walk_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk_refs(value)


#: The runtime controller's paths (``server/runtime_reports.py``): served for no kind.
RUNTIME_REPORTS = "/org/{org}/-runtime/observations"
RUNTIME_COMMANDS = "/org/{org}/-runtime/commands"
RUNTIME_ACCESS = "/org/{org}/-runtime/access"


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def prefix(doc: dict[str, Any], kind: KindSpec) -> str:
    """The component stem of a kind, read from the document (its item schema's title)."""
    (name,) = [n for n, s in doc["components"]["schemas"].items() if s.get("title") == kind.presentation.title]
    return name


# -- what the registry says must be there --------------------------------------------------


def expected_operations(kind: KindSpec) -> set[tuple[str, str]]:
    """(path, method) pairs the router serves for ``kind``, from its scope and verbs."""
    verbs = kind.access.verbs
    if kind.scope == "root":
        collection, item, org_wide = "/org", "/org/{org}", None
    elif kind.scope == "org":
        collection, item, org_wide = f"/org/{{org}}/{kind.name}", f"/org/{{org}}/{kind.name}/{{name}}", None
    else:
        collection = f"/org/{{org}}/gvc/{{gvc}}/{kind.name}"
        item, org_wide = f"{collection}/{{name}}", f"/org/{{org}}/{kind.name}"
    out = {(item + "/-eventlog", "get"), (item + "/-accessreport", "get")}
    if kind.access.permissions:
        out.add((f"/org/{{org}}/{kind.name}/-schema/permissions", "get"))
    for action in kind.actions:
        out.add((f"{item if action.on_item else collection}/{action.path}", action.method.lower()))
    by_verb = {"list": [(collection, "get")], "create": [(collection, "post")], "get": [(item, "get")]}
    by_verb |= {"replace": [(collection, "put"), (item, "put")], "patch": [(item, "patch")]}
    by_verb["delete"] = [(item, "delete")]
    for verb, pairs in by_verb.items():
        if verb in verbs:
            out |= set(pairs)
    if "list" in verbs and kind.scope != "root":
        queries = [f"/org/{{org}}/{kind.name}/-query"]
        if org_wide is not None:
            out.add((org_wide, "get"))
            queries.append(f"{collection}/-query")
        out |= {(q, m) for q in queries for m in ("get", "post")}
    return out


def test_the_document_is_valid_openapi_3_1(doc: dict[str, Any]) -> None:
    assert doc["openapi"].startswith("3.1")
    validate_spec(doc)


def test_every_kind_has_exactly_its_paths_and_operations(doc: dict[str, Any]) -> None:
    for kind in REGISTRY.values():
        documented = {(p, m) for p, m, op in operations(doc) if op.get("x-plinth-kind") == kind.name}
        assert documented == expected_operations(kind), kind.name


def test_every_list_and_query_documents_its_watch(doc: dict[str, Any]) -> None:
    """?watch=true on lists and POST -query (docs/watch.md): its parameters, 410 and the two
    stream encodings of WatchEvent."""
    watchable = [
        op
        for path, method, op in operations(doc)
        if (method, op["operationId"][:4]) in (("get", "list"), ("post", "quer"))
        and "{name}" not in path
        # a kind's own actions (a secret's -for/type/{type}) are not lists
        and all(not part.startswith("-") or part == "-query" for part in path.split("/"))
    ]
    assert len(watchable) > 2 * len(REGISTRY) - 5
    for op in watchable:
        names = {p["$ref"].rsplit("/", 1)[-1] for p in op["parameters"]}
        assert {"Watch", "ResourceVersion", "SendInitialEvents", "LastEventId"} <= names, op["operationId"]
        assert "410" in op["responses"], op["operationId"]
        content = op["responses"]["200"]["content"]
        assert content["application/x-ndjson"]["schema"] == {"$ref": "#/components/schemas/WatchEvent"}
        assert "text/event-stream" in content
    assert doc["components"]["responses"]["Error410"]["content"]["application/json"]["schema"]["allOf"][1][
        "properties"
    ]["code"] == {"enum": ["list_again"]}


def test_a_kind_with_fewer_verbs_gets_fewer_operations() -> None:
    base = next(k for k in REGISTRY.values() if k.scope == "gvc")
    widget = replace(
        base,
        name="widget",
        presentation=replace(base.presentation, title="Widget"),
        access=replace(base.access, verbs=frozenset({"get", "list"})),
    )
    built = build_document({**REGISTRY, "widget": widget})
    validate_spec(built)
    documented = {(p, m) for p, m, op in operations(built) if op.get("x-plinth-kind") == "widget"}
    assert documented == expected_operations(widget)
    assert "/org/{org}/gvc/{gvc}/widget/{name}" in built["paths"]
    assert "post" not in built["paths"]["/org/{org}/gvc/{gvc}/widget"]


def test_the_action_endpoints_are_documented(doc: dict[str, Any]) -> None:
    """The actions ``server/routes.py`` serves beyond the verbs, each with its body and answer."""
    schemas = "#/components/schemas/"
    expected = {
        ("/org/{org}/serviceaccount/{name}/-addKey", "post"): ("201", "AddKeyRequest", "NewServiceAccountKey"),
        ("/org/{org}/user/-invite", "post"): ("200", "InviteRequest", "Invitations"),
        ("/org/{org}/user/-for/email/{email}", "get"): ("200", None, "User"),
        ("/org/{org}/org/-schema/permissions", "get"): ("200", None, "OrgPermissions"),
        ("/org/{org}/-accessreport", "get"): ("200", None, "AccessReport"),
        ("/org/{org}/gvc/{gvc}/volumeset/{name}/-accessreport", "get"): ("200", None, "AccessReport"),
        ("/org/{org}/volumeset/-schema/permissions", "get"): ("200", None, "VolumeSetPermissions"),
    }
    for (path, method), (status, body, answer) in expected.items():
        op = doc["paths"][path][method]
        assert [s for s in op["responses"] if s < "400"] == [status], path
        assert op["responses"][status]["content"]["application/json"]["schema"] == {"$ref": schemas + answer}
        assert "x-plinth-kind" in op
        if body is None:
            assert "requestBody" not in op and set(op["responses"]) >= {"401", "403", "404"}
        else:
            assert op["requestBody"]["content"]["application/json"]["schema"] == {"$ref": schemas + body}
            assert {"400", "413", "415"} <= set(op["responses"]), path
    # The bodies are the models the actions validate with, trim rule included.
    add_key = component(doc, "AddKeyRequest")
    assert list(add_key.iter_errors({"description": "ci"})) == []
    assert list(add_key.iter_errors({"description": " ci"})) and list(add_key.iter_errors({}))
    assert list(component(doc, "InviteRequest").iter_errors({"emails": []}))


async def _unserved(ctx: ActionContext) -> Answer:
    """The handler of actions only the document is built from."""
    raise AssertionError("never called")


def test_a_gvc_scoped_kind_gets_its_declared_actions_under_its_gvc() -> None:
    base = next(k for k in REGISTRY.values() if k.scope == "gvc")
    poke = KindAction(
        operation_id="pokeWidgets", method="POST", path="-poke", summary="Poke", handler=_unserved, body=AddKeyRequest
    )
    probe = KindAction(
        operation_id="probeWidget",
        method="GET",
        path="-probe/{depth}",
        summary="Probe",
        handler=_unserved,
        on_item=True,
    )
    widget = replace(
        base, name="widget", presentation=replace(base.presentation, title="Widget"), actions=(poke, probe)
    )
    built = build_document({**REGISTRY, "widget": widget})
    validate_spec(built)  # every {param} of a path is declared
    documented = {(p, m) for p, m, op in operations(built) if op.get("x-plinth-kind") == "widget"}
    assert documented == expected_operations(widget)
    assert {"/org/{org}/gvc/{gvc}/widget/-poke", "/org/{org}/gvc/{gvc}/widget/{name}/-probe/{depth}"} <= set(
        built["paths"]
    )


def test_the_bytes_are_computed_once_per_registry() -> None:
    first = openapi_document(REGISTRY)
    assert openapi_document(REGISTRY) is first
    assert openapi_document(dict(REGISTRY)) is first  # the same declarations
    first_kind = next(iter(REGISTRY.values()))
    widget = replace(
        first_kind, name="widget", presentation=replace(first_kind.presentation, title="Widget"), scope="org"
    )
    grown = openapi_document({**REGISTRY, "widget": widget})
    assert grown is not first and b"/org/{org}/widget" in grown


def test_operation_ids_are_unique_and_readable(doc: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in operations(doc)]
    assert len(ids) == len(set(ids))
    assert all(i[0].islower() and i.isalnum() for i in ids)
    for kind in REGISTRY.values():
        cap = kind.name.capitalize()
        if "get" in kind.access.verbs:
            assert f"get{cap}" in ids
        if "create" in kind.access.verbs:
            assert f"create{cap}" in ids
        if "list" in kind.access.verbs and kind.scope != "root":
            assert f"query{cap}" in ids
        assert f"get{cap}AccessReport" in ids and f"get{cap}PermissionSchema" in ids
        assert {action.operation_id for action in kind.actions} <= set(ids)


def test_every_ref_resolves(doc: dict[str, Any]) -> None:
    refs = set(walk_refs(doc))
    assert refs
    for ref in refs:
        assert ref.startswith("#/"), ref
        assert resolve(doc, {"$ref": ref}) is not None


def test_security_bearer_everywhere_except_the_open_paths(doc: dict[str, Any]) -> None:
    scheme = doc["components"]["securitySchemes"]["bearer"]
    assert scheme == {**scheme, "type": "http", "scheme": "bearer"}
    assert doc["security"] == [{"bearer": []}]
    for path, _, op in operations(doc):
        open_path = not path.startswith("/org")
        assert ("security" in op and op["security"] == []) == open_path, path
        if not open_path:
            assert {"401", "403", "404"} <= set(op["responses"]), path


def test_responses_name_headers_and_statuses(doc: dict[str, Any]) -> None:
    _check_responses(doc, REGISTRY)


def _check_responses(doc: dict[str, Any], kinds: Mapping[str, KindSpec]) -> None:
    for path, method, op in operations(doc):
        for status, reply in op["responses"].items():
            reply = resolve(doc, reply)
            assert "x-request-id" in reply["headers"], (path, method, status)
            # An action's 201 (-addKey) makes no item, so there is nothing for a Location to name.
            created_item = status == "201" and "/-" not in path
            assert ("Location" in reply["headers"]) == created_item, (path, method, status)
            if int(status) >= 400 and path.startswith("/org"):
                schema = reply["content"]["application/json"]["schema"]
                assert {"$ref": "#/components/schemas/Error"} in schema["allOf"]
        if method == "delete":
            assert "202" in op["responses"] and "content" not in op["responses"]["202"]
        if method in ("put", "patch") or (method == "post" and "/-" not in path):
            assert any(p == {"$ref": "#/components/parameters/DryRun"} for p in op["parameters"])
            assert op["requestBody"]["required"] is True
        elif path in (RUNTIME_REPORTS, RUNTIME_COMMANDS, RUNTIME_ACCESS):  # Plinth's own, no kind's action
            assert method == "get" or op["requestBody"]["required"] is True, path
        elif method == "post" and "-query" not in path:  # an action: no dryRun, and the body it declares
            assert "parameters" not in op
            if _declared_action(op, kinds).body is None:
                assert "requestBody" not in op, path
            else:
                assert op["requestBody"]["required"] is True, path
        elif method == "post":  # a query: no body is the empty query, as the official CLI sends it
            assert op["requestBody"]["required"] is False, path


def _declared_action(op: dict[str, Any], kinds: Mapping[str, KindSpec]) -> KindAction:
    """The declaration behind an action's operation."""
    kind = kinds[op["x-plinth-kind"]]
    return next(a for a in kind.actions if a.operation_id == op["operationId"])


def test_an_action_without_a_body_documents_none(doc: dict[str, Any]) -> None:
    """A POST action may take no body (``KindAction.body`` is ``None``): its operation has no
    ``requestBody``, and the check above holds each action to what it declares."""
    base = next(k for k in REGISTRY.values() if k.scope == "org" and not k.actions)
    poke = KindAction(operation_id="pokeWidget", method="POST", path="-poke", summary="Poke", handler=_unserved)
    widget = replace(base, name="widget", presentation=replace(base.presentation, title="Widget"), actions=(poke,))
    built = build_document({**REGISTRY, "widget": widget})
    validate_spec(built)
    op = built["paths"]["/org/{org}/widget/-poke"]["post"]
    assert "requestBody" not in op and "parameters" not in op
    _check_responses(built, {**REGISTRY, "widget": widget})


# -- the schemas accept what the pipeline builds ---------------------------------------------


def minimal(doc: dict[str, Any], schema: Any) -> Any:
    """The smallest instance of a (simple) schema: required fields, lowest bounds, first choices."""
    schema = resolve(doc, schema)
    if "anyOf" in schema:
        return minimal(doc, next(s for s in schema["anyOf"] if s != {"type": "null"}))
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal(doc, schema["properties"][k]) for k in schema.get("required", [])}
    if kind in ("integer", "number"):
        return schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [minimal(doc, schema["items"]) for _ in range(schema.get("minItems", 0))]
    assert kind == "string" and "pattern" not in schema, f"derive no example from {schema}"
    return "x" * max(1, schema.get("minLength", 1))


def example_name(kind: KindSpec) -> str:
    for name in (f"ex-{kind.name}", f"ex-{kind.name}.example.com", f"ex-{kind.name}@example.com"):
        if kind.schema.name_rule(name) is None:
            return name
    raise AssertionError(f"no example name for {kind.name}")


#: Required kind-specific top-level fields a schema alone cannot give a valid value for.
TOP_LEVEL_EXAMPLES: dict[str, dict[str, Any]] = {
    "policy": {"targetKind": "gvc", "target": "all"},
    "secret": {"type": "dictionary", "data": {"KEY": "value"}},
    "cloudaccount": {"provider": "aws", "data": {"roleArn": "arn:aws:iam::123456789012:role/cpln-acme"}},
    "quota": {"max": 10},
}
#: Minimal specs a schema alone cannot give (names checked by a validator, not a pattern).
MINIMAL_SPECS: dict[str, dict[str, Any]] = {"workload": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def creatable(kind: KindSpec) -> bool:
    """Kinds a client can create with a plain write (users arrive by invitation instead)."""
    return bool({"create", "replace"} & kind.access.verbs)


def example_bodies(doc: dict[str, Any], kind: KindSpec) -> list[dict[str, Any]]:
    """A derived minimal body, and a fuller one when this file knows the kind."""
    body: dict[str, Any] = {"name": example_name(kind), **TOP_LEVEL_EXAMPLES.get(kind.name, {})}
    if kind.name == "user":
        body["email"] = body["name"]
    if kind.schema.spec_model is not None:
        spec_schema = doc["components"]["schemas"][prefix(doc, kind)]["properties"]["spec"]
        body["spec"] = MINIMAL_SPECS.get(kind.name) or minimal(doc, spec_schema)
    bodies = [body]
    if kind.name in RICH_SPECS:
        bodies.append({**body, "description": "rich", "tags": {"team": "a", "n": 1}, "spec": RICH_SPECS[kind.name]})
    return bodies


def context(kind: KindSpec) -> KindContext:
    parent = None
    if kind.scope == "gvc":
        parent = {"id": str(uuid.uuid4()), "name": "main", "spec": {"staticPlacement": {"locationLinks": []}}}
    return KindContext(org=ORG, now=NOW, gvc="main" if parent else None, parent=parent, id=str(uuid.uuid4()))


def stored_item(kind: KindSpec, body: dict[str, Any]) -> Item:
    ctx = context(kind)
    candidate, errors = build_candidate(kind, copy.deepcopy(body), None, ctx, body["name"])
    assert errors == [], (kind.name, errors)
    return finish_item(
        kind,
        candidate,
        org=ORG,
        gvc=ctx.gvc,
        item_id=str(ctx.id),
        version=1,
        created=NOW,
        modified=NOW,
        status=kind.status.compute(candidate, ctx),
    )


@pytest.mark.parametrize("kind", list(REGISTRY.values()), ids=list(REGISTRY))
def test_items_the_pipeline_builds_match_the_schemas(doc: dict[str, Any], kind: KindSpec) -> None:
    p = prefix(doc, kind)
    for body in example_bodies(doc, kind):
        if "create" in kind.access.verbs:
            assert list(component(doc, f"{p}Create").iter_errors(body)) == []
        item = stored_item(kind, body)
        assert list(component(doc, p).iter_errors(item)) == []
        # get -> edit -> put round-trips: the whole served item is a valid PUT body.
        if "replace" in kind.access.verbs:
            assert list(component(doc, f"{p}Replace").iter_errors(item)) == []
        if "create" in kind.access.verbs:
            assert list(component(doc, f"{p}Create").iter_errors(client_view(kind, item))) == []
        # ... and a patch that replaces the spec, drops a tag and sets one.
        if "patch" not in kind.access.verbs:
            continue
        patch = {"$replace/spec": item.get("spec"), "$drop/tags": ["team"], "tags": {"x": "y", "n": None}}
        if "spec" not in item:
            del patch["$replace/spec"]
        if not kind.schema.has_tags:
            patch = dict(TOP_LEVEL_EXAMPLES.get(kind.name, {}))  # no tags to patch: its own fields
        assert list(component(doc, f"{p}Patch").iter_errors(patch)) == []


@pytest.mark.parametrize("kind", [k for k in REGISTRY.values() if k.schema.spec_model], ids=lambda k: k.name)
def test_the_spec_schema_rejects_an_unknown_field_like_the_server(doc: dict[str, Any], kind: KindSpec) -> None:
    p = prefix(doc, kind)
    body = example_bodies(doc, kind)[0]
    bad = {**body, "spec": {**body["spec"], "noSuchField": 1}}
    _, errors = build_candidate(kind, bad, None, context(kind), bad["name"])
    assert [e.path for e in errors] == ["spec.noSuchField"]
    assert list(component(doc, f"{p}Create").iter_errors(bad))
    item = stored_item(kind, body)
    item["spec"]["noSuchField"] = 1
    assert list(component(doc, p).iter_errors(item))
    assert list(component(doc, f"{p}Patch").iter_errors({"spec": {"noSuchField": 1}}))
    assert list(component(doc, f"{p}Create").iter_errors({**body, "noSuchTopLevelField": 1}))


def test_query_bodies_follow_the_kinds_queryable_properties(doc: dict[str, Any]) -> None:
    for kind in REGISTRY.values():
        if kind.scope == "root" or "list" not in kind.access.verbs:
            continue
        check = component(doc, f"{prefix(doc, kind)}Query")
        term = {"property": kind.presentation.query_properties[0], "op": "=", "value": "x"}
        good = {"fetch": "links", "spec": {"match": "any", "terms": [term], "sort": {"by": "name", "order": "desc"}}}
        assert list(check.iter_errors(good)) == []
        assert list(check.iter_errors({"spec": {"terms": [{"property": "spec.a.b", "op": "exists"}]}})) == []
        assert list(check.iter_errors({"spec": {"terms": [{"property": "nope", "value": 1}]}}))
        assert list(check.iter_errors({"spec": {"terms": [{"property": "name", "tag": "t", "value": 1}]}}))
        assert list(check.iter_errors({"spec": {"terms": [{"property": "name"}]}}))  # a value is needed
        rel_ok = not list(check.iter_errors({"spec": {"terms": [{"rel": "gvc", "value": "main"}]}}))
        assert rel_ok == (kind.scope == "gvc")


# -- the real app answers as documented ------------------------------------------------------


class Conformance:
    """Calls the app and checks each answer against the operation the document gives for it."""

    def __init__(self, doc: dict[str, Any], client: httpx.AsyncClient) -> None:
        self.doc = doc
        self.client = client
        self.seen: set[tuple[str, str]] = set()

    async def call(
        self,
        template: str,
        method: str,
        params: dict[str, str],
        *,
        body: Any = None,
        query: str = "",
        expect: int | None = None,
    ) -> httpx.Response:
        """Call one documented operation; check the answer against it (and ``expect``, if given)."""
        op = self.doc["paths"][template][method]
        url = template.format(**params) + (f"?{query}" if query else "")
        response = await self.client.request(method.upper(), url, json=body)
        where = f"{method.upper()} {url} -> {response.status_code}: {response.text[:300]}"
        assert str(response.status_code) in op["responses"], where
        assert expect is None or response.status_code == expect, where
        reply = resolve(self.doc, op["responses"][str(response.status_code)])
        assert response.headers.get("x-request-id"), where
        if "Location" in reply["headers"]:
            assert response.headers.get("location", "").startswith("/org/"), where
        if "content" in reply:
            schema = reply["content"]["application/json"]["schema"]
            errors = [e.message for e in validator(self.doc, schema).iter_errors(response.json())]
            assert errors == [], (where, errors[:3])
        else:
            assert response.content == b"", where
        self.seen.add((template, method))
        return response

    async def follow_next(self, template: str, response: httpx.Response, params: dict[str, str]) -> None:
        """When a page has a ``next`` link, GET it through the operation it names."""
        nxt = [link["href"] for link in response.json()["links"] if link["rel"] == "next"]
        if nxt:
            await self.call(template, "get", params, query=urlsplit(nxt[0]).query, expect=200)


def _template_kind(doc: dict[str, Any], template: str) -> str | None:
    kinds = {op.get("x-plinth-kind") for m, op in doc["paths"][template].items() if m in METHODS}
    return kinds.pop() if len(kinds) == 1 else None


async def _exercise(doc: dict[str, Any], data_dir: Path) -> set[tuple[str, str]]:
    from plinth.cli.store.serve import bootstrap
    from plinth.server.app import PlinthApp
    from plinth.server.settings import Settings

    settings = Settings(data_dir=data_dir, org=ORG, access_log=False)
    key, _ = await bootstrap(settings)
    app = PlinthApp(settings)
    await app.startup()
    order = {"root": 0, "org": 1, "gvc": 2}
    kinds = sorted(REGISTRY.values(), key=lambda k: order[k.scope])
    gvc_name = example_name(REGISTRY["gvc"])
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://plinth", headers={"authorization": f"Bearer {key}"}
        ) as client:
            check = Conformance(doc, client)
            for path, method, _ in operations(doc):
                if not path.startswith("/org"):
                    await check.call(path, method, {}, expect=200)
            for kind in kinds:
                await _exercise_kind(doc, check, kind, gvc_name)
            for kind in kinds:  # once every kind has its items (the GVC placed by its rich spec)
                await _exercise_declared_examples(doc, check, kind, gvc_name)
            for kind in reversed(kinds):
                await _delete_kind(doc, check, kind, gvc_name)
            await _probe_unserved(doc, check, gvc_name)
            report = {"workloads": [{"gvc": gvc_name, "name": "nosuch", "locations": []}]}
            await check.call(RUNTIME_REPORTS, "post", {"org": ORG}, body=report, expect=200)
            await check.call(RUNTIME_REPORTS, "post", {"org": ORG}, body={"workloads": [{}]}, expect=400)
            await check.call(RUNTIME_COMMANDS, "get", {"org": ORG}, expect=200)
            update = {"gvc": gvc_name, "workload": "nosuch", "id": "x", "lifecycleStage": "running"}
            await check.call(RUNTIME_COMMANDS, "post", {"org": ORG}, body={"commands": [update]}, expect=200)
            asked = {"permission": "view", "link": f"/org/{ORG}"}
            await check.call(RUNTIME_ACCESS, "post", {"org": ORG}, body=asked, expect=200)
            await check.call(RUNTIME_ACCESS, "post", {"org": ORG}, body={"link": 1}, expect=400)
            anonymous = await client.get(f"/org/{ORG}/gvc", headers={"authorization": ""})
            assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
            return check.seen
    finally:
        await app.shutdown()


def _params(kind: KindSpec, name: str, gvc_name: str) -> dict[str, str]:
    return {"org": name if kind.scope == "root" else ORG, "gvc": gvc_name, "name": name}


def _fields(template: str) -> set[str]:
    """The path parameters of a template."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


async def _exercise_kind(doc: dict[str, Any], check: Conformance, kind: KindSpec, gvc_name: str) -> None:
    templates = [t for t in doc["paths"] if _template_kind(doc, t) == kind.name]
    ops = {(t, m): doc["paths"][t][m] for t in templates for m in METHODS if m in doc["paths"][t]}
    by_id = {op["operationId"].removesuffix("InOrg").removesuffix("InGvc"): (t, m) for (t, m), op in ops.items()}
    bodies = example_bodies(doc, kind)
    name = bodies[0]["name"]
    cap = kind.name.capitalize()
    params = _params(kind, name, gvc_name)
    pairs = {op["operationId"]: (t, m) for (t, m), op in ops.items()}
    if f"create{cap}" in pairs:
        t, m = pairs[f"create{cap}"]
        for i, body in enumerate(bodies):
            await check.call(t, m, params, body={**body, "name": f"{name}-{i}"}, expect=201)
            await check.call(t, m, params, body={**body, "name": f"{name}-dry"}, query="dryRun=true", expect=200)
        bad = {**bodies[0], "name": f"{name}-bad", "spec": {"noSuchField": 1}}
        await check.call(t, m, params, body=bad, expect=400)
    if f"apply{cap}" in pairs:
        t, m = pairs[f"apply{cap}"]
        await check.call(t, m, params, body=bodies[-1], expect=201)  # creates the item the reads below use
    for op_id, (t, m) in pairs.items():
        # Item and collection reads; an action's own parameters (an email) are its examples' business.
        if m == "get" and not op_id.startswith("continueQuery") and _fields(t) <= {"org", "gvc", "name"}:
            query = "limit=1" if not t.endswith("{name}") and t != "/org/{org}" else ""
            on_item = not query or "{name}" in t
            response = await check.call(
                t, m, params, query=query, expect=200 if creatable(kind) or not on_item else 404
            )
            if query and response.status_code == 200 and "links" in response.json():  # a page, not -info
                await check.follow_next(t, response, params)
    if f"replace{cap}" in by_id:
        t, m = by_id[f"replace{cap}"]
        served = (await check.client.get(t.format(**params))).json()
        await check.call(t, m, params, body=served, expect=200)
    if f"patch{cap}" in by_id:
        t, m = by_id[f"patch{cap}"]
        if creatable(kind):
            patched = await check.call(t, m, params, body={"description": "patched", "tags": {"team": "b"}}, expect=200)
            assert patched.json()["description"] == "patched"
        else:
            await check.call(t, m, params, body={"tags": {"team": "b"}}, expect=404)
    for op_id, (t, m) in pairs.items():
        if op_id.startswith("query"):
            terms = [{"property": "name", "op": "contains", "value": name}]
            result = await check.call(t, m, params, body={"spec": {"terms": terms}}, query="limit=1", expect=200)
            assert len(result.json()["items"]) == (1 if creatable(kind) else 0)
            continuation = pairs["continue" + op_id[0].upper() + op_id[1:]]
            await check.follow_next(continuation[0], result, params)
            await check.call(*continuation, params, query="cursor=not-a-cursor", expect=400)


def _filled(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` with ``{name}``, ``{NAME}``, ``{org}`` and ``{gvc}`` in its strings (keys too) filled in."""
    if isinstance(value, str):
        for key, given in names.items():
            value = value.replace("{" + key + "}", given)
        return value
    if isinstance(value, Mapping):
        return {_filled(k, names): _filled(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_filled(v, names) for v in value]
    return value


def _holds(answer: Any, expected: Any) -> bool:
    """Whether ``answer`` holds ``expected``: objects by the keys ``expected`` names, the rest equal."""
    if isinstance(expected, Mapping):
        return isinstance(answer, Mapping) and all(k in answer and _holds(answer[k], v) for k, v in expected.items())
    return bool(answer == expected)


async def _exercise_declared_examples(doc: dict[str, Any], check: Conformance, kind: KindSpec, gvc_name: str) -> None:
    """Call every declared action's examples (``KindAction.examples``) on the items the kind's
    example made: each must answer its status (documented, schema-valid) and hold ``has``.

    Nothing here is per operation: a new action needs only its examples. A kind's examples run
    in declaration order (an invitation makes the user the lookup by email finds); checks an
    example cannot state (an answer read back through another endpoint) live in the kind's
    HTTP tests under ``tests/api``."""
    pairs = {op["operationId"]: (t, m) for t, m, op in operations(doc) if op.get("x-plinth-kind") == kind.name}
    name = example_bodies(doc, kind)[0]["name"]
    params = _params(kind, name, gvc_name)
    names = {"name": name, "NAME": name.upper(), "org": ORG, "gvc": gvc_name}
    for action in kind.actions:
        assert action.examples, f"{action.operation_id} declares no examples (KindAction.examples)"
        t, m = pairs[action.operation_id]
        for case in action.examples:
            given = {**params, **_filled(case.params, names)}
            answer = await check.call(t, m, given, body=_filled(case.body, names), expect=case.status)
            if case.has is not None:
                assert _holds(answer.json(), _filled(case.has, names)), (action.operation_id, case, answer.text[:300])
            assert not set(case.lacks) & set(answer.json()), (action.operation_id, case, answer.text[:300])


async def _delete_kind(doc: dict[str, Any], check: Conformance, kind: KindSpec, gvc_name: str) -> None:
    for path, method, op in operations(doc):
        if op.get("x-plinth-kind") == kind.name and method == "delete":
            name = f"{example_bodies(doc, kind)[0]['name']}-0"
            if creatable(kind):
                await check.call(path, method, _params(kind, name, gvc_name), expect=202)
            await check.call(path, method, _params(kind, name, gvc_name), expect=404)


async def _probe_unserved(doc: dict[str, Any], check: Conformance, gvc_name: str) -> None:
    """A method the document leaves out of a path is one the router does not serve."""
    for template, item in doc["paths"].items():
        kind_name = _template_kind(doc, template)
        if kind_name is None:
            continue
        kind = REGISTRY[kind_name]
        params = _params(kind, example_name(kind), gvc_name)
        url = template.format(**params, **{field: "probe@example.com" for field in _fields(template) - set(params)})
        for method in METHODS:
            if method not in item:
                response = await check.client.request(method.upper(), url, json={"name": "probe-x"})
                refused = (403,) if kind.rules.create_refusal and method == "post" and not url.endswith("}") else ()
                assert response.status_code in (404, 405, *refused), (method, url, response.text)


def test_every_operation_answers_as_documented(doc: dict[str, Any], tmp_path: Path) -> None:
    seen = asyncio.run(_exercise(doc, tmp_path))
    missing = {(p, m) for p, m, _ in operations(doc)} - seen
    assert missing == set()
