"""Output formats, selected by name (``-o``). The names listed here are the ``--output`` choices.

The list is static so that building the command line does not import any formatter module
(start-up time); ``get_formatter`` imports the one asked for, and a test checks that the two
agree.
"""

from __future__ import annotations

import importlib

from plinth.cli.output.base import Formatter, RenderContext, registry

#: format name -> the module that registers it, in the order the help lists them
FORMAT_MODULES: dict[str, str] = {
    "text": "plinth.cli.output.text",
    "json": "plinth.cli.output.structured",
    "yaml": "plinth.cli.output.structured",
    "json-slim": "plinth.cli.output.structured",
    "yaml-slim": "plinth.cli.output.structured",
    "tf": "plinth.cli.output.exported",
    "crd": "plinth.cli.output.exported",
    "names": "plinth.cli.output.names",
}
FORMAT_NAMES: tuple[str, ...] = tuple(FORMAT_MODULES)


def get_formatter(name: str) -> Formatter:
    """The formatter registered under ``name``; ``KeyError`` lists the known names."""
    if name not in FORMAT_MODULES:
        raise KeyError(f"unknown output format {name!r}; choose one of: {', '.join(FORMAT_NAMES)}")
    importlib.import_module(FORMAT_MODULES[name])
    return registry()[name]


__all__ = ["FORMAT_NAMES", "Formatter", "RenderContext", "get_formatter"]
