"""Draw a table the way the npm ``table`` package does with the official CLI's settings.

Settings (docs/cli.md, Output formats): no left padding, one space of right padding, horizontal lines only at
the top, under the header and at the bottom; ``ramac`` ASCII borders for pipes, ``norc``
box-drawing borders on a terminal. Column width is the widest line of any cell, measured in
terminal columns (East Asian wide characters count two).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from plinth.cli.errors import FormatError


@dataclass(frozen=True, slots=True)
class Border:
    top: tuple[str, str, str, str]  # left, body, join, right
    join: tuple[str, str, str, str]
    bottom: tuple[str, str, str, str]
    body: tuple[str, str, str]  # left, join, right


RAMAC = Border(("+", "-", "+", "+"), ("|", "-", "|", "|"), ("+", "-", "+", "+"), ("|", "|", "|"))
NORC = Border(("┌", "─", "┬", "┐"), ("├", "─", "┼", "┤"), ("└", "─", "┴", "┘"), ("│", "│", "│"))

_CONTROL = re.compile("[\u0001-\u0006\u0008\u0009\u000b-\u001a]")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes (the ``string-width`` rules, simplified)."""
    width = 0
    for ch in _ANSI.sub("", text):
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def draw(rows: list[list[str]], border: Border = RAMAC) -> str:
    """``rows[0]`` is the header. Returns the table text, ending with a newline."""
    for row in rows:
        for cell in row:
            if _CONTROL.search(cell):
                raise FormatError("Table data must not contain control characters.")
    split_rows = [[cell.split("\n") for cell in row] for row in rows]
    widths = [
        max(display_width(line) for cells in split_rows for line in cells[column]) for column in range(len(rows[0]))
    ]
    out = [_rule(border.top, widths)]
    for index, row_lines in enumerate(split_rows):
        height = max(len(lines) for lines in row_lines)
        for line_number in range(height):
            cells = []
            for column, lines in enumerate(row_lines):
                line = lines[line_number] if line_number < len(lines) else ""
                cells.append(line + " " * (widths[column] - display_width(line) + 1))
            out.append(border.body[0] + border.body[1].join(cells) + border.body[2])
        if index == 0 and len(split_rows) > 1:
            out.append(_rule(border.join, widths))
    out.append(_rule(border.bottom, widths))
    return "\n".join(out) + "\n"


class StreamedTable:
    """A table printed a row at a time (``rest get --watch``): the top rule and the header come
    with the first row, the bottom rule with :meth:`end`. Columns are as wide as the widest cell
    seen so far, so a later, wider cell pushes its row's borders right instead of wrapping."""

    def __init__(self, header: list[str], border: Border = RAMAC):
        self._header = header
        self._border = border
        self._widths = [display_width(cell) for cell in header]
        self._started = False

    def row(self, cells: list[str]) -> str:
        """The text that prints ``cells`` (with the table's head before the first row)."""
        for cell in cells:
            if _CONTROL.search(cell) or "\n" in cell:
                cells = [_CONTROL.sub(" ", c).replace("\n", " ") for c in cells]
                break
        self._widths = [max(w, display_width(c)) for w, c in zip(self._widths, cells, strict=True)]
        out = []
        if not self._started:
            self._started = True
            out += [_rule(self._border.top, self._widths), self._line(self._header)]
            out.append(_rule(self._border.join, self._widths))
        out.append(self._line(cells))
        return "\n".join(out) + "\n"

    def end(self) -> str:
        return _rule(self._border.bottom, self._widths) + "\n" if self._started else ""

    def _line(self, cells: list[str]) -> str:
        body = self._border.body
        padded = [c + " " * (w - display_width(c) + 1) for c, w in zip(cells, self._widths, strict=True)]
        return body[0] + body[1].join(padded) + body[2]


def _rule(parts: tuple[str, str, str, str], widths: list[int]) -> str:
    left, body, join, right = parts
    return left + join.join(body * (width + 1) for width in widths) + right
