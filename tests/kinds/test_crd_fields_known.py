"""The operator's CRDs (tests/data/crds) name no spec field Plinth's models lack.

The CRDs are the shape of documents the operator sends the live API, so a field there that a
closed Plinth model lacks would be a document the API accepts and Plinth refuses ("unknown
field"). docs/validation-audit.md cites this test for its "unknown fields" row. Free-form
blocks (Envoy filters, ``extras``) are objects in Plinth and are skipped.
"""

from __future__ import annotations

import typing
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from plinth.kinds.domain.models import DomainSpec
from plinth.kinds.gvc.models import GvcSpec
from plinth.kinds.org.models import OrgSpec
from plinth.kinds.volumeset.models import VolumeSetSpec
from plinth.kinds.workload.models import WorkloadSpec
from tests.support.paths import CRDS

FREE_FORM = ("sidecar.envoy", "extras")
SPECS: dict[str, type[BaseModel]] = {
    "Workload.yaml": WorkloadSpec,
    "Gvc.yaml": GvcSpec,
    "VolumeSet.yaml": VolumeSetSpec,
    "Domain.yaml": DomainSpec,
    "Org.yaml": OrgSpec,
}


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models(arg)]


def model_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for name, field in model.model_fields.items():
        path = f"{prefix}.{field.alias or name}" if prefix else field.alias or name
        paths.add(path)
        for inner in _models(field.annotation):
            paths |= model_paths(inner, path)
    return paths


def schema_paths(schema: dict[str, Any], prefix: str = "") -> set[str]:
    if schema.get("type") == "array" and "items" in schema:
        return schema_paths(schema["items"], prefix)
    paths: set[str] = set()
    for name, inner in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        paths.add(path)
        paths |= schema_paths(inner, path)
    return paths


@pytest.mark.parametrize("crd_file", sorted(SPECS))
def test_every_crd_spec_field_is_a_field_plinth_knows(crd_file: str) -> None:
    crd = yaml.safe_load((CRDS / crd_file).read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    crd_fields = {path for path in schema_paths(spec) if not path.startswith(FREE_FORM)}
    assert len(crd_fields) > 3  # the schema was read, not an empty walk
    assert crd_fields - model_paths(SPECS[crd_file]) == set()
