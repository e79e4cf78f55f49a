"""The emulated network of a run: namespaces, veth pairs, qdiscs and the forwarder.

    client ns                 router ns                                  server ns
    c0 (10.100.0.1) ── rc0 ─┐                                     ┌─ rs0 ── s0 (10.200.0.1)
    c1 (10.100.1.1) ── rc1 ─┤   forwarder (AF_PACKET: loss, queue, │
                            │   rate, delay)                       │
                            └── la0 ══> lb0 ... la1 ══> lb1 ───────┘

One client interface per path (the path is told by the client address), one server
interface, and one veth pair per scenario link inside the router namespace: the
forwarder is the link: per link and direction its loss, its DropTail queue (packets
or bytes), its serialiser at the link's rate and its delay (forwarder.c, emulator
revision 6; this kernel has no netem), after which it sends the frame into `la<k>`
(forward) or `lb<k>` (reverse), whose long pfifo never binds, and the frame comes out
of the other end. A link shared by several paths is one queue (shared bottlenecks).

The hosts use static neighbour entries, so no ARP crosses the emulator, and IPv6 is
off in every namespace, so no neighbour discovery or router solicitation does.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import ScenarioError
from .netns import RunSpace, run
from .plan import Plan

# What the emulator is, as a number stored with every kept kernel run (validate's
# `--kernel-data`), so that runs measured before a change are told apart:
#   1  the first emulator (issue 6)
#   2  RPS per flow on every veth: no reordering within a flow (2026-11-27)
#   3  the forwarder's losses drawn from the simulator's streams of the seed (2026-11-27)
#   4  a frame's own transmission time added to its delay (2026-11-27)
#   5  links below ~12 Mbit/s send one frame at a time after idle: htb's bucket is 1 B
#      there, where a one-frame bucket let a burst's second frame follow the first at
#      once (2026-11-27; docs/kernel.md, "The emulator lets the first two frames of a
#      burst through together")
#   6  the forwarder is the link: its own DropTail queue and serialiser, a frame leaving
#      at max(arrival, the previous frame's departure) + its own transmission time; htb
#      is gone, since it charges a frame after sending it and so held a short frame
#      behind a full one for the full one's time (2026-11-29; docs/kernel.md, "The
#      deadlock rows' gap is in the emulator")
EMULATOR_REVISION = 6
# The wire's qdisc (a pfifo on each veth end of a link): long enough never to drop,
# since the forwarder keeps the link's queue.
WIRE_QUEUE = 100_000

CACHE = Path(os.environ.get("MPTCPLAB_CACHE", Path.home() / ".cache" / "mptcplab"))
SOURCE = Path(__file__).with_name("forwarder.c")
SERVER_MAC = "02:00:00:02:00:01"
# Linux defaults (tcp(7)); written into each host namespace so that "unbounded" means
# the same everywhere: receive autotuning up to tcp_rmem[2] = 6 MiB, the sim's default
# receive buffer, and tcp_wmem[2] = 4 MiB, its default send buffer.
TCP_RMEM = "4096 131072 6291456"
TCP_WMEM = "4096 16384 4194304"


def client_mac(p: int) -> str:
    return f"02:00:00:01:{p // 256:02x}:{p % 256:02x}"


def build_forwarder() -> Path:
    """Compile forwarder.c once per source version into the cache directory."""
    src = SOURCE.read_bytes()
    exe = CACHE / f"forwarder-{hashlib.sha256(src).hexdigest()[:12]}"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise ScenarioError("--backend", "kernel: needs a C compiler to build the forwarder "
                            "(`./dev install` installs gcc); the sim backend runs without one")
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_suffix(f".tmp{os.getpid()}")
    proc = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the forwarder failed: {proc.stderr.strip()}")
    tmp.replace(exe)
    return exe


class Emulator:
    def __init__(self, space: RunSpace, plan: Plan, workdir: Path, pcap_files: dict[str, str] | None = None) -> None:
        self.space = space
        # {path name: capture file} (`mptcplab.pcap.prepare_captures`); empty: none.
        self.pcap_files: dict[str, str] = dict(pcap_files or {})
        self.plan = plan
        self.workdir = workdir
        self.forwarder: subprocess.Popen[str] | None = None
        self.rates: dict[tuple[int, str], float] = {}
        self.tc_lines: list[str] = []
        self.sysctls: dict[str, dict[str, str]] = {}
        self.ports: list[str] = []
        self.rps_mask = ""

    # -- building --------------------------------------------------------------------------
    def build(self) -> None:
        sp, plan = self.space, self.plan
        common = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1"}
        host = {
            **common,
            # Replies and subflows leave by source-routed interfaces; strict reverse path
            # filtering would drop them (ip-sysctl.rst, rp_filter).
            "net.ipv4.conf.all.rp_filter": "0",
            "net.ipv4.conf.default.rp_filter": "0",
            "net.mptcp.enabled": "1",
            # the in-kernel path manager and the default scheduler (mptcp-sysctl.rst)
            "net.mptcp.pm_type": "0",
            "net.mptcp.scheduler": "default",
            "net.ipv4.tcp_rmem": f'"{TCP_RMEM}"',
            "net.ipv4.tcp_wmem": f'"{TCP_WMEM}"',
            "net.ipv4.tcp_no_metrics_save": "1",
        }
        optional = frozenset({"net.mptcp.pm_type", "net.mptcp.scheduler"})
        for role, values in (("c", host), ("s", host), ("r", common)):
            sp.sysctl(role, values, optional)
            self.sysctls[role] = {k: v.strip('"') for k, v in values.items()}
        mtu = plan.mtu
        # veth pairs, created straight inside our namespaces (nothing in the root one).
        client_lines, router_lines, server_lines = [], [], []
        r = sp.ns["r"]
        for p in plan.paths:
            client_lines.append(f"link add c{p.index} mtu {mtu} address {client_mac(p.index)} type veth "
                                f"peer name rc{p.index} mtu {mtu} netns {r}")
        server_lines.append(f"link add s0 mtu {mtu} address {SERVER_MAC} type veth peer name rs0 mtu {mtu} netns {r}")
        for ln in plan.links:
            router_lines.append(f"link add la{ln.index} mtu {mtu} type veth peer name lb{ln.index} mtu {mtu}")
        sp.ip_batch("c", client_lines)
        sp.ip_batch("s", server_lines)
        sp.ip_batch("r", router_lines)
        devs = {
            "c": [f"c{p.index}" for p in plan.paths],
            "s": ["s0"],
            "r": [f"rc{p.index}" for p in plan.paths] + ["rs0"]
            + [f"{e}{ln.index}" for ln in plan.links for e in ("la", "lb")],
        }
        # Offloads off on every veth: with TSO/GSO/GRO the forwarder would see 64 KB
        # super-packets and htb would meter them as one; with tx checksum offload the
        # frames it reads would carry unfilled checksums (ethtool(8) -K).
        for role, names in devs.items():
            script = "; ".join(f"ethtool -K {d} tso off gso off gro off tx off >/dev/null" for d in names)
            sp.exec(role, ["sh", "-ec", script])
        # Receive steering per flow on every veth. With offloads off a veth hands each
        # frame to the backlog of the CPU that sent it (veth_xmit -> netif_rx ->
        # enqueue_to_backlog), so two frames of one subflow sent from two CPUs (the
        # app's write, an ACK's softirq, a qdisc's watchdog) could be processed in the
        # other order: the emulator reordered, which no scenario link does (the kernel
        # counted TCPSACKReorder and undid recoveries on 100 Mbit/s paths). RPS over all
        # CPUs picks the backlog by the flow's hash instead (get_rps_cpu; no RFS table
        # is set), so one flow is always processed on one CPU, in order
        # (Documentation/networking/scaling.rst). /sys/class/net follows the namespace
        # sysfs was mounted in, hence `ip netns exec`, which mounts it (ip-netns(8)).
        mask = format((1 << (os.cpu_count() or 1)) - 1, "x")
        for role, names in devs.items():
            script = "; ".join(f"for q in /sys/class/net/{d}/queues/rx-*; do echo {mask} > $q/rps_cpus; done"
                               for d in names)
            run(["ip", "netns", "exec", sp.ns[role], "sh", "-ec", script])
        self.rps_mask = mask
        self.ports = devs["r"]
        for role, names in devs.items():
            sp.ip_batch(role, [f"link set {d} up" + (" promisc on" if role == "r" else "") for d in names]
                        + ["link set lo up"])

        # Addresses, per-source policy routing (one table per path), static neighbours.
        metrics = f" initcwnd {plan.initial_cwnd} rto_min {int(round(plan.min_rto_s * 1000))}ms"
        if not plan.delayed_ack:
            metrics += " quickack 1"
        srv = plan.server_ip
        init = plan.flows[0].initial_path
        lines = []
        for p in plan.paths:
            c = f"c{p.index}"
            lines += [
                f"addr add {p.client_ip}/32 dev {c}",
                f"neigh add {srv} lladdr {SERVER_MAC} dev {c} nud permanent",
                f"route add {srv}/32 dev {c} src {p.client_ip} table {100 + p.index}{metrics}",
                f"rule add from {p.client_ip} table {100 + p.index} pref {1000 + p.index}",
            ]
        lines.append(f"route add {srv}/32 dev c{init} src {plan.paths[init].client_ip}{metrics}")
        sp.ip_batch("c", lines)
        lines = [f"addr add {srv}/32 dev s0"]
        for p in plan.paths:
            lines += [
                f"neigh add {p.client_ip} lladdr {client_mac(p.index)} dev s0 nud permanent",
                f"route add {p.client_ip}/32 dev s0 src {srv}{metrics}",
            ]
        sp.ip_batch("s", lines)

        # Links: the forwarder is the link (its DropTail queue, serialiser and delay line,
        # emulator revision 6); the wire's qdisc is a long pfifo that never binds, so that
        # a frame leaves the veth pair when the forwarder sends it.
        tc = []
        for ln in plan.links:
            for dev, d, dr in ((f"la{ln.index}", "f", ln.fwd), (f"lb{ln.index}", "r", ln.rev)):
                tc.append(f"qdisc add dev {dev} root handle 1: pfifo limit {WIRE_QUEUE}")
                self.rates[(ln.index, d)] = dr.rate_bps
        sp.tc_batch("r", tc)
        self.tc_lines = tc

    def forwarder_config(self) -> str:
        plan = self.plan
        idx = {name: i for i, name in enumerate(self.ports)}
        lines = [f"seed {plan.seed}"] + [f"port {p}" for p in self.ports]
        for ln in plan.links:
            # The simulator's loss streams of this seed (rng.rs), so that both backends
            # draw the same losses frame by frame: common random numbers, and a sim/kernel
            # ratio that compares the stacks, not two samples of where the losses fell.
            streams = [_core.rng_stream_state(plan.seed, f"link/{ln.name}/{d}/loss") for d in ("forward", "reverse")]
            limits = []
            for dr in (ln.fwd, ln.rev):
                limit, unit = dr.queue
                limits.append(f"{max(1, limit)} p" if unit == "pkt" else f"{max(plan.mtu, limit)} b")
            lines.append(f"link {idx[f'la{ln.index}']} {idx[f'lb{ln.index}']} {int(round(ln.fwd.delay_s * 1e9))} "
                         f"{ln.fwd.loss!r} {int(round(ln.rev.delay_s * 1e9))} {ln.rev.loss!r} {streams[0]} {streams[1]} "
                         f"{self.rates[(ln.index, 'f')]!r} {self.rates[(ln.index, 'r')]!r} {limits[0]} {limits[1]}")
        for p in plan.paths:
            lines.append(f"path {p.client_ip} {idx[f'rc{p.index}']} {idx['rs0']} {len(p.links)} "
                         + " ".join(map(str, p.links)) + f" {len(p.reverse_links)} " + " ".join(map(str, p.reverse_links)))
        for p in plan.paths:
            if p.name in self.pcap_files:
                lines.append(f"pcap {p.index} {self.pcap_files[p.name]}")
        return "\n".join(lines) + "\n"

    def start_forwarder(self, exe: Path) -> None:
        conf = self.workdir / "forwarder.conf"
        conf.write_text(self.forwarder_config())
        err = open(self.workdir / "forwarder.stderr", "w")
        self.forwarder = self.space.spawn([str(exe), str(conf)], "r", stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        err.close()
        line = self.forwarder.stdout.readline() if self.forwarder.stdout else ""
        if not line.startswith("ready"):
            raise RuntimeError(f"the forwarder did not start: {self.forwarder_error() or line.strip()}")

    def stop_forwarder(self, timeout_s: float = 3.0) -> None:
        """End of the control pipe: the forwarder closes its captures and exits."""
        if self.forwarder is None or self.forwarder.poll() is not None:
            return
        if self.forwarder.stdin is not None:
            self.forwarder.stdin.close()
        try:
            self.forwarder.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass

    def forwarder_error(self) -> str:
        try:
            return (self.workdir / "forwarder.stderr").read_text().strip()
        except OSError:
            return ""

    def configure_mptcp(self) -> dict[str, Any]:
        """Limits on both ends; on the client one endpoint per path of the connections,
        id = path index + 1 (`subflow`, plus `fullmesh`, plus `backup` for backup paths and
        for PCDC's paths outside SP*; ip-mptcp(8)). A PCDC path outside SP* that carries
        the initial subflow gets its endpoint changed to backup once connected (MP_PRIO,
        by the client app): an endpoint's flags apply to the joins it opens."""
        sp, plan = self.space, self.plan
        sp.ip("s", "mptcp", "limits", "set", "subflow", "8", "add_addr_accepted", "8")
        sp.ip("c", "mptcp", "limits", "set", "subflow", str(plan.subflows_limit), "add_addr_accepted", "8")
        initial = {f.initial_path for f in plan.flows if f.kind == "mptcp"}
        for k in plan.endpoints:
            p = plan.paths[k]
            backup = p.backup or (k in plan.standby and k not in initial)
            flags = ["subflow"] + (["fullmesh"] if plan.fullmesh else []) + (["backup"] if backup else [])
            sp.ip("c", "mptcp", "endpoint", "add", p.client_ip, "id", str(k + 1), "dev", f"c{k}", *flags)
        return {
            "client_endpoints": sp.ip("c", "mptcp", "endpoint", "show").strip().splitlines(),
            "client_limits": sp.ip("c", "mptcp", "limits", "show").strip(),
            "server_limits": sp.ip("s", "mptcp", "limits", "show").strip(),
        }

    def set_backup(self, path: int) -> None:
        """MP_PRIO: the subflows from this path's address become backups (RFC 8684
        §3.3.8; `ip mptcp endpoint change ID backup`)."""
        # The change sets the backup and fullmesh flags together: a fullmesh flag that
        # changed would make the kernel remove and reopen the endpoint's subflows
        # (pm_kernel.c mptcp_pm_nl_fullmesh).
        self.space.ip("c", "mptcp", "endpoint", "change", "id", str(path + 1), "backup",
                      *(["fullmesh"] if self.plan.fullmesh else []))

    # -- while running ---------------------------------------------------------------------
    def control(self, line: str) -> None:
        if self.forwarder is None or self.forwarder.stdin is None:
            return
        self.forwarder.stdin.write(line + "\n")
        self.forwarder.stdin.flush()

    def set_rate(self, link: int, d: str, bps: float) -> None:
        rate = max(1000, int(round(bps)))
        self.rates[(link, d)] = bps
        if self.forwarder is not None and self.forwarder.poll() is None:
            self.control(f"rate {link} {d} {float(rate)!r}")  # the forwarder's serialiser

    def forwarder_stats(self) -> dict[tuple[int, str], list[int]]:
        """{(link, "f"|"r"): [in, lost, down, qdrop, out, held, queue_pkts, queue_bytes]}"""
        self.control("stats")
        out: dict[tuple[int, str], list[int]] = {}
        assert self.forwarder is not None and self.forwarder.stdout is not None
        while True:
            line = self.forwarder.stdout.readline()
            if not line:
                raise RuntimeError(f"the forwarder stopped: {self.forwarder_error()}")
            parts = line.split()
            if parts[0] == "end":
                return out
            out[(int(parts[1]), parts[2])] = [int(x) for x in parts[3:]]

