"""Tables for the terminal and the JSON results file. Pure formatting: no I/O but the write."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.loadgen import WrkResult
from bench.verdict import NOISE_NOTE, Target, mark, noted, ratio


@dataclass(frozen=True)
class Figure:
    """One load run; ``target`` applies to its req/s ratio to the ceiling."""

    label: str
    result: WrkResult
    target: Target | None = None


@dataclass(frozen=True)
class ScaleFigure:
    """The same request with few and with many items stored; the ratio is of p50 latency."""

    label: str
    small: WrkResult
    large: WrkResult
    target: Target

    @property
    def ratio(self) -> float | None:
        return ratio(self.large.p50_ms, self.small.p50_ms)

    @property
    def errors(self) -> int:
        return self.small.errors + self.large.errors


def _num(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def errors_cell(result: WrkResult) -> str:
    """The failed-request count, with the statuses when they were recorded (``2 [409:2]``)."""
    if not result.errors:
        return "0"
    codes = " ".join(f"{code}:{n}" for code, n in sorted(result.codes.items()))
    return f"{result.errors} [{codes}]" if codes else str(result.errors)


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns sized to their widest cell; the first left-aligned, the rest right-aligned.
    A note follows when a mark carries the ``*`` of a figure measured on a busy machine."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        parts = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in pairs]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    notes = [NOISE_NOTE] if any(str(row[-1]).endswith("*") for row in rows) else []
    return "\n".join([line(header), rule, *(line(r) for r in rows), *notes])


THROUGHPUT_HEADER = ("figure", "req/s", "p50 ms", "p99 ms", "errors", "other CPU", "x ceiling", "target", "mark")


def throughput_rows(figures: Sequence[Figure], ceiling: WrkResult) -> list[list[str]]:
    """One row per figure and the ceiling last; the ratio is req/s over the ceiling's."""
    rows = []
    for fig in figures:
        share = ratio(fig.result.rps, ceiling.rps)
        rows.append(
            [
                fig.label,
                _num(fig.result.rps, 0),
                _num(fig.result.p50_ms, 2),
                _num(fig.result.p99_ms, 2),
                errors_cell(fig.result),
                _num(fig.result.other_cores, 2),
                _num(share, 2),
                fig.target.describe() if fig.target else "",
                noted(mark(share, fig.target, fig.result.errors), fig.result.other_cores),
            ]
        )
    rows.append(
        [
            "ceiling (bare ASGI)",
            _num(ceiling.rps, 0),
            _num(ceiling.p50_ms, 2),
            _num(ceiling.p99_ms, 2),
            errors_cell(ceiling),
            _num(ceiling.other_cores, 2),
            "1.00",
            "",
            noted(mark(None, None, ceiling.errors), ceiling.other_cores),
        ]
    )
    return rows


def scale_header(small: int, large: int) -> tuple[str, ...]:
    return (
        "figure",
        f"p50 ms @{small:,}",
        f"p50 ms @{large:,}",
        f"req/s @{small:,}",
        f"req/s @{large:,}",
        "p50 ratio",
        "other CPU",
        "target",
        "mark",
    )


def scale_rows(figures: Sequence[ScaleFigure]) -> list[list[str]]:
    return [
        [
            f.label,
            _num(f.small.p50_ms, 2),
            _num(f.large.p50_ms, 2),
            _num(f.small.rps, 0),
            _num(f.large.rps, 0),
            _num(f.ratio, 2),
            _num(max(f.small.other_cores, f.large.other_cores), 2),
            f.target.describe(),
            noted(mark(f.ratio, f.target, f.errors), max(f.small.other_cores, f.large.other_cores)),
        ]
        for f in figures
    ]


MEMORY_HEADER = ("worker pid", "RSS MB", "target", "mark")


def memory_rows(rss: dict[int, float | None], target: Target) -> list[list[str]]:
    return [[str(pid), _num(mb, 1), target.describe(), mark(mb, target)] for pid, mb in sorted(rss.items())]


def result_doc(result: WrkResult) -> dict[str, Any]:
    return {
        "requests": result.requests,
        "duration_s": round(result.duration_s, 3),
        "rps": round(result.rps, 1),
        "p50_ms": round(result.p50_ms, 3),
        "p99_ms": round(result.p99_ms, 3),
        "status_errors": result.status_errors,
        "socket_errors": result.socket_errors,
        "status_codes": result.codes,
        "error_samples": result.samples,
        "other_cores": round(result.other_cores, 3),
    }


def write_json(doc: dict[str, Any], directory: Path, stamp: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stamp}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path
