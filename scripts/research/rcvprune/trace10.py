"""Reading a `trace10.bt` run (docs/kernel.md, "Who sends the receiver's ACKs"): the
reader that `acks.py`, `readerlag.py` and `timerack.py` share."""


def records(path):
    """The run's R (data arrival) and K (server ACK) records in time order, each as
    (kind, t_ns, daddr, fields, stack): `fields` the record's line split on whitespace
    (trace10.bt's header names them), `stack` the function names of a K record's kernel
    stack (empty for R)."""
    recs, cur = [], None
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] in ("R", "K"):
            cur = (f[0], int(f[1]), f[2], f, [])
            recs.append(cur)
        elif cur is not None and cur[0] == "K" and line.startswith("        "):
            cur[4].append(f[0].split("+")[0])
    recs.sort(key=lambda r: r[1])
    return recs


def sender(stack):
    """Who sent a K record's ACK, from its stack: the reader (`mptcp_recvmsg` ->
    `mptcp_cleanup_rbuf`), the softirq at arrival (`process_backlog`), the delayed-ACK
    timer, or other."""
    st = " ".join(stack)
    return "reader" if "recvmsg" in st else "softirq" if "process_backlog" in st else "timer" if "timer" in st else "other"
