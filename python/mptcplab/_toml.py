"""A small TOML writer for scenario data (strings, ints, floats, bools, lists, tables).

Enough for what `tomllib` reads back into a scenario: `loads(dumps(d)) == d` for every
dict of those types (tests/python/test_toml_writer.py checks this with hypothesis).
Layout follows the scenario files: scalars first, small tables of scalars inline
(``app = { kind = "bulk" }``), lists of tables as ``[[links]]`` blocks.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_INLINE_MAX = 100  # characters; longer tables become [sections]


def _key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else _string(k)


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = repr(x)  # shortest round-trip form
    if "e" in text or "E" in text:
        mantissa, _, exp = text.lower().partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}e{exp}"
    return text


def _value(v: Any) -> str:
    """Inline form of any value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, Mapping):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_list(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _inline_ok(v: Mapping[str, Any]) -> bool:
    if any(isinstance(x, Mapping) or _is_table_list(x) for x in v.values()):
        return False
    return len(_value(v)) <= _INLINE_MAX


def _table_body(table: Mapping[str, Any], prefix: str, out: list[str]) -> None:
    scalars: list[tuple[str, Any]] = []
    subtables: list[tuple[str, Mapping[str, Any]]] = []
    table_lists: list[tuple[str, list[Mapping[str, Any]]]] = []
    for k, v in table.items():
        k = str(k)
        if isinstance(v, Mapping) and (prefix == "" or not _inline_ok(v)):
            subtables.append((k, v))
        elif _is_table_list(v) and (prefix == "" or any(not _inline_ok(x) for x in v)):
            table_lists.append((k, list(v)))
        else:
            scalars.append((k, v))
    for k, v in scalars:
        if _is_table_list(v) and len(v) > 1:
            # a list of small inline tables (e.g. a link schedule), one per line
            lines = ",\n".join(f"  {_value(x)}" for x in v)
            out.append(f"{_key(k)} = [\n{lines},\n]")
        else:
            out.append(f"{_key(k)} = {_value(v)}")
    for k, v in subtables:
        name = f"{prefix}.{_key(k)}" if prefix else _key(k)
        out.append("")
        out.append(f"[{name}]")
        _table_body(v, name, out)
    for k, items in table_lists:
        name = f"{prefix}.{_key(k)}" if prefix else _key(k)
        for item in items:
            out.append("")
            out.append(f"[[{name}]]")
            _table_body(item, name, out)


def dumps(data: Mapping[str, Any]) -> str:
    """Serialise a mapping as a TOML document."""
    out: list[str] = []
    _table_body(data, "", out)
    text = "\n".join(out).lstrip("\n")
    return text + "\n"
