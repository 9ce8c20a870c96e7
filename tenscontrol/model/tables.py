"""HTML tables for the ``_repr_html_`` of tenscontrol's results and reports, so that a notebook
shows the same figures as ``print()`` as a compact table. Every cell is escaped."""

from __future__ import annotations

import html
import re

__all__ = ["html_table", "summary_html"]

_STYLE = "border-collapse: collapse; font-size: 90%"
_CELL = "padding: 1px 8px; text-align: {}"


def _cell(tag: str, value, align: str) -> str:
    return f'<{tag} style="{_CELL.format(align)}">{html.escape(str(value))}</{tag}>'


def html_table(rows, *, header=None, caption: str | None = None) -> str:
    """An HTML table: the first column (labels) left-aligned, the others right-aligned.

    Parameters
    ----------
    rows : sequence of sequence
        One sequence of cells per row; each cell is shown as ``str(cell)``, escaped.
    header : sequence, optional
        Column headings.
    caption : str, optional
        A line above the table.
    """
    out = [f'<table style="{_STYLE}">']
    if caption:
        out.append(f'<caption style="text-align: left">{html.escape(caption)}</caption>')
    if header is not None:
        out.append("<thead><tr>" + "".join(_cell("th", h, "left" if c == 0 else "right")
                                           for c, h in enumerate(header)) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(_cell("td", v, "left" if c == 0 else "right")
                                    for c, v in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def summary_html(text: str) -> str:
    """A two-column table from a text summary of indented ``label  value`` lines (labels and
    values separated by two or more spaces); unindented lines become the caption."""
    caption, rows = [], []
    for line in text.splitlines():
        if line[:1].isspace():
            parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            rows.append(parts if len(parts) == 2 else [parts[0], ""])
        elif line.strip():
            caption.append(line.strip())
    return html_table(rows, caption=" ".join(caption) or None)
