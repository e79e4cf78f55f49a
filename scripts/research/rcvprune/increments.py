"""How the MPTCP window's right edge advances, seen at the client (either backend's
captures): per run, the advances under 1 424 B, from 1 424 B to 20 kB and larger, and which
path first carried the bytes of each small advance. docs/kernel.md, "What moves the
kernel's window edge", item 9. usage: increments.py PCAP_DIR...
"""
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import windows  # noqa: E402


def main(dirs):
    for d in dirs:
        ev = windows.load(d)
        sent = windows.first_sends(ev)
        emax, taken, n = None, Counter(), Counter()
        for t, k, _, _, edge in ev:
            if k != "A":
                continue
            if emax is not None and edge > emax:
                inc = edge - emax
                kind = "small" if inc < 1424 else ("mid" if inc < 20000 else "big")
                n[kind] += 1
                fs = sent.get(emax)
                if fs and 0 <= fs[0] - t < 0.5:
                    taken[(kind, fs[1])] += 1
            emax = edge if emax is None else max(emax, edge)
        print(d, "edge increments", dict(n), "| taken by:", {k: v for k, v in sorted(taken.items()) if k[0] == "small"})


if __name__ == "__main__":
    main(sys.argv[1:])
