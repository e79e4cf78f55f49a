"""Reading the client's data packets from a classic pcap (shared by bursts.py, bins.py)."""
from pathlib import Path

def data_packets(path):
    """(time, source address) of every TCP segment with payload in a classic pcap, with
    Ethernet (the kernel backend's captures) or raw IPv4 (the simulator's) framing."""
    b = Path(path).read_bytes()
    little = b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
    nano = b[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    order = "little" if little else "big"
    link = int.from_bytes(b[20:24], order)
    l2 = 14 if link == 1 else 0
    off, out = 24, []
    while off + 16 <= len(b):
        sec, frac, cap = (int.from_bytes(b[off + k:off + k + 4], order) for k in (0, 4, 8))
        fr = b[off + 16:off + 16 + cap]
        off += 16 + cap
        ip = fr[l2:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = int.from_bytes(ip[2:4], "big")
        doff = (ip[ihl + 12] >> 4) * 4
        if tot - ihl - doff > 0:
            out.append((sec + frac * (1e-9 if nano else 1e-6), ".".join(map(str, ip[12:16]))))
    return out


