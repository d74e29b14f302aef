"""What each secret type's ``data`` must be (types-ts secret.ts), every problem at its JSON path.

No message repeats a value: a bad certificate "is not a PEM certificate", a bad access key
"must start with AKIA". Dictionary keys and field names do appear (in paths): they name values,
they are not values.

- Required strings are non-empty (the platform validates with Joi, whose strings refuse "").
- ``opaque``: ``payload``; ``encoding`` ``plain`` (the default) or ``base64``, when base64 the
  payload must decode. ``userpass``: ``username``, ``password``, ``encoding`` likewise (for the
  password).
- ``tls``: ``cert`` one or more PEM certificates; ``key`` (optional) an unencrypted PEM private
  key matching the first certificate; ``chain`` (optional) PEM certificates.
- ``keypair``: ``secretKey`` a PEM (or OpenSSH) private key, opened with ``passphrase`` when it
  is encrypted; ``publicKey`` (optional) a PEM or OpenSSH public key matching it.
- ``aws``: ``accessKey`` starting ``AKIA``, ``secretKey``; ``roleArn`` starting ``arn:`` and
  ``externalId`` optional. ``ecr``: the same and ``repos``, 1 to 20 distinct
  ``ACCOUNT.dkr.ecr.REGION.amazonaws.com[/REPO]``.
- ``azure-connector``: ``url`` (https), ``code``. ``nats-account``: ``accountId``
  ``^A[A-Z0-9]{55}$``, ``privateKey`` ``^SA[A-Z0-9]{56}$``.
- ``dictionary``: keys ``[-._a-zA-Z0-9]+``, values strings (empty allowed).
- ``docker``, ``gcp``, ``azure-sdk``: a string holding JSON: a Docker config whose ``auths`` has
  at least one entry, each with ``auth`` or ``username`` and ``password``; a service account
  key file (``type: service_account`` and its nine other fields); ``subscriptionId``,
  ``tenantId`` and ``clientId`` as UUIDs and a ``clientSecret``. Problems inside the string are
  reported at ``data``, naming the JSON field.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from plinth.errors import FieldError
from plinth.kinds.base import Item, KindContext
from plinth.kinds.secret import pem
from plinth.kinds.secret.models import STRING_TYPES

ENCODINGS = ("plain", "base64")
REPOS_MAX = 20
DICTIONARY_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
ECR_REPO = re.compile(r"^[0-9]{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(/\S+)?$")
ECR_SHAPE = "ACCOUNT.dkr.ecr.REGION.amazonaws.com[/REPO] (a 12-digit account)"
NATS_ACCOUNT = re.compile(r"^A[A-Z0-9]{55}$")
NATS_PRIVATE_KEY = re.compile(r"^SA[A-Z0-9]{56}$")
GCP_FIELDS = (
    "type",
    "project_id",
    "private_key_id",
    "private_key",
    "client_email",
    "client_id",
    "auth_uri",
    "token_uri",
    "auth_provider_x509_cert_url",
    "client_x509_cert_url",
)
AZURE_SDK_IDS = ("subscriptionId", "tenantId", "clientId")
_SHOWN_KEY = 60

Problems = list[FieldError]
FieldCheck = Callable[[Any, str], Problems]


def key_path(prefix: str, key: str) -> str:
    """``data.KEY``, or ``data["odd key"]`` when the key is not a plain name (cut when long)."""
    if DICTIONARY_KEY.fullmatch(key) and len(key) <= _SHOWN_KEY and "." not in key:
        return f"{prefix}.{key}"
    shown = key if len(key) <= _SHOWN_KEY else key[:_SHOWN_KEY] + "..."
    return f"{prefix}[{json.dumps(shown)}]"


# -- field checks ---------------------------------------------------------------------------


def text(value: Any, path: str) -> Problems:
    if not isinstance(value, str):
        return [FieldError(path, "must be a string")]
    if value == "":
        return [FieldError(path, "must not be empty")]
    return []


def any_text(value: Any, path: str) -> Problems:
    return [] if isinstance(value, str) else [FieldError(path, "must be a string")]


def encoding(value: Any, path: str) -> Problems:
    return [] if value in ENCODINGS else [FieldError(path, "must be 'plain' or 'base64'")]


def text_that(holds: Callable[[str], bool], message: str) -> FieldCheck:
    """A non-empty string for which ``holds``; ``message`` otherwise."""

    def check(value: Any, path: str) -> Problems:
        problems = text(value, path)
        if not problems and not holds(value):
            problems.append(FieldError(path, message))
        return problems

    return check


def starting(prefix: str, what: str) -> FieldCheck:
    return text_that(lambda v: v.startswith(prefix), f"must be {what} (starting with '{prefix}')")


def matching(pattern: re.Pattern[str], what: str) -> FieldCheck:
    return text_that(lambda v: pattern.fullmatch(v) is not None, f"must be {what} ({pattern.pattern})")


def _is_https_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.netloc)


https_url = text_that(_is_https_url, "must be an https URL")


def repos(value: Any, path: str) -> Problems:
    if not isinstance(value, list):
        return [FieldError(path, "must be an array of ECR repository URIs")]
    if not 1 <= len(value) <= REPOS_MAX:
        return [FieldError(path, f"must list 1 to {REPOS_MAX} repositories")]
    problems: Problems = []
    seen: set[str] = set()
    for i, repo in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(repo, str) or not ECR_REPO.fullmatch(repo):
            problems.append(
                FieldError(where, "must be ACCOUNT.dkr.ecr.REGION.amazonaws.com[/REPO] (a 12-digit account)")
            )
        elif repo in seen:
            problems.append(FieldError(where, "is listed twice"))
        else:
            seen.add(repo)
    return problems


# -- object types -----------------------------------------------------------------------------


def _object(data: Any, fields: Mapping[str, FieldCheck], required: tuple[str, ...], what: str) -> Problems:
    if not isinstance(data, dict):
        return [FieldError("data", f"must be an object for the type {what}")]
    problems: Problems = []
    for key in data:
        if key not in fields:
            problems.append(FieldError(key_path("data", key), "unknown field"))
    for name, check in fields.items():
        if data.get(name) is None:
            if name in required:
                problems.append(FieldError(f"data.{name}", "is required"))
            continue
        problems += check(data[name], f"data.{name}")
    return problems


def _base64_problem(data: dict[str, Any], field: str) -> Problems:
    value = data.get(field)
    if data.get("encoding") != "base64" or not isinstance(value, str) or value == "":
        return []
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return [FieldError(f"data.{field}", "must be base64 (its encoding is base64)")]
    return []


def opaque(data: Any) -> Problems:
    problems = _object(data, {"payload": text, "encoding": encoding}, ("payload",), "opaque")
    return problems + (_base64_problem(data, "payload") if isinstance(data, dict) else [])


def userpass(data: Any) -> Problems:
    fields = {"username": text, "password": text, "encoding": encoding}
    problems = _object(data, fields, ("username", "password"), "userpass")
    return problems + (_base64_problem(data, "password") if isinstance(data, dict) else [])


def tls(data: Any) -> Problems:
    problems = _object(data, {"cert": text, "key": text, "chain": text}, ("cert",), "tls")
    if not isinstance(data, dict):
        return problems
    named = {e.path for e in problems}
    found = pem.tls_problems(data.get("cert"), data.get("key"), data.get("chain"))
    return problems + [FieldError(f"data.{f}", m) for f, m in found.items() if f"data.{f}" not in named]


def keypair(data: Any) -> Problems:
    fields = {"secretKey": text, "publicKey": text, "passphrase": text}
    problems = _object(data, fields, ("secretKey",), "keypair")
    if not isinstance(data, dict):
        return problems
    named = {e.path for e in problems}
    found = pem.keypair_problems(data.get("secretKey"), data.get("publicKey"), data.get("passphrase"))
    return problems + [FieldError(f"data.{f}", m) for f, m in found.items() if f"data.{f}" not in named]


_AWS_FIELDS: dict[str, FieldCheck] = {
    "accessKey": starting("AKIA", "an AWS access key id"),
    "secretKey": text,
    "roleArn": starting("arn:", "an ARN"),
    "externalId": text,
}


def aws(data: Any) -> Problems:
    return _object(data, _AWS_FIELDS, ("accessKey", "secretKey"), "aws")


def ecr(data: Any) -> Problems:
    return _object(data, {**_AWS_FIELDS, "repos": repos}, ("accessKey", "secretKey", "repos"), "ecr")


def azure_connector(data: Any) -> Problems:
    return _object(data, {"url": https_url, "code": text}, ("url", "code"), "azure-connector")


def nats_account(data: Any) -> Problems:
    fields = {
        "accountId": matching(NATS_ACCOUNT, "a NATS account id"),
        "privateKey": matching(NATS_PRIVATE_KEY, "a NATS account seed"),
    }
    return _object(data, fields, ("accountId", "privateKey"), "nats-account")


def dictionary(data: Any) -> Problems:
    if not isinstance(data, dict):
        return [FieldError("data", "must be an object of string values for the type dictionary")]
    problems: Problems = []
    for key, value in data.items():
        path = key_path("data", key)
        if not DICTIONARY_KEY.fullmatch(key):
            problems.append(FieldError(path, "keys may hold only letters, digits, '-', '.' and '_'"))
        problems += any_text(value, path)
    return problems


# -- JSON string types ------------------------------------------------------------------------


def _json_document(data: Any, what: str) -> tuple[dict[str, Any] | None, Problems]:
    if not isinstance(data, str):
        return None, [FieldError("data", f"must be a string holding {what} as JSON (not an object)")]
    try:
        parsed = json.loads(data)
    except ValueError:
        return None, [FieldError("data", f"must hold {what} as JSON: the string does not parse")]
    if not isinstance(parsed, dict):
        return None, [FieldError("data", f"must hold {what} as a JSON object")]
    return parsed, []


def docker(data: Any) -> Problems:
    config, problems = _json_document(data, "a Docker config (its auths)")
    if config is None:
        return problems
    auths = config.get("auths")
    if not isinstance(auths, dict) or not auths:
        return [FieldError("data", "the Docker config's 'auths' must be an object with at least one registry")]
    for entry in auths.values():
        has_auth = isinstance(entry, dict) and isinstance(entry.get("auth"), str) and entry["auth"] != ""
        has_login = isinstance(entry, dict) and all(
            isinstance(entry.get(f), str) and entry[f] != "" for f in ("username", "password")
        )
        if not (has_auth or has_login):
            return [FieldError("data", "each registry in 'auths' needs 'auth', or 'username' and 'password'")]
    return []


def gcp(data: Any) -> Problems:
    key, problems = _json_document(data, "a GCP service account key")
    if key is None:
        return problems
    missing = [f for f in GCP_FIELDS if not isinstance(key.get(f), str) or key[f] == ""]
    if missing:
        return [FieldError("data", f"the service account key needs {', '.join(repr(f) for f in missing)}")]
    if key["type"] != "service_account":
        return [FieldError("data", "the key's 'type' must be 'service_account'")]
    return []


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def azure_sdk(data: Any) -> Problems:
    creds, problems = _json_document(data, "Azure SDK credentials")
    if creds is None:
        return problems
    problems = [
        FieldError("data", f"the credentials' '{f}' must be a UUID")
        for f in AZURE_SDK_IDS
        if not _is_uuid(creds.get(f))
    ]
    if not isinstance(creds.get("clientSecret"), str) or creds["clientSecret"] == "":
        problems.append(FieldError("data", "the credentials need a 'clientSecret'"))
    return problems


CHECKS: dict[str, Callable[[Any], Problems]] = {
    "opaque": opaque,
    "tls": tls,
    "gcp": gcp,
    "aws": aws,
    "ecr": ecr,
    "userpass": userpass,
    "keypair": keypair,
    "azure-sdk": azure_sdk,
    "azure-connector": azure_connector,
    "docker": docker,
    "dictionary": dictionary,
    "nats-account": nats_account,
}
assert set(CHECKS) >= STRING_TYPES


def prepare_secret(item: Item, old: Item | None, ctx: KindContext) -> None:
    """A replace without ``data`` keeps the stored values (a GET never shows them, so a client
    writing back what it read cannot mean to erase them); optional fields sent as ``null`` are
    left out; ``opaque`` and ``userpass`` get ``encoding: plain`` when they name none."""
    if item.get("data") is None and old is not None and old.get("data") is not None:
        item["data"] = copy.deepcopy(old["data"])
    data = item.get("data")
    if isinstance(data, dict) and item.get("type") != "dictionary":
        data = {k: v for k, v in data.items() if v is not None}
        if item.get("type") in ("opaque", "userpass"):
            data.setdefault("encoding", "plain")
        item["data"] = data


def validate_secret(item: Item, old: Item | None, ctx: KindContext) -> list[FieldError]:
    if item.get("data") is None:
        return [FieldError("data", "is required")]
    return CHECKS[item["type"]](item["data"])
