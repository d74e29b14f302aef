"""The data plane's one source of authority: the API's ``POST /org/{org}/-runtime/access``.

The data plane never judges a token itself. Each request (and each session, when it opens and
then every :data:`RECHECK_S` while it lasts) asks the API with **the user's own token**, so
keys, their revocation and the org's policies are judged exactly as for any API request
(docs/api.md, "Runtime access"). A session's first question carries the audit record the API
appends to the workload's event log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from plinth.errors import (
    APIError,
    BadRequest,
    FieldError,
    Forbidden,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    Unauthorized,
    ValidationFailed,
)

#: How often an open session asks again. The API sees a revoked key within its own poll of the
#: access generation (0.5 s), so a session on a revoked key ends within about a second.
RECHECK_S = 0.4
#: Consecutive failures to reach the API after which a session is ended rather than trusted.
UNREACHABLE_LIMIT = 5
TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Answer:
    """The API's verdict: ``status`` 200 allows; else ``body`` is its error document."""

    status: int
    body: bytes

    @property
    def allowed(self) -> bool:
        return self.status == 200

    @property
    def reason(self) -> str:
        """The error's message, for the ``Unauthorized: <reason>`` a refused session ends with."""
        try:
            doc = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            doc = None
        message = doc.get("message") if isinstance(doc, dict) else None
        return str(message) if message else f"the API answered {self.status}"


class ApiAccess:
    """Asks the API at ``api`` (its base URL) about a token's access."""

    def __init__(self, api: str, verify: bool | str = True) -> None:
        self._client = httpx.AsyncClient(base_url=api.rstrip("/"), verify=verify, timeout=TIMEOUT_S)

    async def ask(
        self,
        token: str,
        org: str,
        permission: str,
        link: str,
        audit: Mapping[str, Any] | None = None,
    ) -> Answer:
        """The API's answer; ``httpx.TransportError`` when it cannot be reached."""
        body: dict[str, Any] = {"permission": permission, "link": link}
        if audit is not None:
            body["audit"] = dict(audit)
        reply = await self._client.post(
            f"/org/{org}/-runtime/access",
            content=orjson.dumps(body),
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
        )
        return Answer(reply.status_code, reply.content)

    async def until_refused(self, token: str, org: str, permission: str, link: str) -> str:
        """Ask again every :data:`RECHECK_S` for as long as a session lasts; the reason once the
        API refuses (a revoked key, a withdrawn permission), or stays unreachable
        :data:`UNREACHABLE_LIMIT` times in a row."""
        unreachable = 0
        while True:
            await asyncio.sleep(RECHECK_S)
            try:
                answer = await self.ask(token, org, permission, link)
            except httpx.HTTPError as exc:
                unreachable += 1
                if unreachable >= UNREACHABLE_LIMIT:
                    return f"the API cannot confirm access ({type(exc).__name__})"
                continue
            unreachable = 0
            if not answer.allowed:
                return answer.reason

    async def close(self) -> None:
        await self._client.aclose()


def bearer_token(authorization: str) -> str:
    """The token of an ``authorization`` header, with or without ``Bearer `` (the official CLI
    sends its tail socket's bare, ``commands/logs.js``); empty when there is none."""
    token = authorization.strip()
    return token[7:].strip() if token[:7].lower() == "bearer " else token


#: The API's errors (``plinth.errors``) by status, so the data plane's own answers carry the
#: same ``code`` as the API's.
_ERRORS: dict[int, type[APIError]] = {
    error.status: error
    for error in (BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, PayloadTooLarge, ServiceUnavailable)
}


def error_body(status: int, message: str, errors: Sequence[FieldError] = ()) -> bytes:
    """The API's error shape (docs/api.md) for an answer of the data plane's own; ``errors``
    name the offending fields by path, as the API's 400s do."""
    error = ValidationFailed(list(errors)) if errors else _ERRORS.get(status, APIError)(message)
    body = error.body("")
    body.pop("id", None)
    body["status"], body["message"] = status, message
    return orjson.dumps(body)


def audit_record(kind: str, command: Sequence[str], replica: str, location: str, container: str) -> dict[str, Any]:
    """The ``audit`` of a session (``exec``, ``connect``...): never its input, only its command."""
    return {"type": kind, "command": list(command), "replica": replica, "location": location, "container": container}
