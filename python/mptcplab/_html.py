"""Small HTML pieces for the notebook displays (`Scenario._repr_html_`, `Result._repr_html_`).

The output is a self-contained fragment: no scripts, no external style sheets, every
piece of text escaped with `html.escape` (a scenario's name or description is user
input and may hold markup).
"""
from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["cell", "esc", "fields", "frame", "heading", "table", "wrap"]

# One style block scoped to the fragment's class (a renderer that drops it shows plain tables).
_STYLE = ("<style>.mptcplab table{border-collapse:collapse;margin:0.2em 0 0.6em 0;font-size:0.9em}"
          ".mptcplab th,.mptcplab td{border:1px solid #ccc;padding:1px 6px;text-align:left}</style>")


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def cell(value: Any) -> str:
    """Text of one value: absent -> an em dash, tables and lists in a compact JSON form."""
    if value is None:
        return "\u2014"
    if isinstance(value, (Mapping, list, tuple)):
        return esc(json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str))
    return esc(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def fields(pairs: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of name/value pairs."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{cell(v)}</td></tr>" for k, v in pairs)
    return f"<table><tbody>{rows}</tbody></table>"


def heading(text: str) -> str:
    return f'<div style="font-weight:bold;margin-top:0.4em">{esc(text)}</div>'


def wrap(title: str, subtitle: str | None, parts: Iterable[str]) -> str:
    sub = f"<div><i>{esc(subtitle)}</i></div>" if subtitle else ""
    return (f'<div class="mptcplab">{_STYLE}<div style="font-size:1.1em"><b>{esc(title)}</b></div>{sub}'
            + "".join(parts) + "</div>")


def frame(df: Any, max_rows: int = 40) -> str:
    """A DataFrame as an HTML table (pandas escapes the cells), at most `max_rows` rows."""
    if df is None or len(df.columns) == 0:
        return "<div><i>(empty)</i></div>"
    return str(df.to_html(index=False, border=0, escape=True, max_rows=max_rows, na_rep="\u2014",
                          float_format="{:.4g}".format, classes=None))
