"""Load one instrumented run directory (run1.py) into plain Python structures."""
import json, sys
from pathlib import Path
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import pcapmp

RF = "t daddr rmem rcvbuf qlen rcv_nxt copied rcv_wnd rcv_wup seq len truesize mrmem mrcvbuf owned mqlen ack_seq wnd_sent cbf".split()
AF = "t saddr snd_una snd_nxt snd_wnd cwnd pout wq msnd_una msnd_nxt wnd_end write_seq".split()
UF = "t saddr data_ack old_snd_una new_snd_una new_wnd_end msk_wnd_end".split()
DF = "t daddr rmem rcvbuf qlen rcv_nxt seq len truesize mrmem mrcvbuf owned mqlen ack_seq wnd_sent loc".split()
LF = "t ret mrmem mqlen ack_seq wnd_sent".split()

def ip_path(hexaddr):
    v = int(hexaddr, 16)
    b = v.to_bytes(4, "little")
    return b[2] if b[0] == 10 and b[1] == 100 else None  # 10.100.k.1 -> k

def load(d):
    d = Path(d)
    info = json.loads((d / "info.json").read_text())
    off = info["real0"] - info["mono0"]
    ev = {"R": [], "A": [], "U": [], "D": [], "L": []}
    for line in (d / "bt.txt").read_text(errors="replace").splitlines():
        p = line.split()
        if not p or p[0] not in ev:
            continue
        k = p[0]
        f = {"R": RF, "A": AF, "U": UF, "D": DF, "L": LF}[k]
        if len(p) - 1 != len(f):
            continue
        r = {}
        for name, v in zip(f, p[1:]):
            if name in ("daddr", "saddr"):
                r["path"] = ip_path(v)
            elif name == "loc":
                r[name] = v
            else:
                r[name] = int(v)
        r["t"] = r["t"] * 1e-9 + off
        ev[k].append(r)
    pc = {}
    for f in sorted((d / "pcap").glob("*.pcap")):
        pc[f.stem] = pcapmp.read(f)
    return info, ev, pc

def load_ss(d):
    """Snapshots: list of (t, tcp=[dict], msk=[dict])."""
    import re
    snaps = []
    cur = None
    mode = None
    last = None
    for line in (Path(d) / "ss.txt").read_text(errors="replace").splitlines():
        if line.startswith("@T "):
            cur = {"t": float(line[3:]), "tcp": [], "msk": []}
            snaps.append(cur)
            mode = "tcp"
            continue
        if line.startswith("@M"):
            mode = "msk"
            continue
        if cur is None:
            continue
        if line and not line[0].isspace():
            p = line.split()
            last = {"state": p[0], "recvq": int(p[1]), "sendq": int(p[2]), "local": p[3], "peer": p[4]}
            cur[mode].append(last)
        elif last is not None:
            m = re.search(r"skmem:\(([^)]*)\)", line)
            if m:
                for kv in m.group(1).split(","):
                    k = re.match(r"([a-z]+)(\d+)", kv)
                    if k:
                        last["sk_" + k.group(1)] = int(k.group(2))
            for key in ("rcv_space", "rcv_ssthresh", "snd_wnd", "rcv_wnd", "bytes_received", "segs_in", "rcv_nxt",
                        "ack_seq", "rcv_wnd_sent"):
                m = re.search(r"\b" + key + r"[: ](\d+)", line)
                if m:
                    last[key] = int(m.group(1))
            last.setdefault("raw", line.strip()[:600])
    return snaps
