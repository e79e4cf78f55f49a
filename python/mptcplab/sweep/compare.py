"""`mptcplab compare A B`: two result sets side by side.

A and B are sweep output directories (their results.csv) or CSV/Parquet files of rows.
Rows are matched on the columns that identify a run and are not metrics (parameters and
flow); repetitions are averaged. Each metric shows A, B and the relative change.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ScenarioError

__all__ = ["compare", "load_results"]

_NOT_KEYS = {"point", "rep", "seed", "version"}


def load_results(where: str | Path, field: str = "<results>") -> tuple[Any, list[str] | None]:
    """(rows, key columns) of a sweep directory (key columns from its sweep.json) or of a
    CSV/Parquet file (key columns None: inferred)."""
    import json

    import pandas as pd

    p = Path(where)
    keys = None
    if p.is_dir():
        try:
            keys = json.loads((p / "sweep.json").read_text(encoding="utf-8")).get("keys")
        except (OSError, ValueError):
            keys = None
        p = p / "results.csv"
    if not p.is_file():
        raise ScenarioError(field, f"no result set at '{where}' (a sweep directory or a .csv/.parquet file)")
    try:
        frame = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    except Exception as err:  # noqa: BLE001 - any unreadable file is bad input
        raise ScenarioError(field, f"cannot read '{p}': {err}") from None
    return frame, keys


def compare(a: Any, b: Any, keys: list[str] | None = None) -> Any:
    """DataFrame: the key columns, then per metric `METRIC A`, `METRIC B`, `METRIC Δ%`.
    Without `keys`, the non-numeric columns shared by both (e.g. flow, string parameters)
    are the keys and the numeric ones the metrics."""
    import pandas as pd

    common = [c for c in a.columns if c in b.columns and c not in _NOT_KEYS]
    if keys is None:
        keys = [c for c in common if not pd.api.types.is_numeric_dtype(a[c])]
    keys = [k for k in keys if k in common]
    metrics = [c for c in common if c not in keys and pd.api.types.is_numeric_dtype(a[c])
               and pd.api.types.is_numeric_dtype(b[c])]
    if not metrics:
        raise ScenarioError("<results>", "the two result sets share no metric column")
    ga = a.groupby(keys, dropna=False, sort=False)[metrics].mean() if keys else a[metrics].mean().to_frame().T
    gb = b.groupby(keys, dropna=False, sort=False)[metrics].mean() if keys else b[metrics].mean().to_frame().T
    joined = ga.join(gb, how="outer", lsuffix=" A", rsuffix=" B")
    out = pd.DataFrame(index=joined.index)
    for m in metrics:
        out[f"{m} A"] = joined[f"{m} A"]
        out[f"{m} B"] = joined[f"{m} B"]
        base = joined[f"{m} A"].where(joined[f"{m} A"] != 0)
        out[f"{m} Δ%"] = 100.0 * (joined[f"{m} B"] - joined[f"{m} A"]) / base
    return out.reset_index() if keys else out
