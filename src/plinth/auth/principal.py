"""A principal: the identity a request acts as."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Principal:
    """``link`` is the principal's full link (``/org/acme/serviceaccount/admin``).

    ``server_admin`` principals may create orgs (the bootstrap admin holds it).
    """

    org: str
    kind: str
    name: str
    server_admin: bool = False

    @property
    def link(self) -> str:
        return f"/org/{self.org}/{self.kind}/{self.name}"
