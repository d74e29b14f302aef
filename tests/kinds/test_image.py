"""The image kind (docs.controlplane.com/reference/image): declared without create (images come from pushing, which
Plinth does not serve), its registry fields server-owned."""

from __future__ import annotations

from plinth.kinds import PERMISSIONS, REGISTRY
from plinth.kinds.image import CREATE_REFUSAL, IMAGE
from plinth.kinds.permissions import implied_closure


def test_declaration() -> None:
    assert REGISTRY["image"] is IMAGE
    assert (IMAGE.scope, IMAGE.spec_model, IMAGE.top_level_model, IMAGE.example) == ("org", None, None, None)
    assert IMAGE.verbs == frozenset({"get", "list", "patch", "delete"})
    assert IMAGE.create_refusal == CREATE_REFUSAL == "You can create an image only by pushing"
    assert IMAGE.server_fields == frozenset({"repository", "tag", "manifest", "digest"})
    assert IMAGE.permissions is PERMISSIONS["image"].permissions
    assert implied_closure("image", ["create"]) == {"create", "pull", "view"}
    assert (IMAGE.terraform_resource, IMAGE.text_columns) == (None, ("NAME", "PULL", "DIGEST", "CREATED", "TAGS"))
    assert {"repository", "tag", "digest"} <= set(IMAGE.query_properties)
