"""`mptcplab reproduce PAPER`: run a paper's experiments and write a report with a table
of numbered claims (the paper's figure or shape, ours with 95 % CIs, ✓ or ✗).

    >>> from mptcplab.reproduce import reproduce
    >>> rep, path = reproduce("lia-vs-tcp", quick=True, out="repro/lia-vs-tcp")

Each paper lives in its own module with a ``run(ctx) -> Reproduction``; ``--quick`` runs
the same experiments shorter and with fewer repetitions (for CI), and the report's
metadata records the run counts and durations.
"""
from __future__ import annotations

from .model import Claim, Figure, Reproduction, Table

__all__ = ["Claim", "Figure", "Reproduction", "Table"]
