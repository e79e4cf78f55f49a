"""`mptcplab reproduce PAPER`: run a paper's experiments and write a report with a table
of numbered claims (the paper's figure or shape, ours with 95 % CIs, ✓ or ✗).

    >>> from mptcplab.reproduce import reproduce
    >>> rep, path = reproduce("lia-vs-tcp", quick=True, out="repro/lia-vs-tcp")

Each paper lives in its own module with a ``run(ctx) -> Reproduction``. ``--quick`` runs
the same experiments shorter and with fewer repetitions (for CI); the report's metadata
records run counts and durations either way. Every assumption of an experiment is in
the header of its committed scenario file (scenarios/reproduce/), written before its
first result.
"""
from __future__ import annotations

import datetime as _dt
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ScenarioError
from .model import Claim, Figure, Reproduction, Table
from .runner import Ledger

__all__ = ["PAPERS", "Claim", "Context", "Figure", "Reproduction", "Table", "reproduce"]

# name -> (module, one line): the seeds under ../shared/seeds/ each paper comes from.
PAPERS: dict[str, tuple[str, str]] = {
    "mpcoa": ("mpcoa", "seed 000: MPCOA, buffer size / path manager / CC optimisation on NorNet Core"),
    "rbpm": ("rbpm", "seed 001: receive-buffer-based path management vs fullmesh"),
    "streaming": ("streaming", "seed 002: MPTCP CCs for streaming (protocol delay, HoL blocking)"),
    "lia-vs-tcp": ("lia_vs_tcp", "seed 003: LIA vs uncoupled Reno and CUBIC"),
    "coupled-bbr": ("coupled_bbr", "seed 004: Coupled BBR and the AR&P scheduler"),
    "dc-mptcp": ("dc_mptcp", "Raiciu et al. SIGCOMM 2011 (issue 16): MPTCP subflows in a FatTree permutation"),
}


@dataclass
class Context:
    """How to run: `quick` (CI: shorter runs, fewer repetitions), `reps` (override the
    repetitions per variant), `workers` (local processes; default all cores)."""

    quick: bool = False
    reps: int | None = None
    workers: int | None = None
    ledger: Ledger = field(default_factory=Ledger)
    out: Path = Path("repro")  # the output directory: a paper may keep stores there

    def seeds(self, full: int, quick: int) -> list[int]:
        """Seeds 1..n: the seed of repetition k is k (documented in every report)."""
        n = self.reps if self.reps is not None else (quick if self.quick else full)
        return list(range(1, n + 1))


PROFILES = ("out_of_tree", "upstream")


def reproduce(paper: str, quick: bool = False, reps: int | None = None, workers: int | None = None,
              out: str | Path | None = None, report: bool = True,
              profile: str | None = None,
              progress: Callable[[str, int, int], None] | None = None) -> tuple[Reproduction, Path]:
    """Run `paper`'s experiments, save `reproduction.json` + `claims.md` (+ `report.html`)
    under `out` (default repro/<paper>[-quick][-<profile>]) and return the reproduction
    and the directory. `profile` puts every run under that profile (`run.profile`), so a
    paper's claims can be set side by side under both stacks; None keeps each scenario's
    own (the default `out_of_tree`). `progress(experiment, done, total)` after every run."""
    if paper not in PAPERS:
        raise ScenarioError("paper", f"expected one of {', '.join(PAPERS)}, got {paper!r}")
    if reps is not None and (not isinstance(reps, int) or reps < 1):
        raise ScenarioError("reps", f"expected an integer ≥ 1, got {reps!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ScenarioError("workers", f"expected an integer ≥ 1, got {workers!r}")
    if profile is not None and profile not in PROFILES:
        raise ScenarioError("profile", f"expected one of {', '.join(PROFILES)}, got {profile!r}")
    module = importlib.import_module(f".{PAPERS[paper][0]}", __name__)
    where = Path(out) if out is not None else Path("repro") / (
        paper + ("-quick" if quick else "") + (f"-{profile}" if profile else ""))
    ctx = Context(quick=quick, reps=reps, workers=workers, out=where)
    ctx.ledger.profile = profile
    ctx.ledger.progress = progress
    t0 = time.monotonic()
    rep: Reproduction = module.run(ctx)
    from .._version import __model__, __version__

    led = ctx.ledger
    rep.meta = {
        "mptcplab_version": __version__,
        "model": __model__,
        "quick": quick,
        "runs": led.runs,
        "simulated_s": round(led.sim_seconds, 3),
        "wall_s": round(time.monotonic() - t0, 2),
        "experiments": led.experiments,
        "seed_rule": "repetition k runs with seed k (1, 2, ...)",
        "profile": profile or "each scenario's own (default out_of_tree)",
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **rep.meta,
    }
    rep.scenarios = {**led.scenarios, **rep.scenarios}
    rep.save(where)
    if report:
        try:
            from ..report import write_report
        except ImportError:  # the report module is optional until it lands
            write_report = None
        if write_report is not None:
            write_report(where)
    return rep, where


def describe() -> list[tuple[str, str]]:
    return [(name, line) for name, (_, line) in PAPERS.items()]

