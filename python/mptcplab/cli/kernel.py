"""`mptcplab kernel selftest` and `mptcplab kernel cleanup`: the kernel backend's tools."""
from __future__ import annotations

import sys
from typing import Annotated

import typer

from .app import kernel_app


@kernel_app.command("selftest")
def selftest(
    quick: Annotated[bool, typer.Option("--quick", help="fewer points and shorter probes")] = False,
    no_store: Annotated[bool, typer.Option("--no-store", help="do not store the ceiling (the kernel backend refuses rates above the stored one)")] = False,
) -> None:
    """measure the link emulator: delay, rate, loss, ceiling"""
    from ..kernel import check_environment
    from ..kernel.selftest import format_selftest, selftest as run_selftest

    check_environment()
    report = run_selftest(quick=quick, store=not no_store, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(format_selftest(report))


@kernel_app.command("cleanup")
def cleanup() -> None:
    """remove what dead kernel runs left (every run also does this when it starts)"""
    from ..kernel import check_environment
    from ..kernel.netns import cleanup_stale, leftovers

    check_environment()
    removed = cleanup_stale()
    left = leftovers()
    print(f"removed {len(removed)} namespaces of dead runs; {len(left['namespaces'])} namespaces of live runs remain")
