"""What moves the MPTCP receive window's right edge on the kernel, from a `trace5.bt` run
(run.py with TRACE=trace5.bt). Written for docs/kernel.md, "What moves the kernel's
window edge" (2026-11-27, issue 12).

  edges.py BT_TXT            each edge advance (msk->rcv_wnd_sent grew at a server ACK),
                             by subflow and by what bounded the window it announced
  edges.py BT_TXT ratios     the scaling ratio the memory-bound windows imply, over time
  edges.py BT_TXT shrink     ACKs whose subflow window fell below tcp_receive_window
  edges.py releases BT_TXT... the window releases (DATA_ACK jumps > 50 kB) of one or more
                             runs, by the subflow whose ACK carried them, with how full the
                             MPTCP socket's memory was at the ACK before (rmem - sk_rcvbuf)

At each ACK the kernel runs tcp_select_window (the window is min(the MPTCP socket's free
space x its scaling ratio, the subflow's rcv_ssthresh) aligned to the scale, never less
than what the subflow offered last, less what it received since) and then
mptcp_set_rwin (the MPTCP edge = DATA_ACK + that window if it is further right, else the
header carries the edge already announced). An advance is classed by the bound that
equals the window it announced:
  ssthresh      the subflow's rcv_ssthresh (__tcp_select_window's cap)
  never-shrink  the subflow's last offer less what it received since (tcp_select_window)
  memory        neither: the free memory times the scaling ratio (mptcp_space)
"""
import sys
from collections import Counter


def records(path):
    """K records of trace5.bt in time order (bpftrace writes per CPU): (t_ns, subflow,
    window, rmem, data_ack, edge, sk_rcvbuf, rcv_wnd, rcv_wup, rcv_nxt, rcv_ssthresh)."""
    out = []
    for line in open(path):
        if not line.startswith("K "):
            continue
        f = line.split()
        raw = int(f[4])
        win = ((raw & 0xFF) << 8 | raw >> 8) << 2  # big-endian field; the server's scale is 2 here
        out.append((int(f[1]), f[2], win, int(f[5]), int(f[9]), int(f[10]), int(f[11]),
                    int(f[12]), int(f[13]), int(f[14]), int(f[15])))
    return sorted(out)


def align4(x):
    return (x + 3) // 4 * 4


def advances(recs):
    """Each edge advance: (t_s, subflow, class, moved_by, window, free_mem)."""
    prev, edge, out = {}, None, []
    t0 = recs[0][0]
    for r in recs:
        t, sub, _, rmem, ack, e, rcvbuf, rcv_wnd, _, rcv_nxt, ssth = r
        p = prev.get(sub)
        if edge is not None and e > edge:
            cur = None
            if p is not None:
                cur = (p[8] + p[7] - rcv_nxt) % (1 << 32)
                cur = None if cur > 1 << 31 else cur
            if abs(rcv_wnd - align4(ssth)) <= 4:
                kind = "ssthresh"
            elif cur is not None and abs(rcv_wnd - align4(cur)) <= 4:
                kind = "never-shrink"
            else:
                kind = "memory"
            out.append(((t - t0) / 1e9, sub, kind, e - edge, rcv_wnd, rcvbuf - rmem))
        edge = e if edge is None else max(edge, e)
        prev[sub] = r
    return out


def below_receive_window(recs):
    """ACKs whose subflow window (tp->rcv_wnd after the ACK) is below tcp_receive_window
    as the subflow's previous ACK left it (rcv_wup + rcv_wnd - rcv_nxt now): what
    tcp_select_window's never-shrink should prevent."""
    prev, n, out = {}, 0, []
    for r in recs:
        sub, rcv_wnd, rcv_nxt = r[1], r[7], r[9]
        p = prev.get(sub)
        if p is not None:
            n += 1
            cur = (p[8] + p[7] - rcv_nxt) % (1 << 32)
            if cur < 1 << 31 and rcv_wnd + 4 < cur:
                out.append(cur - rcv_wnd)
        prev[sub] = r
    return n, sorted(out)


def releases(paths):
    """Per subflow: the memory margin (rmem - sk_rcvbuf, B) at the ACK before each
    DATA_ACK jump of more than 50 kB."""
    out = {}
    for path in paths:
        last_ack = last_margin = None
        for r in records(path):
            sub, rmem, ack, rcvbuf = r[1], r[3], r[4], r[6]
            if last_ack is not None and ack - last_ack > 50_000:
                out.setdefault(sub, []).append(last_margin)
            last_ack = ack if last_ack is None else max(last_ack, ack)
            last_margin = rmem - rcvbuf
    return out


def main(argv):
    if argv[1] == "releases":
        out = releases(argv[2:])
        print(sum(len(v) for v in out.values()), f"releases in {len(argv) - 2} runs; margin = rmem - sk_rcvbuf at the ACK before")
        for sub, v in sorted(out.items()):
            v.sort()
            bins = Counter(max(x // 20_000 * 20, -240) for x in v)
            print(f"  {sub} {len(v):4} releases, within 5 kB of full {sum(1 for x in v if x > -5_000)}, "
                  f"median {v[len(v) // 2] // 1000} kB, 20-kB bins {sorted(bins.items())}")
        return
    recs = records(argv[1])
    if len(argv) > 2 and argv[2] == "shrink":
        n, out = below_receive_window(recs)
        print(f"{n} ACKs after an earlier one on their subflow; {len(out)} offer less than tcp_receive_window"
              + (f", by {out[len(out) // 2]} B at the median, {out[-1]} at most" if out else ""))
        return
    adv = advances(recs)
    if len(argv) > 2 and argv[2] == "ratios":
        for t, sub, kind, _, wnd, free in adv:
            if kind == "memory" and free > 0:
                print(f"{t:8.3f} {sub} {wnd / free:.3f} ({wnd * 256 // free}/256)")
        return
    print(f"{len(recs)} server ACKs, {len(adv)} edge advances")
    by = Counter((sub, kind) for _, sub, kind, *_ in adv)
    for (sub, kind), n in sorted(by.items()):
        moved = [m for _, s, k, m, *_ in adv if s == sub and k == kind]
        print(f"  {sub} {kind:12} {n:5}  moved the edge by {min(moved)}-{max(moved)} B, {sum(moved)} in all")


if __name__ == "__main__":
    main(sys.argv)
