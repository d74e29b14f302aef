"""The ``location`` kind (docs.controlplane.com/reference/location): where GVCs are placed. Org-scoped.

Every org holds the built-in locations of Plinth's catalog (``catalog.py``), seeded by the
server (``server/bootstrap.py``: new orgs when they are created, existing ones at server start)
with ``origin: builtin``, ``provider`` and ``region`` from the catalog. A client reads them and
changes ``spec.enabled``, the description and the tags (PATCH or PUT); it cannot create or
delete them. A client creates BYOK locations beside them (``provider: byok``, as ``cpln
location create`` sends), ``origin: custom``, and deletes them.

Decisions where the sources are silent:

- The catalog is Plinth's own (the platform publishes no list): the well-known AWS, GCP and Azure regions; see
  ``catalog.py`` and docs/api.md. Built-in locations are enabled to start with.
- Permissions (docs.controlplane.com/reference/location) have no ``delete``; a BYOK location is deletable (the
  Terraform provider's ``cpln_custom_location`` deletes on destroy), so deleting one needs
  ``manage``, the permission that covers everything else a location has.
- A GVC's ``staticPlacement.locationLinks`` must name existing, enabled locations (a 400 at the
  link's path; ``kinds/gvc``). So a location a GVC links to cannot be disabled or deleted: both
  are a 409 naming the GVCs (the ``protected_change`` and ``protects`` declarations), the
  platform's "disabling removes the workloads there" having nothing to remove here. A GVC that
  selects by ``locationQuery`` just stops being placed in a location that is disabled or
  deleted, and starts being placed in one that is created or enabled (the engine refreshes
  the statuses of what is in it).
- BYOK locations carry no ``install``/``uninstall`` links: Plinth installs no agent, so ``cpln
  location install`` stops with the official CLI's own "does not have a link" message.
- Terraform: ``cpln_location`` for a built-in location, ``cpln_custom_location`` for a BYOK
  one (``convert/terraform.py`` picks by ``origin``).

Package layout: ``catalog`` (the built-in locations, as data), ``models`` (the schema),
``rules`` (prepare, validate, status).
"""

from __future__ import annotations

from plinth.kinds.base import (
    COMMON_QUERY_PROPERTIES,
    Access,
    KindExample,
    KindSpec,
    Presentation,
    Rules,
    Schema,
    Status,
)
from plinth.kinds.location.catalog import BUILTIN_LOCATIONS, BuiltinLocation, builtin_description
from plinth.kinds.location.models import LocationFields, LocationSpec
from plinth.kinds.location.rules import compute_location_status, disabling, prepare_location, validate_location
from plinth.kinds.permissions import declare_permissions

__all__ = ["BUILTIN_LOCATIONS", "LOCATION", "BuiltinLocation", "builtin_description"]

LOCATION = KindSpec(
    name="location",
    scope="org",
    schema=Schema(
        spec_model=LocationSpec,
        top_level_model=LocationFields,
        server_fields=frozenset({"origin"}),
        immutable=("provider", "region"),
    ),
    rules=Rules(
        prepare=prepare_location,
        validate=validate_location,
        protected_change=disabling,
    ),
    status=Status(
        compute=compute_location_status,
    ),
    access=Access(
        # Permissions: No delete, and use (docs.controlplane.com/reference/location); deleting a BYOK
        # location needs manage.
        **declare_permissions(
            extra={"use": "Place GVCs in the location"},
            implied={"use": ("view",)},
            without=("delete",),
        ),
        delete_permission="manage",
    ),
    presentation=Presentation(
        terraform_resource="cpln_location",
        text_columns=("NAME", "DESCRIPTION", "PROVIDER", "ENABLED", "REGION", "ORIGIN", "TAGS"),
        query_properties=(*COMMON_QUERY_PROPERTIES, "origin", "provider", "region"),
        short_names=("loc",),
        template={"name": "", "description": "", "tags": {}, "provider": "byok"},
    ),
    example=KindExample(
        valid={"name": "edge{n}", "provider": "byok", "tags": {"site": "basement"}},
        invalid=(
            ({"name": "edge{n}", "provider": "aws"}, "provider"),
            ({"name": "edge{n}", "spec": {"enabled": "yes"}}, "spec.enabled"),
            ({"name": "edge{n}", "region": "us-east-1"}, "region"),
        ),
        update={"spec": {"enabled": False}},
    ),
)
