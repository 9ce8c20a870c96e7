"""The presentation rule of tenscontrol's results and models, and the tables it prints.

Every result or model object gives ``repr()`` on one line (its class's own ``__repr__``),
``str()`` equal to ``summary()`` (a text table), and ``_repr_html_`` the same figures as an HTML
table for a notebook: :class:`Presentable` supplies the last two from ``summary()``. Every HTML
cell is escaped."""

from __future__ import annotations

import html
import re

import numpy as np

__all__ = ["Presentable", "html_table", "summary_html", "summary_table", "titled_table",
           "value_range"]

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


def value_range(values, unit: str, digits: int = 4) -> str:
    """``"lo .. hi unit"`` of the values (one value when they are all equal; "none" if empty)."""
    a = np.asarray(values, dtype=float)
    if not a.size:
        return "none"
    lo, hi = a.min(), a.max()
    return f"{lo:.{digits}g} {unit}" if lo == hi else f"{lo:.{digits}g} .. {hi:.{digits}g} {unit}"


def summary_table(rows) -> str:
    """(label, value) rows as indented, aligned text lines (what :func:`summary_html` reads)."""
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)


def titled_table(title: str, rows) -> str:
    """A title line, then :func:`summary_table` of the (label, value) rows."""
    return title + "\n" + summary_table(rows)


class Presentable:
    """The presentation rule as a base class: ``str()`` is :meth:`summary`, and a notebook
    shows it as an HTML table (:func:`summary_html`, which reads indented ``label  value``
    lines; a class whose summary has columns overrides ``_repr_html_``). The subclass writes
    ``summary()`` and a one-line ``__repr__``."""

    __slots__ = ()

    def summary(self) -> str:
        """The figures as a text table (what ``print()`` shows)."""
        raise NotImplementedError(f"{type(self).__name__} must define summary()")

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return summary_html(self.summary())
