"""The gap report as one self-contained HTML file: tables, and plots drawn as inline SVG by this module.

No script, no stylesheet or font from elsewhere, no image file: the page opens the same offline,
from an e-mail attachment or a shared drive. The words come from the presenter; this module adds
only markup.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from bot.presenter import reports
from core import Report

ANSWERED = "#2f7d4f"
REFUSED = "#c8553d"
INK = "#1f2328"
MUTED = "#656d76"
GRID = "#d0d7de"
SECTIONS_SHOWN = 15  # the most quoted sections; the never-quoted ones are all listed

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
       margin: 0 auto; padding: 24px 32px 48px; max-width: 1100px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
.period, .note, .muted { color: #656d76; }
.cards { display: flex; gap: 12px; margin: 16px 0; flex-wrap: wrap; }
.card { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 16px; min-width: 120px; }
.card b { display: block; font-size: 24px; }
.plots { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 8px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #eaeef2; }
th { font-weight: 600; color: #656d76; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.nw { white-space: nowrap; }
blockquote { margin: 2px 0 2px; padding: 0 0 0 10px; border-left: 3px solid #d0d7de; }
.caption { color: #656d76; font-size: 12px; }
ul.flat { columns: 2; padding-left: 18px; margin: 4px 0; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; border-radius: 2px; }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = (), nowrap: Sequence[int] = ()
) -> str:
    """A table; cells are HTML already (escaped by the caller); `numeric` columns right-aligned, `nowrap` unbroken."""

    def cls(i: int) -> str:
        names = [n for n, cols in (("n", numeric), ("nw", nowrap)) if i in cols]
        return f' class="{" ".join(names)}"' if names else ""

    head = "".join(f"<th{cls(i)}>{_e(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _axis(peak: int) -> tuple[int, int]:
    """The axis top and gridline step: about four steps of 1, 2 or 5 × 10ⁿ, so gridlines fall on round numbers."""
    step = 1
    while not any(f * step * 4 >= peak for f in (1, 2, 5)):
        step *= 10
    step *= next(f for f in (1, 2, 5) if f * step * 4 >= peak)
    return max(step * math.ceil(peak / step), step), step


def trend_svg(report: Report, width: int = 640, height: int = 220) -> str:
    """Answered and refused questions per day, as stacked bars."""
    left, right, top, bottom = 36, 8, 10, 28
    plot_w, plot_h = width - left - right, height - top - bottom
    days = report.days
    peak, tick_step = _axis(max((d.counts.asked for d in days), default=0))
    slot = plot_w / max(len(days), 1)
    bar = max(slot * 0.75, 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(reports.REPORT_SECTIONS["trend"])}">'
    ]
    for tick in range(0, peak + 1, tick_step):
        y = top + plot_h - plot_h * tick / peak
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>')
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="{MUTED}">{tick}</text>'
        )
    for i, day in enumerate(days):
        x = left + i * slot + (slot - bar) / 2
        base = float(top + plot_h)
        for value, colour in ((day.counts.answered, ANSWERED), (day.counts.refused, REFUSED)):
            if value:
                h = plot_h * value / peak
                base -= h
                parts.append(
                    f'<rect x="{x:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                    f"<title>{_e(day.day)}: {value}</title></rect>"
                )
    # About eight dates under the axis, the last day always among them.
    step = max(math.ceil(len(days) / 8), 1)
    shown = list(range(0, len(days), step))
    if shown and len(days) - 1 - shown[-1] >= step / 2:
        shown.append(len(days) - 1)
    elif shown:
        shown[-1] = len(days) - 1
    for i in dict.fromkeys(shown):
        x = left + i * slot + slot / 2
        parts.append(
            f'<text x="{x:.1f}" y="{height - 8}" text-anchor="middle" font-size="11" fill="{MUTED}">'
            f"{_e(days[i].day[5:])}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def reasons_svg(report: Report, width: int = 360) -> str:
    """Refusals by reason, as horizontal bars."""
    rows = list(report.reasons.items())
    row_h, label_w = 26, 215
    height = max(len(rows), 1) * row_h + 8
    peak = max((n for _, n in rows), default=1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(reports.REPORT_SECTIONS["reasons"])}">'
    ]
    for i, (reason, n) in enumerate(rows):
        y = 4 + i * row_h
        w = (width - label_w - 40) * n / peak
        parts.append(
            f'<text x="0" y="{y + 16}" font-size="12" fill="{INK}">{_e(reports.reason_label(reason))}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="16" rx="2" fill="{REFUSED}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 16}" font-size="12" fill="{INK}">{n}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _section(key: str, body: str) -> str:
    return f'<section id="{key}"><h2>{_e(reports.REPORT_SECTIONS[key])}</h2>{body}</section>'


def _or_none(rows: Sequence[object], body: str) -> str:
    return body if rows else f'<p class="muted">{_e(reports.REPORT_NONE)}</p>'


def _cards(report: Report) -> str:
    """The headline figures: asked, answered, refused, 👍 and 👎."""
    c = reports.REPORT_COLUMNS
    totals = report.totals
    return "".join(
        f'<div class="card"><b>{_e(value)}</b>{_e(label)}</div>'
        for label, value in (
            (c["asked"], totals.asked),
            (c["answered"], totals.answered),
            (c["refused"], f"{totals.refused} ({reports.percent(totals.refused, totals.asked)})"),
            (c["up"], report.up),
            (c["down"], report.down),
        )
    )


def _plots(report: Report) -> str:
    """The questions per day and the refusals by reason, side by side."""
    c = reports.REPORT_COLUMNS
    legend = (
        f'<div class="legend muted"><span style="background:{ANSWERED}"></span>{_e(c["answered"])}'
        f'<span style="background:{REFUSED}"></span>{_e(c["refused"])}</div>'
    )
    return (
        '<div class="plots">'
        f"<div><h2>{_e(reports.REPORT_SECTIONS['trend'])}</h2>{trend_svg(report)}{legend}</div>"
        f"<div><h2>{_e(reports.REPORT_SECTIONS['reasons'])}</h2>"
        f"{_or_none(list(report.reasons), reasons_svg(report))}</div>"
        "</div>"
    )


def _surfaces(report: Report) -> str:
    """Questions per surface."""
    c = reports.REPORT_COLUMNS
    return _table(
        [c["surface"], c["asked"], c["answered"], c["refused"], c["rate"]],
        (
            [_e(name), str(n.asked), str(n.answered), str(n.refused), reports.percent(n.refused, n.asked)]
            for name, n in report.surfaces.items()
        ),
        numeric=(1, 2, 3, 4),
    )


def _gaps(report: Report) -> str:
    """Refused questions, grouped by meaning, with the nearest section."""
    c = reports.REPORT_COLUMNS
    return _table(
        [c["times"], c["question"], c["nearest"], c["surfaces"], c["last"]],
        (
            [
                str(g.count),
                f"<b>{_e(g.question)}</b>"
                + "".join(f'<div class="muted">{_e(q)}</div>' for q in g.examples if q != g.question),
                (f'{_e(g.closest.heading)} <span class="muted">({g.closest.score:.2f})</span>' if g.closest else "–"),
                _e(", ".join(g.surfaces)),
                _e(g.last_asked[:10]),
            ]
            for g in report.gaps
        ),
        numeric=(0,),
        nowrap=(4,),
    )


def _disliked(report: Report) -> str:
    """Answers marked 👎, with what they quoted."""
    c = reports.REPORT_COLUMNS
    return _table(
        ["👎", c["question"], c["quotes"], c["surface"], c["when"]],
        (
            [
                str(d.down),
                _e(d.question),
                "".join(
                    f'<blockquote>{_e(q.text)}<div class="caption">📄 {_e(q.caption)}</div></blockquote>'
                    for q in d.quotes
                )
                or f'<span class="muted">{_e(reports.reason_label(d.reason))}</span>',
                _e(d.surface),
                _e(d.at[:16].replace("T", " ")),
            ]
            for d in report.disliked
        ),
        numeric=(0,),
        nowrap=(4,),
    )


def _usage(rows: Sequence[Any], limit: int | None = None) -> str:
    """Documents or sections with how many answers quoted each."""
    c = reports.REPORT_COLUMNS
    return _table([c["name"], c["answers"]], ([_e(u.name), str(u.answers)] for u in rows[:limit]), numeric=(1,))


def _names(rows: Sequence[Any]) -> str:
    """Documents or sections as a two-column list."""
    return '<ul class="flat">' + "".join(f"<li>{_e(u.name)}</li>" for u in rows) + "</ul>"


def _slowest(report: Report) -> str:
    """The slowest answers and where their time went."""
    c = reports.REPORT_COLUMNS
    return _table(
        [c["ms"], c["question"], c["result"], c["surface"], c["when"], c["steps"]],
        (
            [
                f"{s.total_ms:,.0f}",
                _e(s.question),
                _e(reports.reason_label(None if s.kind == "answered" else s.kind)),
                _e(s.surface),
                _e(s.at[:16].replace("T", " ")),
                _e(", ".join(f"{k} {v:,.0f}" for k, v in s.timings.items() if k != "total")),
            ]
            for s in report.slowest
        ),
        numeric=(0,),
        nowrap=(4,),
    )


def _instructions(report: Report) -> str:
    """Lines the documents address to an assistant, where they stand; shown only when there are some."""
    if not report.instructions:
        return ""
    c = reports.REPORT_COLUMNS
    table = _table(
        [c["line"], c["where"]],
        ([_e(i.text), f'{_e(i.heading)} <span class="muted">({_e(i.document)})</span>'] for i in report.instructions),
    )
    return _section("instructions", f'<p class="note">{_e(reports.INSTRUCTIONS_NOTE)}</p>{table}')


def render(report: Report) -> str:
    """The whole report as one HTML document."""
    body = "".join(
        [
            f"<h1>{_e(reports.REPORT_TITLE)}</h1>",
            f'<p class="period">{_e(reports.report_period(report))}</p>',
            f'<div class="cards">{_cards(report)}</div>',
            _plots(report),
            _section("surfaces", _or_none(list(report.surfaces), _surfaces(report))),
            _section(
                "gaps",
                _or_none(report.gaps, f'<p class="note">{_e(reports.gaps_note(report))}</p>{_gaps(report)}'),
            ),
            _section("disliked", _or_none(report.disliked, _disliked(report))),
            _section("documents_quoted", _or_none(report.documents_quoted, _usage(report.documents_quoted))),
            _section("documents_never", _or_none(report.documents_never, _names(report.documents_never))),
            _section(
                "sections_quoted", _or_none(report.sections_quoted, _usage(report.sections_quoted, SECTIONS_SHOWN))
            ),
            _section("sections_never", _or_none(report.sections_never, _names(report.sections_never))),
            _section("slowest", _or_none(report.slowest, _slowest(report))),
            _instructions(report),
        ]
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may load from anywhere: the report is read offline, and a link would leak that it was opened.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>{_e(reports.REPORT_TITLE)}</title><style>{_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )
