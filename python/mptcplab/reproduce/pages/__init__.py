"""The measured-and-reported pages under docs/reproductions/: each a paper's experiments
written out as one Markdown page (tables per variant, per-seed values, verdicts with their
95 % CIs, and, behind `diagnostics`, the post-hoc runs that explain a ✗). `mptcplab
reproduce PAPER --page` writes them; so there is one code path for every piece of
evidence (issue 13). A page's module has `default_path(profile)` (its place in the
repository), `PROFILES` (the profiles it may be forced to) and `page(ctx) -> Page`.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ScenarioError
from ..runner import Ledger

# paper -> page module (each writes its page under every profile in its PROFILES).
PAGES: dict[str, str] = {
    "mpcoa": "seed000",
    "lia-vs-tcp": "seed003",
    "rbpm": "seed001",
    "pcdc-hol": "pcdc_hol",
    "streaming": "seed002",
    "coupled-bbr": "seed004",
    "arp": "seed004_arp",
}


@dataclass
class PageContext:
    """How to run a page: `seeds` per variant (None: the page's own), `workers` (local
    processes), `diagnostics` (also the post-hoc runs that explain a ✗), `profile` (every
    run under it; None: the files' own), `runs_file` (where the per-run figures go, as the
    page names it) and `previous` (the page as it was: hand-written sections stay)."""

    seeds: int | None = None
    workers: int | None = None
    diagnostics: bool = True
    profile: str | None = None
    runs_file: str = ""
    previous: str = ""
    ledger: Ledger = field(default_factory=Ledger)

    def seed_list(self, default: int) -> list[int]:
        return list(range(1, (self.seeds or default) + 1))


@dataclass
class Page:
    """A page's Markdown and, when it keeps them, its per-run figures (JSON text) and other
    files beside it (name -> text: figures, run reports)."""

    text: str
    runs: str | None = None
    files: dict[str, str] = field(default_factory=dict)


def every_page() -> list[tuple[str, str | None]]:
    """(paper, profile) of every committed page: each page under its files' own profile,
    and under every other profile it is written for."""
    out: list[tuple[str, str | None]] = []
    for paper, name in PAGES.items():
        module = importlib.import_module(f".{name}", __name__)
        out.append((paper, None))
        out += [(paper, p) for p in getattr(module, "PROFILES", ()) if p != "out_of_tree"]
    return out


def runs_path(page: Path) -> Path:
    """Where a page's per-run figures go: `<page stem>-runs.json` beside it."""
    return page.with_name(f"{page.stem}-runs.json")


def write_page(paper: str, out: str | Path | None = None, seeds: int | None = None, workers: int | None = None,
               diagnostics: bool = True, profile: str | None = None,
               progress=None) -> tuple[Path, float]:  # noqa: ANN001 - the CLI's bars
    """Run `paper`'s page and write it (and its per-run figures) to `out` (default: its
    place under docs/, by profile). Returns the page's path and the wall seconds."""
    if paper not in PAGES:
        known = ", ".join(PAGES) or "none"
        raise ScenarioError("--page", f"{paper!r} has no page written by reproduce yet (pages: {known})")
    if seeds is not None and (not isinstance(seeds, int) or seeds < 2):
        raise ScenarioError("--reps", f"expected an integer ≥ 2 (a CI needs two runs), got {seeds!r}")
    module = importlib.import_module(f".{PAGES[paper]}", __name__)
    if profile is not None and profile not in getattr(module, "PROFILES", ()):
        raise ScenarioError("--profile", f"the {paper} page is written under its files' own profile only")
    where = Path(out) if out is not None else Path(module.default_path(profile))
    ctx = PageContext(seeds=seeds, workers=workers, diagnostics=diagnostics, profile=profile,
                      runs_file=str(runs_path(where)),
                      previous=where.read_text(encoding="utf-8") if where.is_file() else "")
    ctx.ledger.profile = profile
    ctx.ledger.progress = progress
    t0 = time.monotonic()
    result = module.page(ctx)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(result.text, encoding="utf-8")
    if result.runs is not None:
        runs_path(where).write_text(result.runs, encoding="utf-8")
    for name, text in result.files.items():
        (where.parent / name).write_text(text, encoding="utf-8")
    return where, time.monotonic() - t0
