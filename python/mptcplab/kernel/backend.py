"""`run_kernel()`: run a scenario on the Linux MPTCP stack in network namespaces.

The result has the simulator's shape (`Result`): the same tables, with NaN where the
kernel gives no figure, and `meta["backend"] = "kernel"` with the kernel version, the
sysctls and MPTCP limits/endpoints, the qdiscs, the emulator's parameters, the buffer
figures and the schedule as applied. See docs/kernel.md.
"""
from __future__ import annotations

import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import ScenarioError
from ..result import Result
from ..scenario import Scenario, check_seed
from . import apps
from .emulator import TCP_RMEM, TCP_WMEM, Emulator, build_forwarder
from .netns import RunSpace
from .plan import SCHEDULE_STEP_S, Plan, bits_per_s, make_plan, seconds, stored_ceiling_mbps

NAN = float("nan")
APPS = Path(apps.__file__)


class KernelRunError(RuntimeError):
    """The kernel run failed (an app, the forwarder or a setup command)."""


class IntegrityError(KernelRunError):
    """The receiver did not get exactly the bytes the sender sent."""


def check_environment() -> None:
    """Refuse early, in one line, what this machine cannot do."""
    if sys.platform != "linux":
        raise ScenarioError("--backend", "kernel: needs Linux with MPTCP; the sim backend runs anywhere")
    # CAP_NET_ADMIN (bit 12) in the effective set (capabilities(7)).
    caps = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            caps = int(line.split()[1], 16)
    if not caps & (1 << 12):
        raise ScenarioError("--backend", "kernel: needs CAP_NET_ADMIN (run as root); the sim backend needs none")
    try:
        enabled = Path("/proc/sys/net/mptcp/enabled").read_text().strip()
    except OSError:
        enabled = None
    if enabled is None:
        raise ScenarioError("--backend", "kernel: this kernel has no MPTCP (no net.mptcp sysctls); "
                            "the sim backend runs this scenario")
    missing = [t for t in ("ip", "tc", "ethtool") if shutil.which(t) is None]
    if missing:
        raise ScenarioError("--backend", f"kernel: missing {', '.join(missing)} (`./dev install` installs them); "
                            "the sim backend runs this scenario")


def _apps_cmd(role: str, cfg: dict[str, Any]) -> list[str]:
    return [sys.executable, "-I", str(APPS), role, json.dumps(cfg)]


def schedule_actions(plan: Plan) -> list[tuple[float, str, int, str, float]]:
    """Each link's schedule as steps (time_s, what, link, "f"|"r", value): a ramp
    becomes stairs of SCHEDULE_STEP_S from the value in force at its start."""
    actions: list[tuple[float, str, int, str, float]] = []
    for ln in plan.links:
        cur = {
            ("rate", "f"): ln.fwd.rate_bps, ("rate", "r"): ln.rev.rate_bps,
            ("delay", "f"): ln.fwd.delay_s, ("delay", "r"): ln.rev.delay_s,
            ("loss", "f"): ln.fwd.loss, ("loss", "r"): ln.rev.loss,
            ("state", "f"): 1.0, ("state", "r"): 1.0,
        }
        for ch in sorted(ln.schedule, key=lambda c: seconds(c["at"])):
            at = seconds(ch["at"])
            dirs = {"both": ("f", "r"), "forward": ("f",), "reverse": ("r",)}[ch.get("direction") or "both"]
            targets: list[tuple[str, float]] = []
            if ch.get("rate"):
                targets.append(("rate", bits_per_s(ch["rate"])))
            if ch.get("delay"):
                targets.append(("delay", seconds(ch["delay"])))
            if ch.get("loss") is not None:
                targets.append(("loss", float(ch["loss"])))
            if ch.get("state"):
                targets.append(("state", 1.0 if ch["state"] == "up" else 0.0))
            for what, value in targets:
                for d in dirs:
                    if ch.get("until"):
                        until = seconds(ch["until"])
                        start = cur[(what, d)]
                        n = max(1, int(math.ceil((until - at) / SCHEDULE_STEP_S - 1e-9)))
                        for i in range(1, n + 1):
                            t = min(until, at + i * SCHEDULE_STEP_S)
                            frac = (t - at) / (until - at) if until > at else 1.0
                            actions.append((t, what, ln.index, d, start + (value - start) * frac))
                    else:
                        actions.append((at, what, ln.index, d, value))
                    cur[(what, d)] = value
    actions.sort(key=lambda a: a[0])
    return actions


def run_kernel(
    scenario: Any,
    seed: int | None = None,
    duration: float | str | None = None,
    progress: Callable[[float, float], None] | None = None,
    *,
    drain_s: float = 10.0,
    pcap: str | os.PathLike[str] | None = None,
    _corrupt_receive: bool = False,
) -> Result:
    """Run `scenario` on the kernel and return a `Result` (docs/kernel.md).

    `drain_s`: after the duration, how long the senders wait for the data still
    buffered to arrive before they abort; the integrity check then covers the prefix
    that arrived. `pcap`: a directory for one capture per path (`<path>.pcap`, the
    first 128 bytes of each frame where it leaves and reaches the client).
    `_corrupt_receive` is a test hook: the receiver flips one bit.
    """
    from ..api import as_scenario

    scn: Scenario = as_scenario(scenario)
    if seed is not None:
        scn = scn.with_seed(check_seed(seed))
    if duration is not None:
        scn = scn.with_duration(duration)
    check_environment()
    plan = make_plan(scn)
    pcap_files = None
    if pcap is not None:
        from ..pcap import prepare_captures

        pcap_files = prepare_captures(pcap, [p.name for p in plan.paths])
    exe = build_forwarder()
    wall0 = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="mptcplab-kernel-"))
    old = _interrupt_on_term()
    try:
        with RunSpace() as space:
            emu = Emulator(space, plan, workdir, pcap_files)
            emu.build()
            emu.start_forwarder(exe)
            mptcp_cfg = emu.configure_mptcp()
            raw = _drive(space, emu, plan, drain_s, _corrupt_receive, progress)
            emu.stop_forwarder()
            prefix = space.prefix
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        for sig, handler in old.items():
            signal.signal(sig, handler)
    wall = time.monotonic() - wall0
    return _result(scn, plan, emu, raw, mptcp_cfg, prefix, wall)


def _interrupt_on_term() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, so the teardown runs as on Ctrl-C
    (SIGKILL cannot be caught: the next start cleans up, see netns.py)."""
    old: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return old

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        old[sig] = signal.signal(sig, handler)
    return old


def _flow_cfg(plan: Plan) -> list[dict[str, Any]]:
    return [{
        "name": f.name, "kind": f.kind, "cc": f.cc, "port": f.port, "start_s": f.start_s,
        "size_bytes": f.size_bytes, "client_ip": plan.paths[f.initial_path].client_ip,
        "send_buffer": f.send_buffer, "receive_buffer": f.so_rcvbuf,
        "stream": None if f.stream is None else {
            "bitrate_bps": f.stream.bitrate_bps, "frame_rate": f.stream.frame_rate,
            "duration_s": f.stream.duration_s},
        # PCDC: an initial subflow outside SP* is set to backup once connected (MP_PRIO)
        "mp_prio_after_connect": [f.initial_path + 1] if f.kind == "mptcp" and f.initial_path in plan.standby
        else [],
        # joins (mptcpi_subflows counts them) to wait for before that MP_PRIO
        "fullmesh": plan.fullmesh,
        "mp_prio_wait_subflows": min(plan.subflows_limit, len([k for k in plan.endpoints if k != f.initial_path])),
    } for f in plan.flows]


def _drive(space: RunSpace, emu: Emulator, plan: Plan, drain_s: float, corrupt: bool,
           progress: Callable[[float, float], None] | None) -> dict[str, Any]:
    flows = _flow_cfg(plan)
    base = {"flows": flows, "server_ip": plan.server_ip, "sample_s": plan.sample_s,
            "duration_s": plan.duration_s, "drain_s": drain_s, "seed": plan.seed}
    # t0 is CLOCK_MONOTONIC, shared by every process on the machine.
    t0 = time.monotonic() + 1.0
    srv_cfg = {**base, "t0": t0, **({"corrupt_at": 100_000} if corrupt else {})}
    server = space.spawn(_apps_cmd("server", srv_cfg), "s", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None
    ready = server.stdout.readline()
    if not ready.startswith("ready"):
        raise KernelRunError(f"the receiver did not start: {server.stderr.read().strip() if server.stderr else ''}")
    client = space.spawn(_apps_cmd("client", {**base, "t0": t0}), "c", stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    actions = schedule_actions(plan)
    if plan.withhold_at_s is not None:
        # PCDC Ω measurement (seed 000 Eq. 5): the withheld paths stop carrying data at T
        # and stay established: MP_PRIO backup on their subflows.
        actions += [(plan.withhold_at_s, "backup", p, "-", 1.0) for p in plan.withhold]
        actions.sort(key=lambda a: a[0])
    applied: list[list[Any]] = []
    links_rows: list[dict[str, Any]] = []
    k = 1
    ai = 0
    end = t0 + plan.duration_s
    while True:
        next_tick = t0 + k * plan.sample_s
        next_action = t0 + actions[ai][0] if ai < len(actions) else math.inf
        due = min(next_tick, next_action)
        if due > end + 1e-9:
            break
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        if next_action <= next_tick:
            at, what, link, d, value = actions[ai]
            if what == "backup":
                emu.set_backup(link)
                applied.append([at, round(time.monotonic() - t0, 4), what, plan.paths[link].name, "-", value])
                ai += 1
                continue
            if what == "rate":
                emu.set_rate(link, d, value)
            elif what == "delay":
                emu.control(f"delay {link} {d} {int(round(value * 1e9))}")
            else:
                emu.control(f"{what} {link} {d} {value!r}")
            applied.append([at, round(time.monotonic() - t0, 4), what, plan.links[link].name,
                            "forward" if d == "f" else "reverse", value])
            ai += 1
            continue
        fstats = emu.forwarder_stats()
        for ln in plan.links:
            for d in ("f", "r"):
                # in, lost, down, qdrop, out, held, queue packets, queue bytes (forwarder.c)
                fs = fstats.get((ln.index, d), [0] * 8)
                links_rows.append({
                    "time_s": round(k * plan.sample_s, 9), "link": ln.name,
                    "direction": "forward" if d == "f" else "reverse",
                    "queue_pkts": fs[6], "queue_bytes": fs[7],
                    "sent_pkts": fs[0], "delivered_pkts": fs[4],
                    "dropped_pkts": fs[1] + fs[2] + fs[3], "lost_pkts": fs[1], "queue_drops": fs[3],
                    "delay_line_pkts": fs[5], "rate_mbps": emu.rates[(ln.index, d)] / 1e6,
                })
        if progress is not None:
            progress(k * plan.sample_s, plan.duration_s)
        if emu.forwarder is not None and emu.forwarder.poll() is not None:
            raise KernelRunError(f"the forwarder stopped during the run: {emu.forwarder_error()}")
        k += 1
    try:
        c_out, c_err = client.communicate(timeout=drain_s + 15)
        s_out, s_err = server.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        raise KernelRunError("the senders or the receiver did not finish after the drain time") from None
    try:
        cres = json.loads(c_out.strip().splitlines()[-1])
        sres = json.loads(s_out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise KernelRunError(f"an app failed: {(c_err + s_err).strip()[-500:]}") from None
    return {"client": cres, "server": sres, "links": links_rows, "applied": applied,
            "forwarder_end": emu.forwarder_stats(),
            "netstat": {role: netstat_counters(space.exec(r, ["cat", "/proc/net/netstat", "/proc/net/snmp"],
                                                          check=False))
                        for role, r in (("client", "c"), ("server", "s"))}}


def netstat_counters(text: str) -> dict[str, int]:
    """The non-zero counters of /proc/net/netstat and /proc/net/snmp ("TcpExt",
    "MPTcpExt", "Tcp", ...; pairs of a header line and a value line) as
    {"TcpExt.TCPRcvQDrop": n, ...}: why a run lost or retransmitted what the links did
    not drop (receive-queue drops, zero-window drops, MPTCP's own counters)."""
    out: dict[str, int] = {}
    lines = [ln.split() for ln in text.splitlines() if ":" in ln]
    for head, vals in zip(lines, lines[1:]):
        if not head or not vals or head[0] != vals[0] or not vals[1:2] or not vals[1].lstrip("-").isdigit():
            continue
        group = head[0].rstrip(":")
        for name, v in zip(head[1:], vals[1:]):
            try:
                n = int(v)
            except ValueError:
                continue
            if n and group in ("TcpExt", "MPTcpExt", "Tcp", "IpExt", "Ip"):
                out[f"{group}.{name}"] = n
    return out


def _check_integrity(plan: Plan, cres: dict, sres: dict) -> dict[str, str]:
    verdict: dict[str, str] = {}
    for f in plan.flows:
        c, s = cres["flows"][f.name], sres["flows"][f.name]
        if c["error"] and c["sent"] == 0:
            raise KernelRunError(f"flow {f.name}: the sender failed: {c['error']}")
        if c["closed"] == "graceful" and s["done"]:
            if s["bytes"] != c["sent"] or s["sha256"] != c["sha256"]:
                raise IntegrityError(
                    f"flow {f.name}: the receiver got {s['bytes']} B (sha256 {s['sha256'][:16]}…), "
                    f"the sender sent {c['sent']} B (sha256 {c['sha256'][:16]}…)")
            verdict[f.name] = "ok"
        else:
            want = apps.stream_sha256(plan.seed, s["bytes"])
            if s["bytes"] > c["sent"] or s["sha256"] != want:
                raise IntegrityError(
                    f"flow {f.name}: the {s['bytes']} B received are not the start of the "
                    f"{c['sent']} B sent (sha256 {s['sha256'][:16]}… != {want[:16]}…)")
            verdict[f.name] = f"ok (prefix: {c['closed']} close)"
    return verdict


def _frames(plan: Plan, cres: dict, sres: dict) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The `frames` table of the streams (docs/streaming.md): scheduled and enqueued from
    the sender, taken and acked from its MPTCP_INFO poll (first poll past the frame's
    last byte), delivered from the receiver. A stage reached after the run's duration is
    NaN, as in the simulator, whose run ends there."""
    rows: list[dict[str, Any]] = []
    timing: dict[str, Any] = {}
    end = plan.duration_s

    def stage(v: float | None) -> float:
        return NAN if v is None or v > end + 1e-9 else float(v)

    for f in plan.flows:
        if f.stream is None:
            continue
        c, s = cres["flows"][f.name], sres["flows"][f.name]
        taken, acked, delivered = c["taken_s"], c["acked_s"], s["frames_delivered_s"]
        prev_end = 0
        for k, (sched, end_off, enq) in enumerate(c["frames"]):
            rows.append({
                "flow": f.name, "frame": k, "size_bytes": end_off - prev_end, "scheduled_s": sched,
                "enqueued_s": stage(enq), "taken_s": stage(taken[k] if k < len(taken) else None),
                "acked_s": stage(acked[k] if k < len(acked) else None),
                "delivered_s": stage(delivered[k] if k < len(delivered) else None),
            })
            prev_end = end_off
        span = max(1e-9, end - (c["connected_s"] or 0.0))
        timing[f.name] = {
            "enqueued_s, delivered_s": "sender and receiver apps, at the write/read that passed the frame's last byte",
            "taken_s, acked_s": ("first MPTCP_INFO poll (mptcpi_bytes_sent / mptcpi_bytes_acked; TCP_INFO for "
                                 "TCP) that saw the frame's last byte: late by up to one poll"),
            "poll_interval_s": apps.POLL_S, "polls": c["polls"],
            "mean_poll_interval_s": round(span / c["polls"], 6) if c["polls"] else None,
            "max_poll_gap_s": c["poll_max_gap_s"],
            "delay_samples": "not available: per-segment DATA_ACK times need the kernel's per-skb state",
        }
    return rows, (timing or None)


def subflow_sample(t: float, flow: str, sid: int, path: str, sf: Mapping[str, Any],
                   prev: tuple[float, float] | None, dt: float, mss: int) -> dict[str, Any]:
    """One row of the subflow time series from a subflow's TCP_INFO sample `sf` (struct
    tcp_info, include/uapi/linux/tcp.h, Linux 6.18) and its (bytes_sent, bytes_acked) at the
    previous sample (None: the first). throughput_mbps is Δ tcpi_bytes_acked / dt (bytes
    newly acknowledged at the subflow level, RFC 4898 tcpEStatsAppHCThruOctetsAcked),
    the simulator's column of the same name; sent_mbps is Δ tcpi_bytes_sent / dt (payload
    transmitted, retransmissions included: RFC 4898 tcpEStatsPerfHCDataOctetsOut),
    reference metrics.md §6.1's "throughput"."""
    sent0, acked0 = prev if prev is not None else (0.0, 0.0)
    mss = sf["snd_mss"] or mss
    return {
        "time_s": t, "flow": flow, "subflow": sid, "path": path,
        "cwnd_pkts": sf["snd_cwnd"], "ssthresh_pkts": sf["snd_ssthresh"], "srtt_ms": sf["rtt_us"] / 1000.0,
        # tcp_packets_in_flight() (include/net/tcp.h): unacked − (sacked + lost) + retrans
        "inflight_bytes": max(0, sf["unacked"] - sf["sacked"] - sf["lost"] + sf["retrans"]) * mss,
        "bytes_sent": sf["bytes_sent"], "bytes_acked": sf["bytes_acked"], "bytes_retrans": sf["bytes_retrans"],
        "throughput_mbps": (float(sf["bytes_acked"]) - acked0) * 8 / dt / 1e6,
        "sent_mbps": (float(sf["bytes_sent"]) - sent0) * 8 / dt / 1e6,
        "rttvar_ms": sf["rttvar_us"] / 1000.0, "min_rtt_ms": sf["min_rtt_us"] / 1000.0,
        "delivery_rate_mbps": sf["delivery_rate"] * 8 / 1e6, "pacing_rate_mbps": sf["pacing_rate"] * 8 / 1e6,
        "snd_wnd_bytes": sf["snd_wnd"], "rto_count": sf["total_rto"], "ca_state": sf["ca_state"],
    }


def subflow_summary_row(last: Mapping[str, Any], srtts_ms: Sequence[float], active_s: float) -> dict[str, Any]:
    """A subflow's summary row from its last time-series row (`subflow_sample`) and its
    SRTT samples: throughput_mbps = tcpi_bytes_acked × 8 / active time, as the
    simulator's summary (bytes acknowledged at the subflow level)."""
    return {
        "flow": last["flow"], "subflow": last["subflow"], "path": last["path"], "bytes_sent": last["bytes_sent"],
        "bytes_retrans": last["bytes_retrans"], "bytes_acked": last["bytes_acked"],
        "mean_srtt_ms": sum(srtts_ms) / len(srtts_ms) if srtts_ms else NAN,
        "throughput_mbps": last["bytes_acked"] * 8 / active_s / 1e6, "rto_count": last["rto_count"],
        "recoveries": NAN, "sched_new_segs": NAN, "sched_reinjected_segs": NAN,
        "sched_copied_segs": NAN, "sched_penalised": NAN,
    }


def _result(scn: Scenario, plan: Plan, emu: Emulator, raw: dict, mptcp_cfg: dict, prefix: str,
            wall: float) -> Result:
    cres, sres = raw["client"], raw["server"]
    integrity = _check_integrity(plan, cres, sres)
    dt = plan.sample_s
    path_of_ip = {p.client_ip: p for p in plan.paths}

    sub_rows: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    ids: dict[str, dict[tuple[str, int], int]] = {f.name: {} for f in plan.flows}
    prev_counts: dict[tuple[str, int], tuple[float, float]] = {}  # (bytes_sent, bytes_acked)
    last: dict[tuple[str, int], dict[str, Any]] = {}
    srtts: dict[tuple[str, int], list[float]] = {}
    conn_sndbuf: dict[tuple[int, str], float] = {}
    for row in cres["samples"]:
        t = round(row["k"] * dt, 9)
        for f in plan.flows:
            smp = row.get(f.name)
            if not smp:
                continue
            conn_sndbuf[(row["k"], f.name)] = smp.get("outq", -1)
            for sf in smp["subflows"]:
                key = (sf["laddr"], sf["lport"])
                if key not in ids[f.name]:
                    ids[f.name][key] = len(ids[f.name])
                    p = path_of_ip.get(sf["laddr"])
                    # a join from a backup endpoint opens as a backup subflow (MP_JOIN B bit)
                    joined_backup = (p is not None and p.index != f.initial_path
                                     and (p.backup or p.index in plan.standby))
                    # the initial subflow is up when connect() returned; a join is dated
                    # by the first sample that shows it
                    connected = cres["flows"][f.name].get("connected_s")
                    initial = ids[f.name][key] == 0 and p is not None and p.index == f.initial_path
                    events.append({"time_s": connected if initial and connected is not None else t,
                                   "flow": f.name, "subflow": ids[f.name][key],
                                   "path": p.name if p else sf["laddr"], "from": "idle",
                                   "to": "backup" if joined_backup else "active",
                                   "reason": "established (connect returned)" if initial and connected is not None
                                   else "established (first sample)"})
                sid = ids[f.name][key]
                p = path_of_ip.get(sf["laddr"])
                r = subflow_sample(t, f.name, sid, p.name if p else sf["laddr"], sf, prev_counts.get((f.name, sid)),
                                   dt, plan.mss)
                prev_counts[(f.name, sid)] = (float(sf["bytes_sent"]), float(sf["bytes_acked"]))
                srtt = r["srtt_ms"]
                sub_rows.append(r)
                last[(f.name, sid)] = r
                if srtt > 0:
                    srtts.setdefault((f.name, sid), []).append(srtt)

    # MP_PRIO backup while running (PCDC): the initial subflow once connected, and the
    # withheld paths' subflows at T (Ω measurement).
    for f in plan.flows:
        for at, _eids, errs in cres["flows"][f.name].get("mp_prio") or []:
            if errs:
                raise KernelRunError(f"flow {f.name}: MP_PRIO failed: {'; '.join(errs)}")
            events.append({"time_s": at, "flow": f.name, "subflow": 0, "path": plan.paths[f.initial_path].name,
                           "from": "active", "to": "backup", "reason": "mp_prio"})
        for _, at, what, pname, _, _ in raw["applied"]:
            if what != "backup" or f.kind != "mptcp":
                continue
            p = next(x for x in plan.paths if x.name == pname)
            for (laddr, _port), sid in ids[f.name].items():
                if laddr == p.client_ip:
                    events.append({"time_s": at, "flow": f.name, "subflow": sid, "path": pname,
                                   "from": "active", "to": "backup", "reason": "mp_prio"})
    events.sort(key=lambda e: (e["time_s"], e["flow"], e["subflow"]))

    conn_rows: list[dict[str, Any]] = []
    prev_del: dict[str, int] = {}
    for row in sres["samples"]:
        t = round(row["k"] * dt, 9)
        for f in plan.flows:
            delivered, inq = row.get(f.name, [0, -1])
            pd_ = prev_del.get(f.name, 0)
            prev_del[f.name] = delivered
            outq = conn_sndbuf.get((row["k"], f.name), -1)
            conn_rows.append({
                "time_s": t, "flow": f.name, "goodput_mbps": (delivered - pd_) * 8 / dt / 1e6,
                "bytes_delivered": delivered, "ooo_bytes": NAN,
                "rcvbuf_bytes": inq if inq >= 0 else NAN, "sndbuf_bytes": outq if outq >= 0 else NAN,
            })

    summary_rows: list[dict[str, Any]] = []
    subsum_rows: list[dict[str, Any]] = []
    for f in plan.flows:
        s, c = sres["flows"][f.name], cres["flows"][f.name]
        active = max(1e-9, plan.duration_s - f.start_s)
        completed = s["done"] and f.size_bytes is not None and s["bytes"] >= f.size_bytes
        completion = s["end_s"] if completed else NAN
        delivered = s["bytes"] if completed else sres["delivered_at_end"][f.name]
        span = active  # as the sim: bytes delivered over (duration - start), completed or not
        subs = [last[(f.name, sid)] for sid in sorted(set(ids[f.name].values()))]
        summary_rows.append({
            "flow": f.name, "kind": f.kind, "cc": c["cc"] or f.cc,
            "scheduler": "default" if f.kind == "mptcp" else "-",
            "path_manager": ("in-kernel " + f.path_manager) if f.kind == "mptcp" else "-",
            "subflows": len(subs), "bytes_delivered": delivered, "goodput_mbps": delivered * 8 / span / 1e6,
            "bytes_sent": sum(x["bytes_sent"] for x in subs), "bytes_retrans": sum(x["bytes_retrans"] for x in subs),
            "completion_s": completion, "ooo_max_bytes": NAN, "rcvbuf_max_bytes": NAN,
            "integrity": integrity[f.name], "app_bytes_sent": c["sent"], "app_bytes_received": s["bytes"],
        })
        for x in subs:
            sid = x["subflow"]
            subsum_rows.append(subflow_summary_row(x, srtts.get((f.name, sid), []), active))

    frame_rows, frame_timing = _frames(plan, cres, sres)

    def cols(rows: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, list[Any]]:
        if not rows:
            return {n: [] for n in (names or [])}
        keys = list(rows[0].keys())
        return {k: [r.get(k, NAN) for r in rows] for k in keys}

    ceiling, ceiling_src = stored_ceiling_mbps()
    max_wnd: dict[str, int] = {}  # the peer's largest advertised window (tcpi_snd_wnd)
    for r_ in sub_rows:
        max_wnd[r_["flow"]] = max(max_wnd.get(r_["flow"], 0), r_["snd_wnd_bytes"])
    buffers = {
        f.name: {
            "receive_buffer_payload_bytes": f.receive_buffer,
            "accounting": plan.receive_buffer_accounting,
            "so_rcvbuf_set": sres["flows"][f.name]["rcvbuf_set"],
            "so_rcvbuf_kernel": sres["flows"][f.name]["rcvbuf_kernel"],
            "max_advertised_window_bytes": max_wnd.get(f.name),
            "send_buffer_payload_bytes": f.send_buffer,
            "so_sndbuf_kernel_at_start": cres["flows"][f.name]["sndbuf_kernel"],
            "mode": (f"fixed: SO_RCVBUF = {f.so_rcvbuf} before listen (docs/kernel.md)" if f.receive_buffer
                     else f"autotuning (tcp_rmem {TCP_RMEM})"),
        } for f in plan.flows
    }
    meta = {
        "backend": "kernel",
        "version": _core.version(),
        "kernel": platform.release(),
        "seed": plan.seed,
        "duration_s": plan.duration_s,
        "wall_s": wall,
        "scenario_name": plan.name,
        "prefix": prefix,
        "initial_paths": {f.name: plan.paths[f.initial_path].name for f in plan.flows},
        "sysctls": emu.sysctls,
        "mptcp": mptcp_cfg,
        "qdiscs": emu.tc_lines,
        "emulator": {
            "forwarder": ("AF_PACKET L2 forwarder, FIFO delay line, Bernoulli loss per direction drawn from the "
                          "simulator's loss stream of the seed, frame by frame (forwarder.c)"),
            "forwarder_config": emu.forwarder_config(),
            "ceiling_mbps": ceiling, "ceiling_source": ceiling_src,
            "rate_metering": "the forwarder's serialiser, IP packet length (emulator revision 6)",
            "receive_steering": f"RPS per flow on every veth (rps_cpus {emu.rps_mask}): no reordering within a flow",
            "mtu": plan.mtu,
            "forwarder_end_stats": {f"{k[0]}{k[1]}": v for k, v in raw["forwarder_end"].items()},
        },
        "buffers": buffers,
        "netstat": raw.get("netstat", {}),
        "schedule_step_s": SCHEDULE_STEP_S,
        "schedule_applied": raw["applied"],
        "notes": plan.notes,
        "pcdc": None if not (plan.standby or plan.withhold) else {
            "standby_paths": [plan.paths[k].name for k in plan.standby],
            "withhold_paths": [plan.paths[k].name for k in plan.withhold], "withhold_at_s": plan.withhold_at_s,
            "how": "paths outside SP*: `ip mptcp endpoint add ... subflow backup` (MP_JOIN with the B bit); "
                   "the initial subflow's path, once connected, and withheld paths at T: "
                   "`ip mptcp endpoint change ID backup` (MP_PRIO, RFC 8684 §3.3.8)",
        },
        "frames": frame_timing,
        "pcap": emu.pcap_files,
        "tcp_wmem": TCP_WMEM,
    }
    columns = {
        "summary": cols(summary_rows),
        "subflow_summary": cols(subsum_rows),
        "subflows": cols(sub_rows),
        "connections": cols(conn_rows),
        "links": cols(raw["links"]),
        "subflow_events": cols(events, ["time_s", "flow", "subflow", "path", "from", "to", "reason"]),
    }
    if frame_rows:
        columns["frames"] = cols(frame_rows)
    result = Result(meta, scn, columns=columns)
    result.meta["scenario_sha256"] = scn.sha256()
    return result
