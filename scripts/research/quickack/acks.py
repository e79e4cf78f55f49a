"""ACK spacing in kernel-backend or simulator captures (docs/research/upstream-quickack-2026-11-27.md). usage: acks.py DIR..."""
import sys
from pathlib import Path
def pkts(path):
    b = Path(path).read_bytes()
    little = b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"); nano = b[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    order = "little" if little else "big"; link = int.from_bytes(b[20:24], order); l2 = 14 if link == 1 else 0
    off, out = 24, []
    while off + 16 <= len(b):
        sec, frac, cap = (int.from_bytes(b[off + k:off + k + 4], order) for k in (0, 4, 8))
        fr = b[off + 16:off + 16 + cap]; off += 16 + cap
        ip = fr[l2:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6: continue
        ihl = (ip[0] & 15) * 4; tot = int.from_bytes(ip[2:4], "big"); doff = (ip[ihl + 12] >> 4) * 4
        src = ".".join(map(str, ip[12:16])); t = sec + frac * (1e-9 if nano else 1e-6)
        out.append((t, src, tot - ihl - doff))
    return out
for d in sys.argv[1:]:
    for f in sorted(Path(d).glob("*.pcap")):
        p = pkts(f)
        t0 = p[0][0]
        data = [x for x in p if x[2] > 0 and x[1].startswith("10.100.")]
        acks = [x for x in p if x[2] == 0 and x[1].startswith("10.200.")]
        early_d = [x for x in data if x[0]-t0 < 0.3]; early_a = [x for x in acks if x[0]-t0 < 0.3]
        gaps = sorted(b[0]-a[0] for a, b in zip(early_a, early_a[1:]))
        print(d, f.stem, "data", len(data), "acks", len(acks), "ratio %.2f" % (len(data)/max(len(acks),1)), "| first 0.3 s: data", len(early_d), "acks", len(early_a), "median ack gap ms %.2f" % (1e3*gaps[len(gaps)//2] if gaps else -1))
