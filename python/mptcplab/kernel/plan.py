"""From a scenario to what the kernel backend builds (a `Plan`), or a one-line refusal.

Pure data: no namespaces, no root. The refusals name the field and say which backend
can run the scenario (`ScenarioError`, exit code 2 in the command).
"""
from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import Scenario

KERNEL_CC = ("reno", "cubic", "bbr")  # the congestion controls this kernel has
# Path managers the backend maps onto the in-kernel PM (ip-mptcp(8) endpoints), with the
# options it maps. pcdc: SP* as `subflow` endpoints, the others `subflow backup` (seed
# 000; docs/kernel.md). in_kernel: the simulator's model of this very PM (upstream
# profile), when the core has it.
KERNEL_PM = ("fullmesh", "default", "pcdc", "in_kernel")
KERNEL_PM_OPTIONS: dict[str, tuple[str, ...]] = {
    "fullmesh": (), "default": (), "pcdc": ("sp", "withhold", "withhold_at_ms"),
    "in_kernel": ("subflows_limit", "add_addr_accepted", "fullmesh"),
}
# `upstream` is the simulator's model of the kernel's default scheduler (upstream profile).
KERNEL_SCHEDULERS = ("minrtt", "upstream")
MAX_SUBFLOWS = 8  # `ip mptcp limits` accepts at most 8 (MPTCP_PM_ADDR_MAX-bound)
SCHEDULE_STEP_S = 0.1  # ramps become stairs of this width
MIN_SAMPLE_S = 0.01  # finest sample interval
DEFAULT_CEILING_MBPS = 200.0  # no selftest stored: the figure measured on the project machine (docs/kernel.md)
# Receive buffers. The scenario gives payload bytes; Linux doubles SO_RCVBUF into
# sk_rcvbuf (socket(7)), charges each queued segment its truesize, and advertises
# sk_rcvbuf x scaling_ratio, the measured payload/truesize ratio (tcp_win_from_space;
# 157/256 = 0.613 for 1448 B segments on these veths: a 200 000 B SO_RCVBUF gave a
# 245 456 B window). The global calibration: SO_RCVBUF = B / (2 x 0.613), so the window
# is about B payload bytes, as in the sim's "payload" accounting; with the sim's
# "linux" accounting (2 B charged a payload byte), SO_RCVBUF = B / 2, so sk_rcvbuf = B.
PAYLOAD_PER_TRUESIZE = 157 / 256


def so_rcvbuf_for(payload_bytes: int, accounting: str) -> int:
    if accounting == "linux":
        return max(1, payload_bytes // 2)
    return max(1, int(round(payload_bytes / (2 * PAYLOAD_PER_TRUESIZE))))


SELFTEST_FILE = Path(os.environ.get("MPTCPLAB_CACHE", Path.home() / ".cache" / "mptcplab")) / "kernel-selftest.json"

_NUM = r"\s*([0-9.]+(?:e[0-9]+)?)\s*"
_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_RATE = {"bit/s": 1, "bps": 1, "kbit/s": 1e3, "Kbit/s": 1e3, "kbps": 1e3, "Mbit/s": 1e6, "Mbps": 1e6,
         "Gbit/s": 1e9, "Gbps": 1e9}
_SIZE = {"B": 1, "KB": 1000, "kB": 1000, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_PKT = {"pkt", "pkts", "packets", "packet"}


def _split(text: str) -> tuple[float, str]:
    m = re.match(rf"^{_NUM}(\S+)\s*$", text)
    if not m:
        raise ValueError(text)
    return float(m.group(1)), m.group(2)


def seconds(text: str) -> float:
    v, u = _split(text)
    return v * _TIME[u]


def bits_per_s(text: str) -> float:
    v, u = _split(text)
    return v * _RATE[u]


def size_bytes(text: str) -> int:
    v, u = _split(text)
    return int(round(v * _SIZE[u]))


def queue_limit(text: str) -> tuple[int, str]:
    """("100 pkt") -> (100, "pkt"); ("150 KB") -> (150000, "B")."""
    v, u = _split(text)
    if u in _PKT:
        return int(round(v)), "pkt"
    return int(round(v * _SIZE[u])), "B"


@dataclass
class Dir:
    rate_bps: float
    delay_s: float
    queue: tuple[int, str]
    loss: float


@dataclass
class LinkPlan:
    index: int
    name: str
    fwd: Dir
    rev: Dir
    schedule: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PathPlan:
    index: int
    name: str
    links: list[int]          # forward, client -> server
    reverse_links: list[int]  # reverse, server -> client
    backup: bool
    client_ip: str


@dataclass
class FlowPlan:
    """An MPTCP connection or a background TCP flow."""
    name: str
    kind: str  # "mptcp" | "tcp"
    cc: str
    paths: list[int]
    initial_path: int
    start_s: float
    size_bytes: int | None
    port: int
    send_buffer: int | None       # SO_SNDBUF (payload bytes; the kernel doubles it)
    receive_buffer: int | None    # payload bytes; None = autotuning (tcp_rmem)
    scheduler: str = "default"
    path_manager: str = "-"
    so_rcvbuf: int | None = None  # what the receiver sets before listen (so_rcvbuf_for)
    stream: StreamPlan | None = None  # app.kind = "stream"; None: bulk


@dataclass
class StreamPlan:
    """A streaming app (docs/streaming.md): frame k ends at data offset
    floor((k + 1) · bitrate / (8 · frame_rate)) and is written at
    t_connect + round(k / frame_rate); `duration_s` bounds the frames written."""
    bitrate_bps: float
    frame_rate: float
    duration_s: float | None = None

    def frame_end(self, k: int) -> int:
        return int(math.floor((k + 1) * self.bitrate_bps / (8.0 * self.frame_rate)))

    def frame_offset_s(self, k: int) -> float:
        return round(k * 1e9 / self.frame_rate) / 1e9

    def frames_in(self, duration_s: float) -> int:
        """Frames scheduled strictly before `duration_s` after the frame clock's origin."""
        n = max(0, int(math.ceil(duration_s * self.frame_rate)))
        while n > 0 and self.frame_offset_s(n - 1) >= duration_s:
            n -= 1
        while self.frame_offset_s(n) < duration_s:
            n += 1
        return n


@dataclass
class Plan:
    name: str
    duration_s: float
    sample_s: float
    seed: int
    mss: int
    initial_cwnd: int
    min_rto_s: float
    delayed_ack: bool
    links: list[LinkPlan]
    paths: list[PathPlan]
    flows: list[FlowPlan]
    endpoints: list[int]        # path indices with an MPTCP endpoint on the client (id = index + 1)
    fullmesh: bool
    # PCDC (seed 000): paths outside SP*, whose subflows are backups (MP_JOIN B bit, or
    # MP_PRIO for the initial subflow), and the paths withheld at `withhold_at_s`
    # (Ω measurement: MP_PRIO backup while running).
    standby: list[int] = field(default_factory=list)
    withhold: list[int] = field(default_factory=list)
    withhold_at_s: float | None = None
    subflows_limit: int = MAX_SUBFLOWS  # `ip mptcp limits set subflow N`
    server_ip: str = "10.200.0.1"
    receive_buffer_accounting: str = "payload"
    notes: list[str] = field(default_factory=list)

    @property
    def mtu(self) -> int:
        return self.mss + 52  # IPv4 20 + TCP 20 + timestamps 12 (RFC 7323)

    def forwarder_load_mbps(self) -> float:
        """Frames the forwarder moves, in Mbit/s at full use: each path's bottleneck rate
        times its forwarder passes (links + 1), over 2 (the selftest's ceiling was
        measured through one link, i.e. two passes)."""
        total = 0.0
        for p in self.paths:
            rate = min(self.links[k].fwd.rate_bps for k in p.links) if p.links else 0.0
            total += rate * (len(p.links) + 1) / 2
        return total / 1e6


def _stream_plan(app: dict[str, Any], fld: str) -> StreamPlan | None:
    """The app of a connection or flow: None for bulk, a StreamPlan for a stream."""
    kind = app.get("kind") or "bulk"
    if kind == "bulk":
        # The backend's writer polls before each write of one 64 KiB chunk (apps._bulk);
        # `poll_chunk` may only name that.
        chunk = app.get("poll_chunk")
        if chunk is not None and size_bytes(str(chunk)) != 65536:
            raise _refuse(f"{fld}.poll_chunk", "the kernel backend's writer polls before each 64 KiB write "
                          f"(\"64 KiB\" or omitted), not {chunk}")
        return None
    if kind != "stream":
        raise _refuse(f"{fld}.kind", f"the kernel backend runs bulk and stream apps only, not {kind}")
    return StreamPlan(bits_per_s(str(app.get("bitrate") or "4.5 Mbit/s")), float(app.get("frame_rate") or 30.0),
                      seconds(app["duration"]) if app.get("duration") else None)


def _bernoulli_loss(direction: dict[str, Any], fld: str) -> float:
    """A link direction's loss probability: `loss`, or a Bernoulli `loss_model` (the
    emulator has no other kind)."""
    lm = direction.get("loss_model")
    if not lm:
        return float(direction.get("loss") or 0.0)
    if lm.get("kind") != "bernoulli":
        raise _refuse(f"{fld}.loss_model", f"the emulator has Bernoulli loss only, not {lm.get('kind')}")
    return float(lm["p"])


def _refuse(fld: str, message: str) -> ScenarioError:
    return ScenarioError(fld, f"{message} (backend kernel); the sim backend can run it")


def stored_ceiling_mbps() -> tuple[float, str]:
    """The emulator's ceiling from the last `mptcplab kernel selftest`, else the default."""
    try:
        data = json.loads(SELFTEST_FILE.read_text())
        return float(data["ceiling_mbps"]), str(SELFTEST_FILE)
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_CEILING_MBPS, "default (no selftest stored)"


def make_plan(scenario: Scenario) -> Plan:
    """Check what the kernel can run and lay it out. Raises ScenarioError."""
    raw = scenario.to_dict()
    data = scenario.validate().to_dict()
    run = data.get("run", {})
    tcp = data.get("tcp", {})
    raw_tcp = raw.get("tcp", {}) or {}
    notes: list[str] = []

    # A generated data centre is hundreds of hosts and links: one namespace pair and a
    # forwarder hop per link is not how the kernel backend scales (docs/datacenter.md).
    if raw.get("topology"):
        raise _refuse("topology", "generated topologies need a host per node; the kernel backend runs hand-listed "
                                  "[[links]] and [[paths]] between two hosts")
    if raw.get("traffic"):
        raise _refuse("traffic", "generated traffic needs a [topology]")
    if raw_tcp.get("recovery") == "newreno":
        raise _refuse("tcp.recovery", "Linux always recovers with PRR (RFC 6937), not NewReno")
    if raw_tcp.get("pacing") is True:
        raise _refuse("tcp.pacing", "pacing for every subflow needs the fq qdisc, which this kernel lacks")
    # The kernel is upstream Linux, so a buffer the scenario does not qualify is read as
    # the upstream profile reads it (payload bytes, SO_RCVBUF calibrated), whatever the
    # simulator's default profile: only an explicit "linux" maps to sk_rcvbuf = B.
    accounting = raw_tcp.get("receive_buffer_accounting") or "payload"
    if run.get("join_jitter") and seconds(run["join_jitter"]) > 0:
        raise _refuse("run.join_jitter", "the in-kernel path manager joins as soon as the connection is "
                                         "established, so a join delay cannot be applied")
    if run.get("start_jitter") and seconds(run["start_jitter"]) > 0:
        notes.append("run.start_jitter: start offsets drawn with Python's random from the seed")

    links: list[LinkPlan] = []
    by_name: dict[str, int] = {}
    for i, ln in enumerate(data.get("links", [])):
        fld = f"links[{i}]"
        fwd = Dir(bits_per_s(ln["rate"]), seconds(ln["delay"]), queue_limit(ln.get("queue") or "1000 pkt"),
                  _bernoulli_loss(ln, fld))
        rv = ln.get("reverse") or {}
        rloss = _bernoulli_loss(rv, f"{fld}.reverse")
        rev = Dir(
            bits_per_s(rv["rate"]) if rv.get("rate") else fwd.rate_bps,
            seconds(rv["delay"]) if rv.get("delay") else fwd.delay_s,
            queue_limit(rv["queue"]) if rv.get("queue") else fwd.queue,
            rloss,
        )
        for jf, d in ((f"{fld}.jitter", ln), (f"{fld}.reverse.jitter", rv)):
            if d.get("jitter") and seconds(d["jitter"]) > 0:
                raise _refuse(jf, "the emulator adds no per-packet jitter of its own choosing (its own delay "
                                  "error is 0.05-0.07 ms on average, docs/kernel.md); remove the field")
        links.append(LinkPlan(i, ln["name"], fwd, rev, list(ln.get("schedule") or [])))
        by_name[ln["name"]] = i
        for j, ch in enumerate(ln.get("schedule") or []):
            if ch.get("until") and (ch.get("state") is not None):
                raise _refuse(f"{fld}.schedule[{j}]", "a link state cannot ramp")
    if len(links) > 60:
        raise _refuse("links", f"the emulator takes at most 60 links, got {len(links)}")

    paths: list[PathPlan] = []
    path_idx: dict[str, int] = {}
    for i, p in enumerate(data.get("paths", [])):
        fwd_links = [by_name[n] for n in p["links"]]
        rev_links = [by_name[n] for n in p["reverse_links"]] if p.get("reverse_links") else list(reversed(fwd_links))
        if len(set(fwd_links)) != len(fwd_links) or len(set(rev_links)) != len(rev_links) or len(fwd_links) > 16:
            raise _refuse(f"paths[{i}].links", "a path must not pass a link twice, and has at most 16 links")
        paths.append(PathPlan(i, p["name"], fwd_links, rev_links, bool(p.get("backup")), f"10.100.{i}.1"))
        path_idx[p["name"]] = i
    if len(paths) > 30:
        raise _refuse("paths", f"the emulator takes at most 30 paths, got {len(paths)}")

    rng = random.Random(int(run.get("seed", 1)))
    jitter = seconds(run["start_jitter"]) if run.get("start_jitter") else 0.0
    flows: list[FlowPlan] = []
    endpoints: set[int] = set()
    conns = data.get("connections", [])
    pm_seen: set[str] = set()
    path_sets: set[tuple[int, ...]] = set()
    pm_seen_opts: set[str] = set()
    standby: set[int] = set()
    withhold: set[int] = set()
    withhold_at: float | None = None
    subflows_limit = MAX_SUBFLOWS
    raw_conns = raw.get("connections", []) or []
    for i, c in enumerate(conns):
        fld = f"connections[{i}]"
        cc = c.get("cc") or "cubic"
        if cc not in KERNEL_CC:
            raise _refuse(f"{fld}.cc", f"the kernel has {', '.join(KERNEL_CC)} only, not {cc}")
        if c.get("cc_options"):
            raise _refuse(f"{fld}.cc_options", "cc_options are module-wide parameters in the kernel")
        sched = c.get("scheduler") or "minrtt"
        if sched not in KERNEL_SCHEDULERS:
            raise _refuse(f"{fld}.scheduler", f"the kernel has its default scheduler only, not {sched}")
        if c.get("scheduler_options"):
            raise _refuse(f"{fld}.scheduler_options", "the kernel's default scheduler has no options")
        pm = c.get("path_manager") or "fullmesh"
        if pm not in KERNEL_PM:
            raise _refuse(f"{fld}.path_manager", f"the in-kernel path manager does {', '.join(KERNEL_PM)} only, not {pm}")
        pm_opts = dict(c.get("path_manager_options") or {})
        bad_opt = sorted(set(pm_opts) - set(KERNEL_PM_OPTIONS[pm]))
        if bad_opt:
            raise _refuse(f"{fld}.path_manager_options.{bad_opt[0]}",
                          f"the kernel backend does not map this option of {pm}")
        pm_seen_opts.add(json.dumps(pm_opts, sort_keys=True))
        if c.get("read_rate"):
            raise _refuse(f"{fld}.read_rate", "the kernel backend's receiver reads at once")
        stream = _stream_plan(c.get("app") or {"kind": "bulk"}, f"{fld}.app")
        pidx = [path_idx[n] for n in c["paths"]]
        if len(pidx) > MAX_SUBFLOWS + 1:
            raise _refuse(f"{fld}.paths", f"the in-kernel path manager opens at most {MAX_SUBFLOWS} extra subflows")
        init = path_idx[c.get("initial_path") or c["paths"][0]]
        pm_seen.add(pm)
        path_sets.add(tuple(sorted(pidx)))
        if pm != "default":
            endpoints.update(pidx)
        if pm == "pcdc":
            # SP* (seed 000 Eq. 6): the paths outside it stand by as backup subflows.
            sp = pm_opts.get("sp")
            keep = {path_idx[n] for n in sp} if sp is not None else set(pidx)
            standby.update(p for p in pidx if p not in keep)
            if pm_opts.get("withhold"):
                withhold.update(path_idx[n] for n in pm_opts["withhold"])
                withhold_at = int(pm_opts.get("withhold_at_ms") or 0) / 1000.0
        if pm == "in_kernel":
            subflows_limit = int(pm_opts.get("subflows_limit", 2))
        raw_c = raw_conns[i] if i < len(raw_conns) else {}
        rcv = size_bytes(c["receive_buffer"]) if raw_c.get("receive_buffer") else None
        snd = size_bytes(c["send_buffer"]) if raw_c.get("send_buffer") else None
        app = c.get("app") or {}
        size = size_bytes(app["size"]) if app.get("size") else None
        start = seconds(c.get("start") or "0 s") + (rng.uniform(0, jitter) if jitter else 0.0)
        flows.append(FlowPlan(c["name"], "mptcp", cc, pidx, init, start, size, 5001 + len(flows), snd, rcv,
                              "default", pm, stream=stream))
        if c.get("opportunistic_retransmission") or c.get("penalisation"):
            if "upstream" not in " ".join(notes):
                notes.append("opportunistic retransmission and penalisation are not in upstream MPTCP")
    if len(pm_seen) > 1 or len(path_sets) > 1 or len(pm_seen_opts) > 1:
        raise _refuse("connections", "all MPTCP connections must use the same paths, path manager and "
                      "path manager options (one endpoint set per client namespace)")

    for i, f in enumerate(data.get("flows", [])):
        fld = f"flows[{i}]"
        cc = f.get("cc") or "cubic"
        if cc not in KERNEL_CC:
            raise _refuse(f"{fld}.cc", f"the kernel has {', '.join(KERNEL_CC)} only, not {cc}")
        if f.get("cc_options"):
            raise _refuse(f"{fld}.cc_options", "cc_options are module-wide parameters in the kernel")
        if f.get("read_rate"):
            raise _refuse(f"{fld}.read_rate", "the kernel backend's receiver reads at once")
        app = f.get("app") or {"kind": "bulk"}
        stream = _stream_plan(app, f"{fld}.app")
        p = path_idx[f["path"]]
        start = seconds(f.get("start") or "0 s") + (rng.uniform(0, jitter) if jitter else 0.0)
        rcv = size_bytes(f["receive_buffer"]) if f.get("receive_buffer") else None
        snd = size_bytes(f["send_buffer"]) if f.get("send_buffer") else None
        size = size_bytes(app["size"]) if app.get("size") else None
        flows.append(FlowPlan(f["name"], "tcp", cc, [p], p, start, size, 5001 + len(flows), snd, rcv,
                              stream=stream))

    if not flows:
        raise _refuse("connections", "nothing to run: no connection and no flow")
    for fl in flows:
        if fl.stream is not None and fl.stream.duration_s is not None:
            n = fl.stream.frames_in(fl.stream.duration_s)
            fl.size_bytes = fl.stream.frame_end(n - 1) if n else 0  # a bounded stream completes
        if fl.receive_buffer is not None:
            fl.so_rcvbuf = so_rcvbuf_for(fl.receive_buffer, accounting)
    used = {p for fl in flows for p in fl.paths}
    mss = size_bytes(tcp.get("mss") or "1448 B")
    if mss + 52 > 1500 + 512:
        raise _refuse("tcp.mss", f"the emulator forwards frames up to 2048 B; mss {mss} is too large")

    plan = Plan(
        name=data.get("name") or scenario.name,
        duration_s=seconds(run.get("duration") or "30 s"),
        sample_s=seconds(run.get("sample_interval") or "100 ms"),
        seed=int(run.get("seed", 1)),
        mss=mss,
        initial_cwnd=int(tcp.get("initial_cwnd") or 10),
        min_rto_s=seconds(tcp.get("min_rto") or "200 ms"),
        delayed_ack=bool(tcp.get("delayed_ack", True)),
        links=links,
        paths=[p for p in paths],
        flows=flows,
        endpoints=sorted(endpoints),
        # PCDC's endpoints have no fullmesh flag: with the server's one address it opens
        # the same subflows, and `endpoint change` would then have to restate it.
        fullmesh=("fullmesh" in pm_seen) or bool(
            "in_kernel" in pm_seen and any(json.loads(o).get("fullmesh") for o in pm_seen_opts)),
        notes=notes,
        standby=sorted(standby),
        withhold=sorted(withhold),
        withhold_at_s=withhold_at,
        subflows_limit=subflows_limit,
        receive_buffer_accounting=accounting,
    )
    if not used:
        raise _refuse("paths", "no flow uses a path")
    ceiling, source = stored_ceiling_mbps()
    for ln in links:
        for d, dr in (("", ln.fwd), (".reverse", ln.rev)):
            if dr.rate_bps / 1e6 > ceiling:
                raise _refuse(f"links[{ln.index}]{d}.rate",
                              f"{dr.rate_bps / 1e6:g} Mbit/s is above the emulator's measured ceiling "
                              f"{ceiling:.0f} Mbit/s ({source})")
    load = plan.forwarder_load_mbps()
    if load > ceiling:
        raise _refuse("links", f"the paths need the forwarder to move {load:.0f} Mbit/s, above its measured "
                      f"ceiling {ceiling:.0f} Mbit/s ({source})")
    if not math.isfinite(plan.duration_s) or plan.duration_s <= 0:
        raise _refuse("run.duration", "must be positive")
    if plan.sample_s < MIN_SAMPLE_S:
        raise _refuse("run.sample_interval", f"the kernel backend samples every {MIN_SAMPLE_S * 1000:g} ms at "
                      "the finest (getsockopt and tc from Python)")
    return plan
