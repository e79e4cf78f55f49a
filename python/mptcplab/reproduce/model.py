"""What a reproduction produces: numbered claims, tables, figure data and metadata, saved
as one JSON file (`reproduction.json`) that `mptcplab report` renders.

Figures are stored as data, not images, so a report can be redrawn and the numbers stay
inspectable. `Figure.kind` and its `data`:

* ``bar``: ``{"categories": [str], "series": [{"label": str, "values": [[float per run]
  per category]}]}`` — grouped bars of the mean, with min/max whiskers and 10–90 %
  error bars, as the papers draw them;
* ``cdf``: ``{"series": [{"label": str, "values": [float]}]}``;
* ``timeseries``: ``{"series": [{"label": str, "t": [float], "y": [float]}]}``;
* ``scatter``: ``{"points": [{"label": str, "x": float, "y": float,
  "xerr": float?, "yerr": float?}]}``.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

__all__ = ["Claim", "Table", "Figure", "Reproduction", "FILE_NAME", "FIGURE_KINDS"]

FILE_NAME = "reproduction.json"
FORMAT_VERSION = 1
FIGURE_KINDS = ("bar", "cdf", "timeseries", "scatter")


@dataclass
class Claim:
    """One numbered claim: what the paper shows, what we measured, and the verdict."""

    id: str            # "C1", "C2", ...
    statement: str     # the claim in words, e.g. "LIA gets less than Reno"
    paper: str         # the paper's figure or shape, with its table/figure number
    ours: str          # our figures with 95 % CIs
    verdict: bool
    note: str = ""     # why a ✗ is a ✗, or what the check assumes

    @property
    def mark(self) -> str:
        return "✓" if self.verdict else "✗"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass
class Figure:
    title: str
    kind: str
    data: dict[str, Any]
    xlabel: str = ""
    ylabel: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ScenarioError("figure.kind", f"expected one of {', '.join(FIGURE_KINDS)}, got {self.kind!r}")


@dataclass
class Reproduction:
    """A paper's experiments as run by mptcplab."""

    paper: str                  # the `reproduce` name, e.g. "lia-vs-tcp"
    title: str                  # the paper's title and authors
    seed_file: str              # ../shared/seeds file name
    summary: str                # one paragraph: what was run and what came out
    claims: list[Claim] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    # version, quick, runs, duration per run, seeds, wall time, created (UTC).
    meta: dict[str, Any] = field(default_factory=dict)
    scenarios: dict[str, str] = field(default_factory=dict)  # name -> scenario TOML as run
    notes: str = ""             # Markdown: assumptions, interpretations, known gaps

    @property
    def passed(self) -> int:
        return sum(c.verdict for c in self.claims)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "reproduction", "format_version": FORMAT_VERSION, **asdict(self)}

    def save(self, directory: str | Path) -> Path:
        """Write `reproduction.json` and `claims.md` into `directory`; returns the JSON path."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        path = out / FILE_NAME
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, allow_nan=True, default=_plain) + "\n",
                       encoding="utf-8")
        tmp.replace(path)
        (out / "claims.md").write_text(self.claims_markdown(), encoding="utf-8")
        return path

    @classmethod
    def load(cls, where: str | Path) -> Reproduction:
        path = Path(where)
        if path.is_dir():
            path = path / FILE_NAME
        if not path.is_file():
            raise ScenarioError("<results>", f"'{where}' holds no {FILE_NAME}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ScenarioError("<results>", f"{path}: not valid JSON ({e.msg}, line {e.lineno})") from None
        if data.get("kind") != "reproduction":
            raise ScenarioError("kind", f"{path}: expected \"reproduction\", got {data.get('kind')!r}")
        return cls(
            paper=data["paper"], title=data["title"], seed_file=data["seed_file"], summary=data["summary"],
            claims=[Claim(**c) for c in data.get("claims", [])],
            tables=[Table(**t) for t in data.get("tables", [])],
            figures=[Figure(**f) for f in data.get("figures", [])],
            meta=data.get("meta", {}), scenarios=data.get("scenarios", {}), notes=data.get("notes", ""),
        )

    def claims_markdown(self) -> str:
        """The numbered claim table in Markdown."""
        out = (f"### `mptcplab reproduce {self.paper}`: {self.passed} of {len(self.claims)} claims hold\n\n"
               "| # | claim | paper | mptcplab (95 % CI) | |\n|---|---|---|---|---|\n")
        for c in self.claims:
            note = f" — {c.note}" if c.note else ""
            out += f"| {c.id} | {_cell(c.statement)} | {_cell(c.paper)} | {_cell(c.ours)}{_cell(note)} | {c.mark} |\n"
        return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)
