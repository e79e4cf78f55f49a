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
from slowpath import WRAP, ahead, rtt_by_flight, subflow  # noqa: E402


def bursts(d, path):
    recs, port, _ = subflow(d, path)
    segs = [(r["t"], (r["seq"] + r["len"]) % WRAP) for r in recs
            if not r["flags"] & 2 and r["sport"] == port and r["len"] > 0]
    acks = [(r["t"], r["ack"]) for r in recs if not r["flags"] & 2 and r["sport"] != port]
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
        t0, end0 = segs[i]
        t, a = next(((t, a) for t, a in acks if t > t0 and not ahead(end0, a)), (None, None))
        if t is not None:
            covered = sum(1 for k in range(i, j + 1) if not ahead(segs[k][1], a))
            rows.append((covered, round((t - t0) * 1000, 1)))
    print(f"{d} {path}: {len(found)} bursts; first ACK (segments covered, ms after the first left): {rows}")


def lowest(d, path):
    samples = sorted((round(rtt * 1000, 1), ln, round(ts, 2)) for ts, rtt, _, ln in rtt_by_flight(d, path))
    print(f"{d} {path}: {len(samples)} samples; lowest (RTT ms, length, sent at s): {samples[:6]}")


if __name__ == "__main__":
    {"bursts": bursts, "lowest": lowest}[sys.argv[1]](sys.argv[2], sys.argv[3])
