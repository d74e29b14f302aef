"""PATCH semantics through real HTTP on both backends: random patches, directives at any depth,
against the reference model (``tests/engine/patch_model.py``).

The playground is a GVC's ``spec.sidecar.envoy``, which the gvc kind takes free-form, so any
document the model can produce is a valid item there. Each example PUTs the target, then PATCHes
with ``dryRun`` and compares the answer with the model: the patched document, or a 400 naming a
path under the field.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from tests.engine.patch_model import REJECTED, documents_and_patches, model_patch

FIELD = ("spec", "sidecar", "envoy")


def _nest(value: Any) -> dict[str, Any]:
    for key in reversed(FIELD):
        value = {key: value}
    return value


def _dig(doc: dict[str, Any]) -> Any:
    for key in FIELD:
        doc = doc.get(key, {})
    return doc


@pytest.fixture
def playground(api: httpx.Client, unique: str) -> str:
    assert api.post("/org/acme/gvc", json={"name": unique}).status_code == 201
    return f"/org/acme/gvc/{unique}"


def test_patches_over_http_agree_with_the_model(api: httpx.Client, playground: str) -> None:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(case=documents_and_patches())
    def agree(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
        target, patch = case
        put = api.put(playground, json=_nest(target))
        assert put.status_code == 200, put.text
        assert _dig(put.json()) == target
        expected = model_patch(target, patch)
        r = api.patch(playground, params={"dryRun": "true"}, json=_nest(patch))
        if expected is REJECTED:
            assert r.status_code == 400, r.text
            assert all(e["path"].startswith(".".join(FIELD)) for e in r.json()["details"]["errors"]), r.text
        else:
            assert r.status_code == 200, r.text
            assert _dig(r.json()) == expected

    agree()
