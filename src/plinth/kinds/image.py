"""The ``image`` kind (docs.controlplane.com/reference/image): the container images of the org's registry.

On the platform an image record is created by pushing to ``{org}.registry.cpln.io``; its name
is ``NAME:TAG`` and ``repository``, ``tag``, ``manifest`` and ``digest`` are the registry's.
Plinth serves no registry, so:

- **No image ever exists**: nothing pushes, and Plinth invents none. Lists and queries answer
  empty pages; a GET, PATCH or DELETE of any name is a 404. This keeps the kind honest: clients
  (``cpln image get``, ``query``, policies with ``targetKind: image``) work, and see an empty
  registry.
- ``POST /org/{org}/image`` is refused with **403** "You can create an image only by pushing"
  (docs.controlplane.com/reference/image), whatever the caller's permissions; PUT is a 405 (images are never applied).
- Were one to exist, only ``description`` and ``tags`` would be the client's (``repository``,
  ``tag``, ``manifest`` and ``digest`` are server-owned), as the platform documents.
- No Terraform resource (``-o tf`` is a 400). Permissions: ``create`` (= push, implies ``pull``),
  ``pull`` (implies ``view``), ``edit``, ``delete``, ``view``, ``manage``.
"""

from __future__ import annotations

from plinth.kinds.base import COMMON_QUERY_PROPERTIES, Access, KindSpec, Presentation, Rules, Schema
from plinth.kinds.permissions import declare_permissions

#: The answer to a POST: images are created by pushing, which Plinth does not serve.
CREATE_REFUSAL = "You can create an image only by pushing"

IMAGE = KindSpec(
    name="image",
    scope="org",
    schema=Schema(
        server_fields=frozenset({"repository", "tag", "manifest", "digest"}),
    ),
    rules=Rules(
        create_refusal=CREATE_REFUSAL,
    ),
    access=Access(
        verbs=frozenset({"get", "list", "patch", "delete"}),
        # Permissions: create -> pull -> view (the vendor's access-control runbook).
        **declare_permissions(
            extra={"pull": "Pull the image"},
            implied={"create": ("pull",), "pull": ("view",)},
        ),
    ),
    presentation=Presentation(
        terraform_resource=None,
        text_columns=("NAME", "PULL", "DIGEST", "CREATED", "TAGS"),
        title="Image",
        query_properties=(*COMMON_QUERY_PROPERTIES, "repository", "tag", "digest"),
    ),
)
