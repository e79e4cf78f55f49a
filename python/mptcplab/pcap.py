"""Packet captures: where they go, and the tshark recipe that reads them (docs/pcap.md).

Both backends write one classic pcap file per path, `<path>.pcap`, captured at the
client's end of the path. `summarize(DIR)` merges a run's files (mergecap), lets tshark
group the subflows into their MPTCP connections (`mptcp.stream`) and returns one row
per subflow; `mptcplab pcap-summary DIR` (or `python -m mptcplab.pcap DIR`) prints them.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ScenarioError

__all__ = ["capture_name", "prepare_captures", "prepare_sim_captures", "summarize", "format_summary", "SubflowRow", "TsharkMissing"]


def capture_name(path_name: str) -> str:
    """The capture file name of a path: its name with characters outside
    [A-Za-z0-9_.~-] replaced by `_`, then `.pcap`."""
    return re.sub(r"[^A-Za-z0-9_.~-]", "_", path_name) + ".pcap"


def prepare_captures(directory: str | os.PathLike[str], path_names: Sequence[str]) -> dict[str, str]:
    """Create `directory` if needed and one empty, writable capture file per path in it:
    {path name: file}. A target that is a file, or a directory that cannot be created or
    written, raises ScenarioError("--pcap") before anything runs."""
    if not isinstance(directory, (str, os.PathLike)):
        raise ScenarioError("--pcap", f"expected a directory path, got {type(directory).__name__}")
    d = Path(directory).resolve()
    if d.exists() and not d.is_dir():
        raise ScenarioError("--pcap", f"'{d}' is not a directory (captures go into a directory, one file per path)")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ScenarioError("--pcap", f"cannot create '{d}': {err.strerror}") from None
    files: dict[str, str] = {}
    for name in path_names:
        f = d / capture_name(name)
        try:
            # Truncate now: a stale capture of an earlier run never passes for this one's.
            with open(f, "wb"):
                pass
        except OSError as err:
            raise ScenarioError("--pcap", f"cannot write '{f}': {err.strerror}") from None
        if str(f) in files.values():
            raise ScenarioError("--pcap", f"two paths would share the capture '{f}': rename one of them")
        files[name] = str(f)
    return files


def prepare_sim_captures(directory: str | os.PathLike[str], scenario_json: str) -> dict[str, str]:
    """`prepare_captures` for a simulator run of the core scenario `scenario_json`: one
    file per path of the normalised scenario, in the order of the core's plan (the
    order `_core.simulate(pcap_files=...)` expects)."""
    import json

    from . import _core
    from .errors import core_errors

    with core_errors():
        paths = json.loads(_core.validate(scenario_json)).get("paths") or []
    return prepare_captures(directory, [p["name"] for p in paths])


# -- the tshark recipe ----------------------------------------------------------------------
class TsharkMissing(RuntimeError):
    """tshark or mergecap is not installed (Debian: `apt-get install tshark`; `./dev
    install` does it)."""


# Per packet; a repeated field's values come joined by "," (`-E occurrence=a`); the
# recipe uses the first, except for the expert severity (the highest counts).
FIELDS = (
    "frame.interface_id", "frame.time_relative", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport",
    "tcp.stream", "mptcp.stream", "tcp.flags.syn", "tcp.flags.ack", "tcp.seq", "tcp.len",
    "mptcp.dss.dsn", "tcp.options.mptcp.rawdataseqno", "tcp.options.mptcp.subflowseqno",
    "mptcp.ack", "tcp.options.mptcp.rawdataack", "tcp.options.mptcp.subtype", "tcp.options.sack_le",
    "tcp.analysis.retransmission", "tcp.analysis.fast_retransmission", "tcp.analysis.spurious_retransmission",
    "tcp.analysis.out_of_order",
    "_ws.malformed", "_ws.expert.severity",
)
PREFS = (
    "tcp.analyze_sequence_numbers:TRUE", "tcp.relative_sequence_numbers:TRUE",
    "mptcp.analyze_mptcp:TRUE", "mptcp.relative_sequence_numbers:TRUE",
)
# Wireshark's expert severity for "error" (epan/proto.h PI_ERROR = 0x00800000).
PI_ERROR = 0x00800000

COLUMNS = ("flow", "subflow", "path", "client", "data_pkts", "payload_bytes", "retrans_bytes",
           "dsn_sent", "data_acked", "dsn_behind", "ooo", "sack_acks")


@dataclass
class SubflowRow:
    """One subflow of the capture. `flow`: tshark's mptcp.stream ("-": plain TCP);
    `subflow`: tcp.stream; `path`: the capture file's path; `client`: address:port.
    Client-to-server: `data_pkts`, `payload_bytes` (every transmission, retransmissions
    included), `retrans_bytes` (payload of segments tshark marks as retransmissions).
    Data-sequence progress, relative to the IDSN: `dsn_sent`, the highest DSN + length
    sent on the subflow; `data_acked`, the highest DATA_ACK the server sent on it.
    Out of order: `dsn_behind`, data segments that left below the connection's highest
    DSN already sent on any subflow (the receiver gets them behind later data: MPTCP-level
    reordering, reinjections); `ooo`, segments tshark's subflow analysis marks out of
    order; `sack_acks`, the server's ACKs with SACK blocks (it got data out of order
    on the subflow)."""
    flow: str
    subflow: int
    path: str
    client: str
    data_pkts: int = 0
    payload_bytes: int = 0
    retrans_bytes: int = 0
    dsn_sent: int = 0
    data_acked: int = 0
    dsn_behind: int = 0
    ooo: int = 0
    sack_acks: int = 0
    malformed: int = 0
    expert_errors: int = 0
    mptcp_data_pkts: int = 0


def _tools() -> tuple[str, str]:
    tshark, mergecap = shutil.which("tshark"), shutil.which("mergecap")
    if not tshark or not mergecap:
        raise TsharkMissing("tshark and mergecap are needed (Debian: `apt-get install tshark`; `./dev install` installs it)")
    return tshark, mergecap


def capture_files(source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The capture files of `source`: a directory (its `*.pcap`, sorted by name), a file,
    or several of either."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    files: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(p.glob("*.pcap"))
            if not found:
                raise ScenarioError("<pcap>", f"no *.pcap files in '{p}'")
            files += found
        elif p.is_file():
            files.append(p)
        else:
            raise ScenarioError("<pcap>", f"'{p}' is neither a directory of captures nor a capture file")
    return files


def tshark_rows(source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[list[str]]]:
    """Merge the captures into one (one interface per file, so `frame.interface_id`
    names the file) and dissect it: the files and one list of FIELDS per packet."""
    tshark, mergecap = _tools()
    files = capture_files(source)
    with tempfile.TemporaryDirectory(prefix="mptcplab-pcap-") as tmp:
        merged = Path(tmp) / "merged.pcapng"
        # Merged in time order (mergecap(1) without -a); -I none keeps every input's
        # interface description apart.
        _run([mergecap, "-I", "none", "-F", "pcapng", "-w", str(merged), *map(str, files)], files)
        cmd = [tshark, "-n", "-r", str(merged), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
               "-E", "aggregator=,"]
        for pref in PREFS:
            cmd += ["-o", pref]
        for f in FIELDS:
            cmd += ["-e", f]
        out = _run(cmd, files)
    return files, [line.split("\t") for line in out.splitlines() if line]


def _run(cmd: list[str], files: Sequence[Path]) -> str:
    """Run mergecap or tshark; a capture they cannot read is bad input naming the files."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        names = ", ".join(str(f) for f in files)
        raise ScenarioError("<pcap>", f"{Path(cmd[0]).name} cannot read {names}: {why}")
    return proc.stdout


def summarize(source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[SubflowRow]:
    """The recipe: one row per TCP subflow that carried data or MPTCP options, ordered by
    MPTCP connection (plain TCP last), then tshark's stream index (first seen first). See
    `SubflowRow` for the columns."""
    files, packets = tshark_rows(source)
    ix = {name: k for k, name in enumerate(FIELDS)}
    rows: dict[int, SubflowRow] = {}
    client_of: dict[int, tuple[str, str]] = {}
    front: dict[str, int] = {}  # per MPTCP connection: highest DSN + length sent so far
    for r in packets:
        def get(name: str) -> str:
            return r[ix[name]].split(",", 1)[0] if ix[name] < len(r) else ""

        if not get("tcp.stream"):
            continue
        stream = int(get("tcp.stream"))
        src = (get("ip.src"), get("tcp.srcport"))
        dst = (get("ip.dst"), get("tcp.dstport"))
        if stream not in client_of:
            # The SYN's sender is the client; without a SYN, the first sender of data.
            is_synack = get("tcp.flags.syn") == "1" and get("tcp.flags.ack") == "1"
            client_of[stream] = dst if is_synack else src
        client = client_of[stream]
        iface = int(get("frame.interface_id") or 0)
        row = rows.get(stream)
        if row is None:
            path = files[iface].stem if iface < len(files) else str(iface)
            row = rows[stream] = SubflowRow("-", stream, path, f"{client[0]}:{client[1]}")
        flow = get("mptcp.stream")
        if flow and row.flow == "-":
            row.flow = flow
        if get("_ws.malformed"):
            row.malformed += 1
        sev = r[ix["_ws.expert.severity"]] if ix["_ws.expert.severity"] < len(r) else ""
        if sev and max(int(v, 0) for v in sev.split(",")) >= PI_ERROR:
            row.expert_errors += 1
        length = int(get("tcp.len") or 0)
        if src == client:
            if length <= 0:
                continue
            row.data_pkts += 1
            row.payload_bytes += length
            ooo = bool(get("tcp.analysis.out_of_order"))
            row.ooo += ooo
            # At the sender's end a segment below the highest sequence sent is a resend;
            # tshark calls those it sees soon after the original "out of order".
            if ooo or any(get(f"tcp.analysis.{k}") for k in ("retransmission", "fast_retransmission", "spurious_retransmission")):
                row.retrans_bytes += length
            if get("tcp.options.mptcp.subtype"):
                row.mptcp_data_pkts += 1
            dsn, ssn = get("mptcp.dss.dsn"), get("tcp.options.mptcp.subflowseqno")
            # tshark makes the DSN relative only when it saw the connection's keys (its
            # MP_CAPABLE handshake, in another file for a join subflow); else it is raw.
            if dsn and ssn and dsn != get("tcp.options.mptcp.rawdataseqno"):
                # A mapping may cover more than this segment (Linux maps a whole skb and
                # each segment cut from it repeats the option): the segment's first byte
                # is at the mapping's DSN plus its offset in the mapping, both sequence
                # numbers relative to the ISN (RFC 8684 §3.3.1).
                end = int(dsn) + (int(get("tcp.seq")) - int(ssn)) + length
                row.dsn_sent = max(row.dsn_sent, end)
                if end <= front.get(row.flow, 0):
                    row.dsn_behind += 1
                front[row.flow] = max(front.get(row.flow, 0), end)
        else:
            if get("tcp.options.sack_le"):
                row.sack_acks += 1
            ack = get("mptcp.ack")
            if ack and ack != get("tcp.options.mptcp.rawdataack"):
                row.data_acked = max(row.data_acked, int(ack))
    keep = [r for r in rows.values() if r.payload_bytes > 0 or r.flow != "-"]
    return sorted(keep, key=lambda r: (r.flow == "-", int(r.flow) if r.flow != "-" else 0, r.subflow))


def format_summary(rows: Sequence[SubflowRow]) -> str:
    """The rows as a plain-text table (the COLUMNS)."""
    from .tables import render_table

    cells = [[str(asdict(r)[c]) for c in COLUMNS] for r in rows]
    return render_table(list(COLUMNS), cells, right=set(range(4, len(COLUMNS))))
