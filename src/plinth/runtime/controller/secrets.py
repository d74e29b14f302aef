"""Secret values for the plan, read through the API's ``-reveal`` with the controller's key.

Who may read what is the server's judgement, never the controller's: the server puts every
secret reference that does not hold (a secret missing, a key its type lacks, an identity that
may not ``reveal`` it) in the workload's ``status.warning``, and the plan refuses such a
workload (:class:`~.plan.Blocked`), so it is held with that message. Only a workload the server
passed is planned with values, which :class:`SecretCache` fetches from
``GET /org/{org}/secret/{name}/-reveal``.

- **When.** Before each pass the loop calls :meth:`SecretCache.refresh` with the workloads and
  the informer's secrets (their GET form: no values, but a ``version``). A secret is revealed
  again only when its version changed; a new value changes the replica spec, hence its
  digest, hence a rollout. Values of secrets no workload references are dropped.
- **Values** (the platform's, docs/runtime.md): ``cpln://secret/NAME.KEY`` is that key (an
  opaque secret's ``payload``, decoded when its encoding is ``base64``); ``cpln://secret/NAME``
  is the whole secret: the JSON of its ``data`` (an opaque one's ``{payload, encoding}``), or
  the string of the types whose ``data`` is a string (``gcp``, ``docker``, ``azure-sdk``).
- **Files** of a secret volume at ``path``: an opaque secret, or a ``.KEY``, is one file at
  ``path``; a string-typed secret is ``path/___cpln___.secret``; any other type is one file per
  key under ``path`` plus ``___cpln___.secret`` (its JSON).
- **Never a value in a message.** Errors name the reference and the HTTP status only; the
  values live in this object's memory and in the engine's secret store, nowhere else.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from plinth.runtime.containers.protocol import SecretFile
from plinth.runtime.controller.plan import SECRET_PREFIX, secret_references

log = logging.getLogger(__name__)

#: The file holding a whole structured secret in a secret volume (the platform's name).
WHOLE_FILE = "___cpln___.secret"


class SecretUnavailable(Exception):
    """A ``cpln://secret/`` reference the controller cannot resolve; names it, never a value."""


def parse_reference(reference: str) -> tuple[str, str | None]:
    """``cpln://secret/NAME[.KEY]`` as ``(NAME, KEY or None)``."""
    rest = reference[len(SECRET_PREFIX) :] if reference.startswith(SECRET_PREFIX) else reference
    name, _, key = rest.partition(".")
    return name, key or None


@dataclass
class _Revealed:
    version: Any
    type: str
    data: Any = field(repr=False)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _payload(data: Mapping[str, Any]) -> bytes:
    payload = str(data.get("payload") or "")
    if data.get("encoding") == "base64":
        return base64.b64decode(payload)
    return payload.encode()


class SecretCache:
    """The values of the secrets an org's workloads reference (module docstring)."""

    def __init__(self, client: httpx.AsyncClient, org: str) -> None:
        self.client, self.org = client, org
        self._values: dict[str, _Revealed] = {}
        self._errors: dict[str, str] = {}

    async def refresh(self, workloads: Iterable[Mapping[str, Any]], secrets: Mapping[str, Mapping[str, Any]]) -> None:
        """Reveal the referenced secrets whose version is new to the cache (module docstring)."""
        # A workload the server blocked (status.warning) is not planned: its secrets are not read.
        passed = [doc for doc in workloads if not (doc.get("status") or {}).get("warning")]
        names = {parse_reference(ref)[0] for doc in passed for ref in secret_references(doc)}
        for gone in set(self._values) - names:
            del self._values[gone]
        self._errors = {}
        for name in sorted(names):
            doc = secrets.get(name)
            if doc is None:
                self._values.pop(name, None)
                self._errors[name] = f"secret '{name}' does not exist"
                continue
            cached = self._values.get(name)
            if cached is not None and cached.version == doc.get("version"):
                continue
            try:
                response = await self.client.get(f"/org/{self.org}/secret/{name}/-reveal")
            except httpx.HTTPError as exc:
                self._errors[name] = f"secret '{name}' could not be revealed ({type(exc).__name__})"
                continue
            if response.status_code != 200:
                self._values.pop(name, None)
                self._errors[name] = f"secret '{name}' could not be revealed (HTTP {response.status_code})"
                continue
            body = response.json()
            self._values[name] = _Revealed(body.get("version"), str(body.get("type") or ""), body.get("data"))

    def _get(self, reference: str) -> tuple[_Revealed, str | None]:
        name, key = parse_reference(reference)
        revealed = self._values.get(name)
        if revealed is None:
            why = self._errors.get(name, f"secret '{name}' is not known yet")
            raise SecretUnavailable(f"{reference}: {why}")
        if key is not None and not (isinstance(revealed.data, Mapping) and key in revealed.data):
            raise SecretUnavailable(f"{reference}: secret '{name}' has no key '{key}'")
        return revealed, key

    def resolve(self, reference: str) -> str:
        """The env value of ``reference`` (a :data:`~.plan.Resolver`)."""
        revealed, key = self._get(reference)
        if key is None:
            return _text(revealed.data)
        if revealed.type == "opaque" and key == "payload":
            return _payload(revealed.data).decode(errors="replace")
        return _text(revealed.data[key])

    def files(self, reference: str, path: str) -> list[SecretFile]:
        """The files of a secret volume ``reference`` mounted at ``path`` (a ``FileResolver``)."""
        revealed, key = self._get(reference)
        data = revealed.data
        if key is not None:
            if revealed.type == "opaque" and key == "payload":
                return [SecretFile(path, _payload(data))]
            return [SecretFile(path, _text(data[key]).encode())]
        if revealed.type == "opaque":
            return [SecretFile(path, _payload(data))]
        base = path.rstrip("/")
        if not isinstance(data, Mapping):
            return [SecretFile(f"{base}/{WHOLE_FILE}", _text(data).encode())]
        files = [SecretFile(f"{base}/{k}", _text(v).encode()) for k, v in sorted(data.items()) if v is not None]
        return [*files, SecretFile(f"{base}/{WHOLE_FILE}", _text(data).encode())]
