"""Translations of API items into other tools' formats, shared by ``-o tf``/``-o crd`` and the
server's exporter endpoints. Pure functions: no HTTP, no server imports."""

from plinth.convert.crd import to_crd
from plinth.convert.terraform import to_terraform

__all__ = ["to_crd", "to_terraform"]
