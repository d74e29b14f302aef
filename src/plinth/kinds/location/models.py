"""A location's schema (types-ts location.ts): ``spec.enabled``, and the top-level ``provider`` and
``region`` a client may send back as it read them (only ``provider: byok`` is its own choice)."""

from __future__ import annotations

from typing import Literal

from plinth.kinds.spec_model import NonEmptyStr, SpecModel, TopLevelModel

Provider = Literal["aws", "gcp", "azure", "byok", "linode", "vultr", "equinix", "oci"]
BYOK = "byok"


class LocationSpec(SpecModel):
    enabled: bool = True


class LocationFields(TopLevelModel):
    """The top-level fields a client may send for a location."""

    provider: Provider | None = None
    region: NonEmptyStr | None = None
