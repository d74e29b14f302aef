"""What a kind declares about its presentation is what the client side implements.

The client side (``convert/terraform.py``, ``cli/output/columns.py``) may not import the kinds:
each kind declares its Terraform resource and its text-table column titles (``KindSpec``), the
client side reads them from the generated ``plinth.kindfacts`` and knows how to write each, and
this test keeps the two sides in step: a served kind that declares neither fails here, naming
itself, and so does a declaration the client side does not implement, or the reverse.
"""

from __future__ import annotations

import pytest

from plinth.cli.output.columns import MODELS
from plinth.convert.terraform import RESOURCES
from plinth.kinds import KINDS
from plinth.kinds.base import KindSpec

#: Kinds that hold items clients can read and write.
SERVED = [kind for kind in KINDS if {"create", "patch"} & kind.access.verbs]


@pytest.mark.parametrize("kind", SERVED, ids=[k.name for k in SERVED])
def test_a_served_kind_declares_its_presentation(kind: KindSpec) -> None:
    assert kind.presentation.terraform_resource != "", (
        f"{kind.name}: declare terraform_resource (None: the provider has none)"
    )
    assert kind.presentation.text_columns, f"{kind.name}: declare text_columns (the official CLI's table for it)"


@pytest.mark.parametrize("kind", SERVED, ids=[k.name for k in SERVED])
def test_the_client_side_implements_what_the_kind_declares(kind: KindSpec) -> None:
    if kind.presentation.terraform_resource is None:
        assert kind.name not in RESOURCES
    else:
        assert RESOURCES[kind.name][0] == kind.presentation.terraform_resource
    assert tuple(column.title for column in MODELS[kind.name]) == kind.presentation.text_columns


def test_nothing_is_implemented_for_a_kind_that_does_not_declare_it() -> None:
    declared_tf = {kind.name for kind in KINDS if kind.presentation.terraform_resource}
    assert set(RESOURCES) == declared_tf
    declared_columns = {kind.name for kind in KINDS if kind.presentation.text_columns}
    # The CLI also has tables for kinds Plinth does not serve yet (the official CLI prints them
    # for any server): those need no declaration until their kind is served.
    assert declared_columns <= set(MODELS)
