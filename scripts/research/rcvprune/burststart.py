"""How a path's send bursts start, from either backend's captures (`--pcap DIR`). Written
for docs/kernel.md, "The emulator lets the first two frames of a burst through together"
(2026-11-27, issue 12):

  burststart.py bursts DIR PATH   each burst of six or more segments after 100 ms idle: how
                                  many segments the first ACK covers, and when it reaches
                                  the client after the burst's first segment left
  burststart.py lowest DIR PATH   the path's six lowest RTT samples (first transmissions,
                                  the segment's length beside each): what sets delay_min

On a link of rate R the first ACK of a two-segment pair comes two transmission times after
the first segment left (plus the delays); on the emulator before revision 5 it came after one."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import slowpath  # noqa: E402

WRAP = 1 << 32


def after(a, b):
    return a != b and (a - b) % WRAP < WRAP // 2


def load(d, path):
    """(segments (t, end, len), ACKs (t, ack), t0) of one path's capture, the client's side."""
    recs = slowpath.records(Path(d) / f"{path}.pcap")
    cport = next(r for r in recs if r["flags"] & 2 and not r["flags"] & 16)["sport"]
    segs, acks = [], []
    for r in recs:
        if r["flags"] & 2:
            continue
        if r["sport"] == cport and r["len"] > 0:
            segs.append((r["t"], (r["seq"] + r["len"]) % WRAP, r["len"]))
        elif r["sport"] != cport:
            acks.append((r["t"], r["ack"]))
    return segs, acks, recs[0]["t"]


def bursts(d, path):
    segs, acks, _ = load(d, path)
    found, i = [], 0
    while i < len(segs):
        j = i
        while j + 1 < len(segs) and segs[j + 1][0] - segs[j][0] < 0.03:
            j += 1
        if j - i + 1 >= 6 and (i == 0 or segs[i][0] - segs[i - 1][0] > 0.1):
            found.append((i, j))
        i = j + 1
    rows = []
    for i, j in found:
        t0, end0, _ = segs[i]
        t, a = next(((t, a) for t, a in acks if t > t0 and not after(end0, a)), (None, None))
        if t is not None:
            covered = sum(1 for k in range(i, j + 1) if not after(segs[k][1], a))
            rows.append((covered, round((t - t0) * 1000, 1)))
    print(f"{d} {path}: {len(found)} bursts; first ACK (segments covered, ms after the first left): {rows}")


def lowest(d, path):
    segs, acks, t0 = load(d, path)
    sent, samples = {}, []
    for t, end, ln in segs:
        sent[end] = (t, ln) if end not in sent else None  # Karn: a resent end gives no sample
    for t, a in acks:
        if sent.get(a):
            ts, ln = sent[a]
            samples.append((round((t - ts) * 1000, 1), ln, round(ts - t0, 2)))
            sent[a] = None
    print(f"{d} {path}: {len(samples)} samples; lowest (RTT ms, length, sent at s): {sorted(samples)[:6]}")


if __name__ == "__main__":
    {"bursts": bursts, "lowest": lowest}[sys.argv[1]](sys.argv[2], sys.argv[3])
