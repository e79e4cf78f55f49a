"""The measured-and-reported pages under docs/reproductions/: each a paper's experiments
written out as one Markdown page (tables per variant, per-seed values, verdicts with their
95 % CIs, and, behind `diagnostics`, the post-hoc runs that explain a ✗). `mptcplab
reproduce PAPER --page` writes them; so there is one code path for every piece of
evidence (issue 13). A page's module has `DEFAULT` (its path in the repository) and
`page(ctx: PageContext) -> str`.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ScenarioError
from ..runner import Ledger

# paper -> page module. A paper whose page still comes from scripts/ is not here yet.
PAGES: dict[str, str] = {
    "lia-vs-tcp": "seed003",
}


@dataclass
class PageContext:
    """How to run a page: `seeds` per variant (None: the page's own), `workers` (local
    processes), `diagnostics` (also the post-hoc runs that explain a ✗)."""

    seeds: int | None = None
    workers: int | None = None
    diagnostics: bool = True
    ledger: Ledger = field(default_factory=Ledger)

    def seed_list(self, default: int) -> list[int]:
        return list(range(1, (self.seeds or default) + 1))


def write_page(paper: str, out: str | Path | None = None, seeds: int | None = None, workers: int | None = None,
               diagnostics: bool = True, progress=None) -> tuple[Path, float]:  # noqa: ANN001 - the CLI's bars
    """Run `paper`'s page and write it to `out` (default: its place under docs/). Returns
    the path and the wall seconds."""
    if paper not in PAGES:
        known = ", ".join(PAGES) or "none"
        raise ScenarioError("--page", f"{paper!r} has no page written by reproduce yet (pages: {known})")
    if seeds is not None and (not isinstance(seeds, int) or seeds < 2):
        raise ScenarioError("--seeds", f"expected an integer ≥ 2 (a CI needs two runs), got {seeds!r}")
    module = importlib.import_module(f".{PAGES[paper]}", __name__)
    ctx = PageContext(seeds=seeds, workers=workers, diagnostics=diagnostics)
    ctx.ledger.progress = progress
    t0 = time.monotonic()
    text = module.page(ctx)
    where = Path(out) if out is not None else Path(module.DEFAULT)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(text)
    return where, time.monotonic() - t0
