"""The old name of :mod:`plinth.kinds.spec_model`, kept only while the workload package (written
on its own branch at the same time) still imports it. Import ``plinth.kinds.spec_model``; delete
this module once ``grep -r kinds._spec_model src`` finds nothing."""

from plinth.kinds.spec_model import Email, NonEmptyStr, Port, SpecModel, TopLevelModel, exactly_one, set_fields

__all__ = ["Email", "NonEmptyStr", "Port", "SpecModel", "TopLevelModel", "exactly_one", "set_fields"]
