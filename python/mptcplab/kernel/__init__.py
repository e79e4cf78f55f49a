"""The kernel backend: the same scenario on the Linux MPTCP stack, in network
namespaces built and torn down per run (docs/kernel.md).

    from mptcplab.kernel import run_kernel
    result = run_kernel("scenarios/two-paths-wifi-lte.toml", duration="10 s")
"""
from __future__ import annotations

from .backend import IntegrityError, KernelRunError, check_environment, run_kernel

__all__ = ["IntegrityError", "KernelRunError", "check_environment", "run_kernel"]
