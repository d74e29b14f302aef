"""Actions and sub-resources are served from the kinds' declarations: every declared action
carries its handler (declaring is registering), and a path reaches exactly the action it names."""

from __future__ import annotations

import inspect

import pytest

from plinth.engine.requestinfo import parse_path
from plinth.errors import MethodNotAllowed
from plinth.kinds import REGISTRY
from plinth.server.actions import find


def test_every_declared_action_has_a_handler() -> None:
    declared = [action.operation_id for kind in REGISTRY.values() for action in kind.actions]
    assert len(declared) == len(set(declared)), "operation ids must be unique"
    handlers = {action.operation_id: action.handler for kind in REGISTRY.values() for action in kind.actions}
    assert set(declared) == set(handlers)
    assert all(inspect.iscoroutinefunction(handler) for handler in handlers.values())


@pytest.mark.parametrize(
    ("path", "method", "operation", "params"),
    [
        ("/org/acme/serviceaccount/ci/-addKey", "POST", "addServiceaccountKey", {}),
        ("/org/acme/user/-invite", "POST", "inviteUsers", {}),
        ("/org/acme/user/-for/email/ada@example.com", "GET", "getUserForEmail", {"email": "ada@example.com"}),
        ("/org/acme/gvc/main/workload/web/deployment", "GET", "listWorkloadDeployments", {}),
        (
            "/org/acme/gvc/main/workload/web/deployment/aws-us-east-1",
            "GET",
            "getWorkloadDeployment",
            {"location": "aws-us-east-1"},
        ),
        ("/org/acme/gvc/main/workload/web/-command", "POST", "createWorkloadCommand", {}),
        ("/org/acme/gvc/main/workload/web/-command", "GET", "listWorkloadCommands", {}),
        ("/org/acme/gvc/main/workload/web/-command/c-1", "GET", "getWorkloadCommand", {"id": "c-1"}),
    ],
)
def test_a_path_reaches_the_action_it_names(path: str, method: str, operation: str, params: dict[str, str]) -> None:
    info = parse_path(path)
    found = find(REGISTRY[info.kind], info, method)
    assert found is not None
    action, given = found
    assert (action.operation_id, given) == (operation, params)


@pytest.mark.parametrize(
    "path",
    [
        "/org/acme/gvc/main/workload/web/-deployment",  # a sub-resource is not a dash action
        "/org/acme/gvc/main/workload/web/command",  # nor the reverse
        "/org/acme/gvc/main/workload/web/deployment/a/b",  # too deep
        "/org/acme/gvc/main/workload/-command",  # an item action on the collection
        "/org/acme/gvc/main/volumeset/data/deployment",  # another kind's sub-resource
        "/org/acme/user/-for/name/ada",  # a literal segment that differs
    ],
)
def test_paths_no_declaration_names_find_nothing(path: str) -> None:
    info = parse_path(path)
    assert find(REGISTRY[info.kind], info, "GET") is None


def test_a_declared_path_with_another_method_is_405_naming_the_declared_ones() -> None:
    info = parse_path("/org/acme/gvc/main/workload/web/-command")
    with pytest.raises(MethodNotAllowed) as refused:
        find(REGISTRY["workload"], info, "DELETE")
    assert refused.value.details == {"allow": "POST, GET"}
