"""Parse the kernel backend's per-path captures (classic pcap, ns timestamps, Ethernet,
128-byte snaplen) into TCP/MPTCP records. Written for this measurement only."""
import struct
from pathlib import Path

def _u(b):  # big-endian unsigned of any length
    return int.from_bytes(b, "big")

def read(path):
    data = Path(path).read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic == 0xa1b23c4d, hex(magic)
    off = 24
    recs = []
    while off + 16 <= len(data):
        sec, nsec, cap, ln = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        fr = data[off:off + cap]
        off += cap
        t = sec + nsec * 1e-9
        if len(fr) < 34 or fr[12:14] != b"\x08\x00":
            continue
        ip = fr[14:]
        ihl = (ip[0] & 15) * 4
        tot = _u(ip[2:4])
        if ip[9] != 6:
            continue
        src, dst = ip[12:16], ip[16:20]
        tcp = ip[ihl:]
        sport, dport, seq, ack = struct.unpack(">HHII", tcp[:12])
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        win = _u(tcp[14:16])
        plen = tot - ihl - doff
        r = {"t": t, "src": ".".join(map(str, src)), "dst": ".".join(map(str, dst)), "sport": sport,
             "dport": dport, "seq": seq, "ack": ack, "flags": flags, "win": win, "len": plen}
        opts = tcp[20:doff]
        i = 0
        while i < len(opts):
            k = opts[i]
            if k == 0:
                break
            if k == 1:
                i += 1
                continue
            if i + 1 >= len(opts):
                break
            L = opts[i + 1]
            if L < 2:
                break
            o = opts[i:i + L]
            if k == 3 and L == 3:
                r["wscale"] = o[2]
            elif k == 30 and L >= 4:
                sub = o[2] >> 4
                r["mp_sub"] = sub
                if sub == 2:  # DSS, RFC 8684 3.3
                    fl = o[3]
                    j = 4
                    if fl & 1:
                        n = 8 if fl & 2 else 4
                        r["data_ack"] = _u(o[j:j + n]); r["data_ack_len"] = n; j += n
                    if fl & 4:
                        n = 8 if fl & 8 else 4
                        r["dsn"] = _u(o[j:j + n]); r["dsn_len"] = n; j += n
                        r["ssn"] = _u(o[j:j + 4]); j += 4
                        r["dll"] = _u(o[j:j + 2]); j += 2
                    if fl & 0x10:
                        r["data_fin"] = 1
            i += L
        recs.append(r)
    return recs


def dsn_paths(d):
    """({DSN of each data mapping: path}, time of the first SYN) from a run directory's
    `pcap/` captures (the path is the file's stem, "path1" ...)."""
    out, t0 = {}, None
    for f in sorted((Path(d) / "pcap").glob("*.pcap")):
        for r in read(f):
            if r["flags"] & 2 and not r["flags"] & 16:
                t0 = r["t"] if t0 is None else min(t0, r["t"])
            if r.get("dsn") is not None and r.get("dll"):
                out[r["dsn"]] = f.stem
    return out, t0
