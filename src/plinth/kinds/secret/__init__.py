"""The ``secret`` kind (docs.controlplane.com/reference/secret): credentials and keys workloads and GVCs refer to,
sealed at rest.

Top-level fields: ``type`` (one of twelve, immutable) and ``data``, whose shape the type decides
(``rules.py``). ``data`` is the kind's one sealed field (``KindSpec.schema.sealed``): the engine seals it
with the server's secrets key before anything is stored (``engine/sealed.py``,
``plinth.sealing``), so the stored document, its events, exports and the logs never hold it.

- A plain GET, a list, ``-query``, ``-eventlog``, ``-o tf``/``-o crd`` and the answers of writes
  show the secret without ``data``: the field is **absent** (the sources do not say; absent is what
  clients already handle, and neither null nor a mask could be mistaken for a value).
- ``GET .../secret/{name}/-reveal`` answers the item with ``data`` in the shape it was written
  (strings stay strings) and needs ``reveal`` (which ``edit`` and ``manage`` imply).
- PATCH merges into the stored ``data`` (opened for the merge): ``cpln secret edit`` reads
  ``-reveal``, edits and PATCHes the result back. A write whose values are the ones stored is a
  no-op (compared in the clear, not as ciphertext).

Package layout: ``models`` (the top-level schema), ``rules`` (``prepare`` and the per-type
checks), ``pem`` (certificate and key parsing), ``actions`` (``-reveal``, ``-for/type``).

Decisions where the sources are silent or disagree:

- GET without ``-reveal``: ``data`` is left out of everything but ``-reveal`` (above).
- default encoding: ``opaque`` (and ``userpass``) without ``encoding`` get ``plain``, the API's, the
  provider's and the runbooks' default; the official CLI always sends one (``base64`` for
  ``create-opaque``), so its secrets keep it.
- ``type`` cannot change (the provider replaces the resource; the API's answer is unconfirmed):
  a 400 at ``type``.
- A replace (PUT, ``cpln apply``) without ``data`` keeps the stored values: the GET form has no
  ``data``, so applying what was read back must not erase the secret.
- A ``tls`` key must match the certificate and a ``keypair`` public key the private key; an
  ``ecr`` repository may be listed once.
- ``GET .../secret/-for/type/{type}`` (listed only in the CLI's route map, semantics unknown) is
  not served; ``-query`` by ``type`` does that.
"""

from __future__ import annotations

from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Access, KindExample, KindSpec, Presentation, Rules, Schema
from plinth.kinds.permissions import declare_permissions
from plinth.kinds.secret.actions import FOR_TYPE, REVEAL
from plinth.kinds.secret.models import SecretFields
from plinth.kinds.secret.rules import prepare_secret, validate_secret

SECRET = KindSpec(
    name="secret",
    scope="org",
    schema=Schema(
        top_level_model=SecretFields,
        sealed=("data",),
        immutable=("type",),
    ),
    rules=Rules(
        prepare=prepare_secret,
        validate=validate_secret,
    ),
    access=Access(
        # Permissions: reveal reads the values (implied by edit); reveal and use each imply view
        # (docs.controlplane.com/reference/secret).
        **declare_permissions(
            extra={"reveal": "Read the secret's values", "use": "Reference the secret from workloads"},
            implied={"edit": ("reveal", "view"), "reveal": ("view",), "use": ("view",)},
        ),
    ),
    presentation=Presentation(
        terraform_resource="cpln_secret",
        text_columns=("NAME", "DESCRIPTION", "TYPE", "CREATED", "TAGS"),
        title="Secret",
        query_properties=(*COMMON_QUERY_PROPERTIES, "type"),
        template={
            "name": "",
            "description": "",
            "tags": {},
            "type": "opaque",
            "data": {"payload": "change me", "encoding": "plain"},
        },
    ),
    actions=(REVEAL, FOR_TYPE),
    example=KindExample(
        valid={"name": "sec{n}", "type": "opaque", "data": {"payload": "aGVsbG8=", "encoding": "base64"}},
        invalid=(
            (
                {"name": "sec{n}", "type": "opaque", "data": {"payload": "not base64!", "encoding": "base64"}},
                "data.payload",
            ),
            ({"name": "sec{n}", "type": "opaque"}, "data"),
            ({"name": "sec{n}", "type": "dictionary", "data": {"ok": "1", "bad key": "2"}}, 'data["bad key"]'),
            ({"name": "sec{n}", "type": "tls", "data": {"cert": "not a certificate"}}, "data.cert"),
            ({"name": "sec{n}", "type": "docker", "data": {"auths": {}}}, "data"),
            ({"name": "sec{n}", "type": "vault", "data": {}}, "type"),
        ),
        update={"data": {"payload": "d29ybGQ="}},
    ),
)
