"""The Formatter contract and the registry the ``--output`` choices are derived from.

A formatter is a pure function of the decoded response and a :class:`RenderContext`: no
network, no printing, no ``isatty``. It returns the text the official CLI's ``format()``
returns; the writer adds the final newline (``console.log`` does the same in the official CLI).

Two formats (``tf`` and ``crd``) render what an exporter returned rather than the response
itself; they say so with ``export_service``, and the ``rest`` command fetches that document
first (docs/cli.md, Output formats: ``tf``, ``crd``). The formatter stays pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a formatter may depend on besides the document.

    ``ts`` is ``iso``, ``local``, ``age`` or ``None`` (ISO); ``now`` is the clock for ``age``;
    ``tz`` and ``locale`` drive ``local`` (from ``TZ`` and ``LC_ALL``/``LANG``); ``color``
    means a terminal is attached and colour was not turned off.
    """

    color: bool = False
    ts: str | None = None
    now: datetime = datetime(1970, 1, 1, tzinfo=UTC)
    tz: str | None = None
    locale: str = "en-US"


class Formatter(Protocol):
    """``render(doc, ctx) -> str``: pure; raises ``plinth.cli.errors.FormatError`` when the
    document cannot be shown in this format."""

    @property
    def name(self) -> str: ...

    @property
    def export_service(self) -> str | None:
        """The discovery key of the exporter whose answer this formatter renders, if any."""

    def render(self, doc: Any, ctx: RenderContext) -> str: ...


@dataclass(frozen=True, slots=True)
class FunctionFormatter:
    """A formatter made from a plain function."""

    name: str
    function: Callable[[Any, RenderContext], str]
    export_service: str | None = None

    def render(self, doc: Any, ctx: RenderContext) -> str:
        return self.function(doc, ctx)


_REGISTRY: dict[str, Formatter] = {}


def register(formatter: Formatter) -> Formatter:
    _REGISTRY[formatter.name] = formatter
    return formatter


def registry() -> dict[str, Formatter]:
    return dict(_REGISTRY)
