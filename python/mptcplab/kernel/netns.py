"""Network namespaces and processes owned by one kernel-backend run, and the clean-up
of runs that died.

Every run has a unique prefix, ``mpl<pid>x<4 hex>``: its namespaces are named
``<prefix>c`` (client), ``<prefix>s`` (server) and ``<prefix>r`` (router), and every
interface and qdisc it creates lives inside them. A state file
``/run/mptcplab/<prefix>.json`` records the owner's PID and start time and each child
process (PID and start time). A run is dead when no process has the owner's PID with
the recorded start time (PIDs get reused); only then does a later start clean it up:
it kills the recorded children that still exist, every process still inside the run's
namespaces (`ip netns pids`; `ip netns del` alone does not stop them), then deletes
the namespaces. A live run is never touched, nor anything outside the prefix.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

STATE_DIR = Path(os.environ.get("MPTCPLAB_KERNEL_STATE_DIR", "/run/mptcplab"))
NETNS_DIR = Path("/run/netns")
PREFIX_RE = re.compile(r"^mpl(\d+)x([0-9a-f]{4})")
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


class CommandError(RuntimeError):
    """A setup command (ip, tc, ethtool, sysctl) failed."""


def proc_start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[19])


def alive(pid: int, start_time: int | None) -> bool:
    st = proc_start_time(pid)
    return st is not None and (start_time is None or st == start_time)


def netns_list() -> list[str]:
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def netns_pids(name: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split() if x.isdigit()]


def run(argv: Sequence[str], *, input: str | None = None, check: bool = True) -> str:
    """Run a setup command; raise CommandError with its stderr on failure."""
    proc = subprocess.run(list(argv), input=input, capture_output=True, text=True)
    if check and proc.returncode != 0:
        what = " ".join(argv[:6]) + (" ..." if len(argv) > 6 else "")
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise CommandError(f"`{what}` failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
    return proc.stdout


def enter_netns(name: str) -> None:
    """setns(2) into a named namespace (in a child, before exec)."""
    fd = os.open(str(NETNS_DIR / name), os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {name}: {os.strerror(err)}")
    finally:
        os.close(fd)


CHILD_NICE = -10  # the emulator and the apps run ahead of other work on the machine


def _child_setup(ns: str | None) -> None:
    # Die with the parent (prctl(2)); kept across execve for non-setuid programs.
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # A run's timing is the forwarder's delay line and the apps' reads: give them
    # priority over builds or other runs beside it (root may raise it; else it stays).
    try:
        os.setpriority(os.PRIO_PROCESS, 0, CHILD_NICE)
    except OSError:
        pass
    if ns is not None:
        enter_netns(ns)


def _kill_pids(pids: Sequence[tuple[int, int | None]], grace_s: float) -> None:
    """SIGTERM, then SIGKILL after `grace_s`, each PID only while its start time matches."""
    live = [(p, st) for p, st in pids if alive(p, st)]
    for p, _ in live:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while live and time.monotonic() < deadline:
        live = [(p, st) for p, st in live if alive(p, st) and not _zombie(p)]
        if live:
            time.sleep(0.02)
    for p, st in live:
        if alive(p, st):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return text[text.rindex(")") + 2] == "Z"


class RunSpace:
    """The namespaces and processes of one run. Use as a context manager: the exit
    tears everything down, on success, on error and on Ctrl-C."""

    def __init__(self, roles: Sequence[str] = ("c", "s", "r")) -> None:
        self.prefix = f"mpl{os.getpid()}x{secrets.token_hex(2)}"
        self.ns = {role: f"{self.prefix}{role}" for role in roles}
        self.children: list[subprocess.Popen[Any]] = []
        self.state_path = STATE_DIR / f"{self.prefix}.json"
        self._created: list[str] = []

    # -- state file ------------------------------------------------------------------------
    def _write_state(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "pid": os.getpid(),
            "start_time": proc_start_time(os.getpid()),
            "namespaces": list(self.ns.values()),
            "children": [{"pid": c.pid, "start_time": proc_start_time(c.pid)} for c in self.children],
        }
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_path)

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> RunSpace:
        cleanup_stale()
        self._write_state()  # before any namespace exists, so a crash leaves a record
        try:
            for name in self.ns.values():
                run(["ip", "netns", "add", name])
                self._created.append(name)
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    def spawn(self, argv: Sequence[str], role: str | None, **kwargs: Any) -> subprocess.Popen[Any]:
        """Start a process inside the namespace of `role` (None: stay in the root
        namespace). It gets SIGKILL when this process dies."""
        ns = self.ns[role] if role is not None else None
        proc = subprocess.Popen(list(argv), preexec_fn=lambda: _child_setup(ns), **kwargs)
        self.children.append(proc)
        self._write_state()
        return proc

    def teardown(self) -> None:
        """Stop our processes by PID, then delete our namespaces; idempotent."""
        pids = []
        for c in self.children:
            if c.poll() is None:
                pids.append((c.pid, proc_start_time(c.pid)))
        _kill_pids(pids, grace_s=1.0)
        for c in self.children:
            try:
                c.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        for name in self._created:
            _kill_pids([(p, proc_start_time(p)) for p in netns_pids(name)], grace_s=0.2)
        for name in reversed(self._created):
            run(["ip", "netns", "del", name], check=False)
        self._created.clear()
        try:
            self.state_path.unlink()
        except FileNotFoundError:
            pass

    # -- helpers ---------------------------------------------------------------------------
    def ip(self, role: str, *args: str) -> str:
        return run(["ip", "-n", self.ns[role], *args])

    def ip_batch(self, role: str, lines: Sequence[str]) -> None:
        if lines:
            run(["ip", "-n", self.ns[role], "-batch", "-"], input="\n".join(lines) + "\n")

    def tc_batch(self, role: str, lines: Sequence[str]) -> None:
        if lines:
            run(["tc", "-n", self.ns[role], "-batch", "-"], input="\n".join(lines) + "\n")

    def exec(self, role: str, argv: Sequence[str], check: bool = True) -> str:
        """Run a command inside a namespace (ethtool, sysctl) and wait for it."""
        ns = self.ns[role]
        proc = subprocess.run(list(argv), capture_output=True, text=True, preexec_fn=lambda: _child_setup(ns))
        if check and proc.returncode != 0:
            raise CommandError(f"`{' '.join(argv[:6])}` in {ns} failed: {(proc.stderr or proc.stdout).strip()}")
        return proc.stdout

    def sysctl(self, role: str, values: dict[str, str], optional: frozenset[str] = frozenset()) -> None:
        """Write per-namespace sysctls (procfs under /proc/sys/net follows the writer's
        network namespace, proc(5)); keys in `optional` are skipped where the kernel
        does not have them."""
        parts = []
        for k, v in values.items():
            f = f"/proc/sys/{k.replace('.', '/')}"
            parts.append(f"[ ! -e {f} ] || echo {v!s} > {f}" if k in optional else f"echo {v!s} > {f}")
        self.exec(role, ["sh", "-ec", "; ".join(parts)])


def cleanup_stale() -> list[str]:
    """Remove what runs whose owner died left behind; return the namespaces deleted.
    Never touches a run whose owner is alive."""
    removed: list[str] = []
    live_prefixes: set[str] = set()
    states = sorted(STATE_DIR.glob("mpl*.json")) if STATE_DIR.is_dir() else []
    for path in states:
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        prefix = path.stem
        if alive(int(state["pid"]), state.get("start_time")):
            live_prefixes.add(prefix)
            continue
        _kill_pids([(c["pid"], c.get("start_time")) for c in state.get("children", [])], grace_s=0.2)
        for name in state.get("namespaces", []):
            if name in netns_list():
                _kill_pids([(p, proc_start_time(p)) for p in netns_pids(name)], grace_s=0.2)
                run(["ip", "netns", "del", name], check=False)
                removed.append(name)
        path.unlink(missing_ok=True)
    # Namespaces with our prefix but no state file (a crash between writes): the PID
    # in the name is the owner; clean only when no such process exists at all.
    for name in netns_list():
        m = PREFIX_RE.match(name)
        if not m or name[: len(m.group(0))] in live_prefixes:
            continue
        prefix = m.group(0)
        if (STATE_DIR / f"{prefix}.json").exists() or alive(int(m.group(1)), None):
            continue
        _kill_pids([(p, proc_start_time(p)) for p in netns_pids(name)], grace_s=0.2)
        run(["ip", "netns", "del", name], check=False)
        removed.append(name)
    return removed


def leftovers() -> dict[str, list[str]]:
    """Namespaces and processes with the backend's prefix (for tests and `kernel
    cleanup`): {"namespaces": [...], "processes": ["PID in NS", ...]}."""
    names = [n for n in netns_list() if PREFIX_RE.match(n)]
    procs = [f"{p} in {n}" for n in names for p in netns_pids(n)]
    return {"namespaces": names, "processes": procs}
