"""The console's Create templates (``console/static/templates.json``) can never rot: every kind a
person creates has one, and each, with a name filled in as a person would, creates its item
(201) on both stores, exactly as the console sends it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from plinth import console
from plinth.kinds import KINDS, REGISTRY
from plinth.meta import collection_href
from tests.api.test_kind_conformance import fill

TEMPLATES: dict[str, Any] = json.loads(console.STATIC.joinpath("templates.json").read_text())["templates"]
#: The kinds a person creates: ``create`` among their verbs, below the root (an org is the
#: server admin's, as in the conformance suite).
CREATABLE = [kind.name for kind in KINDS if "create" in kind.access.verbs and kind.scope != "root"]


def test_every_kind_a_person_creates_has_a_template_and_no_other() -> None:
    assert list(TEMPLATES) == CREATABLE  # in the registry's order too
    for kind, template in TEMPLATES.items():
        assert template["name"] == "", f"{kind}: the name is left for the person"
        assert "kind" not in template and "version" not in template, kind


@pytest.mark.parametrize("kind", CREATABLE)
def test_each_template_creates_its_item_once_named(api: httpx.Client, server: Any, kind: str, unique: str) -> None:
    org, gvc = server.org, f"{unique}-gvc"
    api.post(f"/org/{org}/gvc", json={"name": gvc}).raise_for_status()  # the GVC the console shows
    body = fill(TEMPLATES[kind], org=org, gvc=gvc)
    body["name"] = f"{unique}.example.com" if kind == "domain" else unique
    collection = collection_href(org, kind, gvc if REGISTRY[kind].scope == "gvc" else None)
    created = api.post(collection, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["version"] == 1
    assert api.get(created.headers["location"]).json()["name"] == body["name"]
