"""The image kind (docs.controlplane.com/reference/image): declared without create (images come from pushing, which
Plinth does not serve), its registry fields server-owned."""

from __future__ import annotations

from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.image import CREATE_REFUSAL, IMAGE
from plinth.kinds.permissions import implied_closure


def test_declaration() -> None:
    assert REGISTRY["image"] is IMAGE
    assert (IMAGE.scope, IMAGE.schema.spec_model, IMAGE.schema.top_level_model, IMAGE.example) == (
        "org",
        None,
        None,
        None,
    )
    assert IMAGE.access.verbs == frozenset({"get", "list", "patch", "delete"})
    assert IMAGE.rules.create_refusal == CREATE_REFUSAL == "You can create an image only by pushing"
    assert IMAGE.schema.server_fields == frozenset({"repository", "tag", "manifest", "digest"})
    assert IMAGE.access.permissions is PERMISSIONS["image"].permissions
    assert implied_closure("image", ["create"]) == {"create", "pull", "view"}
    assert (IMAGE.presentation.terraform_resource, IMAGE.presentation.text_columns) == (
        None,
        ("NAME", "PULL", "DIGEST", "CREATED", "TAGS"),
    )
    assert {"repository", "tag", "digest"} <= set(IMAGE.presentation.query_properties)
