"""A secret's actions: ``-reveal`` (the values, for a caller holding ``reveal``) and
``-for/type/{type}`` (the secrets of one type, as a query on ``type`` answers them)."""

from __future__ import annotations

from plinth.errors import NotFound
from plinth.kinds.actions import ActionContext, Answer
from plinth.kinds.base import ActionCase, KindAction
from plinth.kinds.secret.models import SECRET_TYPES


async def reveal(ctx: ActionContext) -> Answer:
    """The secret with its ``data`` in the clear (the engine opens the sealed record)."""
    return Answer(await ctx.reveal())


async def for_type(ctx: ActionContext) -> Answer:
    """What ``-query`` answers for ``type = {type}``; an unknown type names nothing (404, naming
    the types), as an unknown provider's instructions do. The path is only in the CLI's map
    (CLI rest/map.js), with no stated meaning: this is Plinth's reading of it."""
    kind = ctx.params["type"]
    if kind not in SECRET_TYPES:
        raise NotFound(f"Unknown secret type '{kind}': one of {', '.join(SECRET_TYPES)}", {"type": kind})
    query = {"kind": "secret", "spec": {"match": "all", "terms": [{"op": "=", "property": "type", "value": kind}]}}
    return Answer(await ctx.query(query, ctx.limit()))


REVEAL = KindAction(
    operation_id="revealSecret",
    method="GET",
    path="-reveal",
    summary="The secret with its values (data) as they were written; needs the reveal permission",
    handler=reveal,
    on_item=True,
    examples=(ActionCase(200, has={"name": "{name}"}), ActionCase(404, {"name": "no-such-secret"})),
)

FOR_TYPE = KindAction(
    operation_id="listSecretsForType",
    method="GET",
    path="-for/type/{type}",
    summary="The secrets of one type, as a query on type answers them (paged with limit and cursor)",
    handler=for_type,
    response="SecretQueryResult",
    examples=(
        ActionCase(200, {"type": "dictionary"}, has={"kind": "queryresult"}),
        ActionCase(404, {"type": "no-such-type"}),
    ),
)
