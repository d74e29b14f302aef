"""A workload's runtime endpoints: its deployments and its commands (types-ts deployment.ts, command.ts).

The runtime says what deployments report and how a command ends; everything else is the
protocol's (:class:`~plinth.kinds.actions.ActionContext`): the workload and its GVC are read
through it, access is checked on the workload (``view`` to read deployments and commands,
``exec.runCronWorkload`` / ``exec.stopReplica`` to send one), and commands are stored as
records the workload owns (``KindSpec.lifecycle.owned_records``), deleted with it.
"""

from __future__ import annotations

from typing import Any

from plinth.errors import ValidationFailed, not_found
from plinth.kinds.actions import ActionContext, Answer
from plinth.kinds.base import ActionCase, KindAction
from plinth.kinds.validation import validate_model
from plinth.kinds.workload.answers import Command, CommandList, Deployment, DeploymentList
from plinth.kinds.workload.commands import COMMAND_PERMISSIONS, CommandRequest, command_errors

COMMAND = "command"
#: Commands read at once to build job executions (the newest ``historyLimit`` are shown).
COMMANDS_READ = 1000


def commands_href(ctx: ActionContext) -> str:
    return f"{ctx.href}/-command"


async def _deployments(ctx: ActionContext) -> dict[str, Any]:
    workload = await ctx.item("view")
    gvc = await ctx.container()
    commands, _ = await ctx.owned_page(COMMAND, COMMANDS_READ, None, commands_href(ctx))
    commands.sort(key=lambda c: c["created"], reverse=True)
    history = ((workload["spec"].get("job") or {}).get("historyLimit")) or 5
    items = await ctx.deployments(workload, gvc, commands[:history])
    return {
        "kind": "list",
        "itemKind": "deployment",
        "items": items,
        "links": [{"rel": "self", "href": f"{ctx.href}/deployment"}],
    }


async def deployments(ctx: ActionContext) -> Answer:
    """``GET .../workload/{name}/deployment``: one deployment per location, as a list."""
    return Answer(await _deployments(ctx))


async def deployment(ctx: ActionContext) -> Answer:
    """``GET .../deployment/{location}``: 404 for a location the GVC is not placed in."""
    location = ctx.params["location"]
    for item in (await _deployments(ctx))["items"]:
        if item["name"] == location:
            return Answer(item)
    raise not_found("deployment", location)


async def run_command(ctx: ActionContext) -> Answer:
    """``POST -command``: validate, hand to the runtime, store with its outcome (201)."""
    fields, errors = validate_model(CommandRequest, ctx.body, "")
    permission = COMMAND_PERMISSIONS.get(fields["type"], "exec") if fields else "exec"
    workload = await ctx.item(permission)
    gvc = await ctx.container()
    if errors or fields is None:
        raise ValidationFailed(errors, "command")
    problems = command_errors(fields, workload, await ctx.locations(workload, gvc))
    if problems:
        raise ValidationFailed(problems, "command")
    now, command_id = ctx.now(), ctx.new_id()
    href = f"{commands_href(ctx)}/{command_id}"
    command: dict[str, Any] = {
        "id": command_id,
        "kind": COMMAND,
        "version": 1,
        "type": fields["type"],
        "created": now,
        "lastModified": now,
        "tags": fields.get("tags") or {},
        "links": [{"rel": "self", "href": href}, {"rel": "workload", "href": ctx.href}],
        "lifecycleStage": "pending",
        "spec": fields["spec"],
        "status": {},
    }
    command["lifecycleStage"], command["status"] = await ctx.submit(workload, gvc, command)
    await ctx.put_owned(COMMAND, command_id, command)
    return Answer(command, 201, (("location", href),))


async def list_commands(ctx: ActionContext) -> Answer:
    """``GET -command``: the workload's commands, a page at a time (``next`` link)."""
    limit = ctx.limit()
    await ctx.item("view")
    base = commands_href(ctx)
    items, token = await ctx.owned_page(COMMAND, limit, ctx.cursor(), base)
    links = [{"rel": "self", "href": base}]
    if token is not None:
        links.append({"rel": "next", "href": f"{base}?limit={limit}&cursor={token}"})
    return Answer({"kind": "list", "itemKind": COMMAND, "items": items, "links": links})


async def get_command(ctx: ActionContext) -> Answer:
    """``GET -command/{id}``."""
    await ctx.item("view")
    found = await ctx.owned(COMMAND, ctx.params["id"])
    if found is None:
        raise not_found(COMMAND, ctx.params["id"])
    return Answer(found)


ACTIONS = (
    KindAction(
        operation_id="listWorkloadDeployments",
        method="GET",
        path="deployment",
        summary="The workload's deployments: one per location of its GVC, as the runtime reports it",
        handler=deployments,
        on_item=True,
        answer=DeploymentList,
        examples=(
            ActionCase(200, has={"kind": "list", "itemKind": "deployment"}),
            ActionCase(404, {"name": "no-such-workload"}),
        ),
    ),
    KindAction(
        operation_id="getWorkloadDeployment",
        method="GET",
        path="deployment/{location}",
        summary="The workload's deployment in one location",
        handler=deployment,
        on_item=True,
        answer=Deployment,
        examples=(
            ActionCase(200, {"location": "aws-us-east-1"}, has={"name": "aws-us-east-1", "kind": "deployment"}),
            ActionCase(404, {"location": "nowhere-1"}),
        ),
    ),
    KindAction(
        operation_id="createWorkloadCommand",
        method="POST",
        path="-command",
        summary="Run a command on the workload now (runCronWorkload, stopReplica); the Location names it",
        handler=run_command,
        on_item=True,
        body=CommandRequest,
        status=201,
        answer=Command,
        examples=(
            ActionCase(
                201,
                body={"type": "stopReplica", "spec": {"location": "aws-us-east-1"}},
                has={"kind": "command", "type": "stopReplica", "spec": {"location": "aws-us-east-1"}},
            ),
            ActionCase(400, body={}),
            ActionCase(400, body={"type": "runCronWorkload", "spec": {"location": "aws-us-east-1"}}),
        ),
    ),
    KindAction(
        operation_id="listWorkloadCommands",
        method="GET",
        path="-command",
        summary="The workload's commands",
        handler=list_commands,
        on_item=True,
        answer=CommandList,
        examples=(ActionCase(200, has={"kind": "list", "itemKind": "command"}),),
    ),
    KindAction(
        operation_id="getWorkloadCommand",
        method="GET",
        path="-command/{id}",
        summary="One command of the workload, with its lifecycle stage",
        handler=get_command,
        on_item=True,
        answer=Command,
        examples=(ActionCase(404, {"id": "no-such-command"}),),
    ),
)
