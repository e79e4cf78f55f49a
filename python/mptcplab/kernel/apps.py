"""The applications of a kernel-backend run, started inside the run's namespaces.

Run as a script (``python -I apps.py ROLE CONFIG_JSON``), standard library only, so a
start costs little and nothing of the simulator loads:

- ``server``: one listening socket per flow (MPTCP: ``IPPROTO_MPTCP`` = 262), the
  receive buffer set before listen; reads everything, hashes it (SHA-256), samples the
  bytes delivered at every tick; prints one JSON line at the end.
- ``client``: one sender per flow (congestion control by ``TCP_CONGESTION`` on the
  MPTCP socket, which the kernel passes to its subflows), bound to its initial path's
  address; writes a known byte stream for the duration (or the size), then closes
  and waits for the receiver to close; samples per-subflow ``tcp_info`` through
  ``getsockopt(SOL_MPTCP, MPTCP_TCPINFO)`` and friends at every tick.
- ``udp-send`` / ``udp-recv``: probes of ``mptcplab kernel selftest``.

The byte stream: chunk k (64 KiB) is k as 8 little-endian bytes, then 65 528 bytes
drawn from the seed. Reordered, duplicated or lost chunks change the hash.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import random
import socket
import struct
import sys
import threading
import time

IPPROTO_MPTCP = 262
SOL_MPTCP = 284          # include/linux/socket.h
MPTCP_INFO, MPTCP_TCPINFO, MPTCP_SUBFLOW_ADDRS = 1, 2, 3  # include/uapi/linux/mptcp.h
TCP_CONGESTION, TCP_INFO = 13, 11
SIOCINQ, SIOCOUTQ = 0x541B, 0x5411  # FIONREAD, TIOCOUTQ (tcp(7) ioctls)
CHUNK = 65536
TCPI_SIZE = 248           # struct tcp_info up to tcpi_total_rto_time (6.7+)
ADDRS_SIZE = 256          # struct mptcp_subflow_addrs: two sockaddr_storage unions
MAX_SUBFLOWS = 16

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: die with the run (prctl(2))


def stream_chunk(base: bytes, k: int) -> bytes:
    return k.to_bytes(8, "little") + base[8:]


def stream_base(seed: int) -> bytes:
    return random.Random(seed).randbytes(CHUNK)


def stream_sha256(seed: int, length: int) -> str:
    """SHA-256 of the first `length` bytes of the stream (the run's prefix check)."""
    base = stream_base(seed)
    h = hashlib.sha256()
    k = 0
    while length > 0:
        c = stream_chunk(base, k)[: min(CHUNK, length)]
        h.update(c)
        length -= len(c)
        k += 1
    return h.hexdigest()


def _raw_getsockopt(fd: int, level: int, opt: int, buf: ctypes.Array) -> int:
    """getsockopt with an input buffer (MPTCP_TCPINFO reads the header we write)."""
    n = ctypes.c_uint32(len(buf))
    if _libc.getsockopt(fd, level, opt, buf, ctypes.byref(n)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return n.value


def _subflow_array(fd: int, opt: int, elem: int) -> list[bytes]:
    hdr = struct.pack("IIII", 16, 0, 0, elem)
    buf = ctypes.create_string_buffer(16 + elem * MAX_SUBFLOWS)
    buf[:16] = hdr
    _raw_getsockopt(fd, SOL_MPTCP, opt, buf)
    _, num, size_kernel, size_user = struct.unpack_from("IIII", buf.raw, 0)
    step = size_user
    return [buf.raw[16 + i * step: 16 + (i + 1) * step] for i in range(min(num, MAX_SUBFLOWS))]


def parse_tcp_info(b: bytes) -> dict[str, float]:
    """The fields of struct tcp_info (include/uapi/linux/tcp.h) that the tables use."""
    u32 = lambda off: struct.unpack_from("I", b, off)[0] if len(b) >= off + 4 else float("nan")  # noqa: E731
    u64 = lambda off: struct.unpack_from("Q", b, off)[0] if len(b) >= off + 8 else float("nan")  # noqa: E731
    u16 = lambda off: struct.unpack_from("H", b, off)[0] if len(b) >= off + 2 else float("nan")  # noqa: E731
    return {
        "state": b[0], "ca_state": b[1], "rto_us": u32(8), "snd_mss": u32(16), "unacked": u32(24),
        "sacked": u32(28), "lost": u32(32), "retrans": u32(36), "rtt_us": u32(68), "rttvar_us": u32(72),
        "snd_ssthresh": u32(76), "snd_cwnd": u32(80), "total_retrans": u32(100), "pacing_rate": u64(104),
        "bytes_acked": u64(120), "bytes_received": u64(128), "min_rtt_us": u32(148),
        "delivery_rate": u64(160), "bytes_sent": u64(200), "bytes_retrans": u64(208), "snd_wnd": u32(228),
        "total_rto": u16(240),
    }


def parse_mptcp_info(b: bytes) -> dict[str, float]:
    """struct mptcp_info (include/uapi/linux/mptcp.h; byte counters since 6.7)."""
    u64 = lambda off: struct.unpack_from("Q", b, off)[0] if len(b) >= off + 8 else float("nan")  # noqa: E731
    return {"subflows": b[0] if b else 0, "snd_una": u64(24), "bytes_retrans": u64(48), "bytes_sent": u64(56),
            "bytes_received": u64(64), "bytes_acked": u64(72)}


def _ioctl_int(fd: int, req: int) -> int:
    v = ctypes.c_int(0)
    if _libc.ioctl(fd, req, ctypes.byref(v)) != 0:
        return -1
    return v.value


def sample_socket(sock: socket.socket, kind: str) -> dict:
    """One sample of a sender socket: per-subflow tcp_info with local address/port."""
    fd = sock.fileno()
    out: dict = {"subflows": [], "outq": _ioctl_int(fd, SIOCOUTQ)}
    if kind == "tcp":
        b = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCPI_SIZE)
        la = sock.getsockname()
        out["subflows"].append({"laddr": la[0], "lport": la[1], **parse_tcp_info(b)})
        return out
    out["mptcp"] = parse_mptcp_info(sock.getsockopt(SOL_MPTCP, MPTCP_INFO, 128))
    infos = _subflow_array(fd, MPTCP_TCPINFO, TCPI_SIZE)
    addrs = _subflow_array(fd, MPTCP_SUBFLOW_ADDRS, ADDRS_SIZE)
    for info, addr in zip(infos, addrs):
        fam = struct.unpack_from("H", addr, 0)[0]
        if fam != socket.AF_INET:
            continue
        lport = struct.unpack_from("!H", addr, 2)[0]
        laddr = socket.inet_ntoa(addr[4:8])
        out["subflows"].append({"laddr": laddr, "lport": lport, **parse_tcp_info(info)})
    return out


def _ticks(t0: float, dt: float, end: float):
    k = 1
    while True:
        t = t0 + k * dt
        if t > end + 1e-9:
            return
        delay = t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        yield k, t
        k += 1


# -- server ---------------------------------------------------------------------------------
def server(cfg: dict) -> None:
    flows = cfg["flows"]
    t0, dt, duration = cfg["t0"], cfg["sample_s"], cfg["duration_s"]
    state = {f["name"]: {"bytes": 0, "hash": hashlib.sha256(), "done": False, "error": None, "end_t": None,
                         "rcvbuf_set": None, "rcvbuf_kernel": None, "inq": 0} for f in flows}
    listeners = []
    for f in flows:
        proto = IPPROTO_MPTCP if f["kind"] == "mptcp" else socket.IPPROTO_TCP
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if f.get("receive_buffer"):
            # Set before listen so the accepted socket inherits it and autotuning is off
            # (tcp(7)); SO_RCVBUFFORCE ignores rmem_max, a global we leave alone. The
            # kernel doubles the value (socket(7)): both figures are recorded.
            s.setsockopt(socket.SOL_SOCKET, 33, f["receive_buffer"])  # SO_RCVBUFFORCE
            state[f["name"]]["rcvbuf_set"] = f["receive_buffer"]
            state[f["name"]]["rcvbuf_kernel"] = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        s.bind((cfg["server_ip"], f["port"]))
        s.listen(4)
        listeners.append((f, s))
    print("ready", flush=True)

    corrupt_at = cfg.get("corrupt_at")
    conns: dict[str, socket.socket] = {}

    def receive(f: dict, ls: socket.socket) -> None:
        st = state[f["name"]]
        try:
            ls.settimeout(max(1.0, t0 + duration + cfg["drain_s"] - time.monotonic()))
            c, _ = ls.accept()
            conns[f["name"]] = c
            c.settimeout(None)
            buf = bytearray(256 * 1024)
            view = memoryview(buf)
            h = st["hash"]
            while True:
                n = c.recv_into(buf)
                if n == 0:
                    break
                if corrupt_at is not None and st["bytes"] <= corrupt_at < st["bytes"] + n:
                    buf[corrupt_at - st["bytes"]] ^= 0x01  # test hook: flip one bit
                h.update(view[:n])
                st["bytes"] += n
                st["end_t"] = time.monotonic()
            st["done"] = True
            c.close()
        except OSError as err:
            st["error"] = f"{type(err).__name__}: {err}"
        finally:
            ls.close()

    threads = [threading.Thread(target=receive, args=(f, s), daemon=True) for f, s in listeners]
    for th in threads:
        th.start()
    samples = []
    for k, t in _ticks(t0, dt, t0 + duration):
        row = {"k": k}
        for f in flows:
            st = state[f["name"]]
            c = conns.get(f["name"])
            row[f["name"]] = [st["bytes"], _ioctl_int(c.fileno(), SIOCINQ) if c is not None else -1]
        samples.append(row)
    delivered_at_end = {f["name"]: state[f["name"]]["bytes"] for f in flows}
    for th in threads:
        th.join(timeout=max(0.0, t0 + duration + cfg["drain_s"] + 2 - time.monotonic()))
    out = {
        "samples": samples,
        "delivered_at_end": delivered_at_end,
        "flows": {n: {"bytes": st["bytes"], "sha256": st["hash"].hexdigest(), "done": st["done"],
                      "error": st["error"], "end_s": None if st["end_t"] is None else st["end_t"] - t0,
                      "rcvbuf_set": st["rcvbuf_set"], "rcvbuf_kernel": st["rcvbuf_kernel"]}
                  for n, st in state.items()},
    }
    print(json.dumps(out), flush=True)


# -- client ---------------------------------------------------------------------------------
def client(cfg: dict) -> None:
    flows = cfg["flows"]
    t0, dt, duration, drain = cfg["t0"], cfg["sample_s"], cfg["duration_s"], cfg["drain_s"]
    base = stream_base(cfg["seed"])
    socks: dict[str, socket.socket] = {}
    state = {f["name"]: {"sent": 0, "hash": hashlib.sha256(), "error": None, "closed": "no",
                         "cc": None, "sndbuf_kernel": None} for f in flows}

    def send(f: dict) -> None:
        st = state[f["name"]]
        try:
            delay = t0 + f["start_s"] - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            proto = IPPROTO_MPTCP if f["kind"] == "mptcp" else socket.IPPROTO_TCP
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["cc"].encode())
            st["cc"] = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
            if f.get("send_buffer"):
                s.setsockopt(socket.SOL_SOCKET, 32, f["send_buffer"])  # SO_SNDBUFFORCE
            st["sndbuf_kernel"] = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            s.bind((f["client_ip"], 0))  # the initial subflow leaves on the initial path
            s.settimeout(max(1.0, t0 + duration - time.monotonic()))
            s.connect((cfg["server_ip"], f["port"]))
            socks[f["name"]] = s
            s.settimeout(0.05)
            end = t0 + duration
            size = f.get("size_bytes")
            k, off = 0, 0
            chunk = memoryview(stream_chunk(base, 0))
            h = st["hash"]
            while time.monotonic() < end and (size is None or st["sent"] < size):
                lim = CHUNK if size is None else min(CHUNK, off + size - st["sent"])
                try:
                    n = s.send(chunk[off:lim])
                except socket.timeout:
                    continue
                h.update(chunk[off: off + n])
                st["sent"] += n
                off += n
                if off >= lim:
                    k, off = k + 1, 0
                    chunk = memoryview(stream_chunk(base, k))
            # Graceful close: FIN/DATA_FIN after the data, then wait for the peer's close.
            s.settimeout(max(0.5, t0 + duration + drain - time.monotonic()))
            s.shutdown(socket.SHUT_WR)
            try:
                while s.recv(4096):
                    pass
                st["closed"] = "graceful"
            except socket.timeout:
                # Drain took too long: abort (RST / MP_FASTCLOSE). The receiver then holds
                # a prefix of the stream, checked against the regenerated stream.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                st["closed"] = "aborted"
            s.close()
        except OSError as err:
            st["error"] = f"{type(err).__name__}: {err}"

    threads = [threading.Thread(target=send, args=(f,), daemon=True) for f in flows]
    for th in threads:
        th.start()
    samples = []
    for k, t in _ticks(t0, dt, t0 + duration):
        row: dict = {"k": k}
        for f in flows:
            s = socks.get(f["name"])
            if s is None or s.fileno() < 0:
                continue
            try:
                row[f["name"]] = {"app_sent": state[f["name"]]["sent"], **sample_socket(s, f["kind"])}
            except OSError:
                pass
        samples.append(row)
    for th in threads:
        th.join(timeout=max(0.0, t0 + duration + drain + 2 - time.monotonic()))
    out = {
        "samples": samples,
        "flows": {n: {"sent": st["sent"], "sha256": st["hash"].hexdigest(), "error": st["error"],
                      "closed": st["closed"], "cc": st["cc"], "sndbuf_kernel": st["sndbuf_kernel"]}
                  for n, st in state.items()},
    }
    print(json.dumps(out), flush=True)


# -- selftest probes ------------------------------------------------------------------------
def udp_recv(cfg: dict) -> None:
    """Count probes and their one-way delays (kernel receive timestamps, CLOCK_REALTIME,
    against the sender's CLOCK_REALTIME stamp in the payload)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    s.bind((cfg["ip"], cfg["port"]))
    s.settimeout(cfg["idle_s"])
    print("ready", flush=True)
    delays, count, nbytes, first, last = [], 0, 0, None, None
    while True:
        try:
            data, anc, _, _ = s.recvmsg(65536, 256)
        except socket.timeout:
            break
        rx = None
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == 35:
                sec, nsec = struct.unpack("qq", val[:16])
                rx = sec * 10**9 + nsec
        if rx is None:
            rx = time.time_ns()
        seq, tx = struct.unpack_from("QQ", data, 0)
        if seq == 2**64 - 1:
            break
        count += 1
        nbytes += len(data)
        if first is None:
            first = rx
        last = rx
        if cfg.get("delays"):
            delays.append(rx - tx)
    print(json.dumps({"count": count, "bytes": nbytes, "first_ns": first, "last_ns": last,
                      "delays_ns": delays}), flush=True)


def udp_send(cfg: dict) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)  # SO_SNDBUFFORCE
    s.bind((cfg["src"], 0))
    dst = (cfg["ip"], cfg["port"])
    pad = bytes(max(0, cfg["size"] - 16))
    gap = cfg["size"] * 8 / cfg["rate_bps"] if cfg.get("rate_bps") else 0.0
    t = time.monotonic()
    sent = 0
    for seq in range(cfg["count"]):
        if gap:
            t += gap
            d = t - time.monotonic()
            if d > 0.002:
                time.sleep(d - 0.001)
            while time.monotonic() < t:  # the last millisecond: spin, for an even gap
                pass
        try:
            s.sendto(struct.pack("QQ", seq, time.time_ns()) + pad, dst)
            sent += 1
        except OSError:
            pass
    time.sleep(0.3)
    for _ in range(3):
        s.sendto(struct.pack("QQ", 2**64 - 1, 0), dst)
    print(json.dumps({"sent": sent}), flush=True)


def main() -> None:
    role, cfg = sys.argv[1], json.loads(sys.argv[2])
    {"server": server, "client": client, "udp-recv": udp_recv, "udp-send": udp_send}[role](cfg)


if __name__ == "__main__":
    main()
