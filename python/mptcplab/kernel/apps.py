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
  A stream (``app.kind = "stream"``) writes frames on the frame clock through a
  non-blocking socket: what the send buffer does not take waits in the app's queue.
  A poller thread reads ``MPTCP_INFO`` (``TCP_INFO`` for TCP) every POLL_S for the bytes
  the MPTCP level took (``mptcpi_bytes_sent`` = snd_nxt progress) and DATA_ACKed
  (``mptcpi_bytes_acked``), which date each frame's taken and acked stages.
- ``udp-send`` / ``udp-recv``: probes of ``mptcplab kernel selftest``.

The byte stream: chunk k (64 KiB) is k as 8 little-endian bytes, then 65 528 bytes
drawn from the seed. Reordered, duplicated or lost chunks change the hash.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import select
import subprocess
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
POLL_S = 0.002            # a stream's MPTCP_INFO poll: the resolution of taken_s and acked_s

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


def frame_end(stream: dict, k: int) -> int:
    """Data offset just past frame k: floor((k + 1) · bitrate / (8 · frame_rate))
    (docs/streaming.md; the simulator's Stream::frame_end)."""
    return int(math.floor((k + 1) * stream["bitrate_bps"] / (8.0 * stream["frame_rate"])))


def frame_offset_s(stream: dict, k: int) -> float:
    """Frame k's offset from the frame clock's origin, round(k / frame_rate) in ns."""
    return round(k * 1e9 / stream["frame_rate"]) / 1e9


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
                         "rcvbuf_set": None, "rcvbuf_kernel": None, "inq": 0, "delivered": []} for f in flows}
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
            stream = f.get("stream")
            delivered = st["delivered"]
            next_end = frame_end(stream, 0) if stream else None
            while True:
                n = c.recv_into(buf)
                if n == 0:
                    break
                if corrupt_at is not None and st["bytes"] <= corrupt_at < st["bytes"] + n:
                    buf[corrupt_at - st["bytes"]] ^= 0x01  # test hook: flip one bit
                h.update(view[:n])
                st["bytes"] += n
                st["end_t"] = time.monotonic()
                # A frame is delivered when the app has read its last byte.
                while next_end is not None and next_end <= st["bytes"]:
                    delivered.append(round(st["end_t"] - t0, 6))
                    next_end = frame_end(stream, len(delivered))
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
                      "rcvbuf_set": st["rcvbuf_set"], "rcvbuf_kernel": st["rcvbuf_kernel"],
                      "frames_delivered_s": st["delivered"]}
                  for n, st in state.items()},
    }
    print(json.dumps(out), flush=True)


# -- client ---------------------------------------------------------------------------------
def _mp_prio(endpoint_ids: list[int], fullmesh: bool) -> list[str]:
    """MP_PRIO backup on the subflows from these endpoints' addresses (RFC 8684 §3.3.8;
    `ip mptcp endpoint change ID backup`, ip-mptcp(8)); errors come back as text. The
    fullmesh flag is restated: a change of it removes and reopens the subflows."""
    errors = []
    for eid in endpoint_ids:
        proc = subprocess.run(["ip", "mptcp", "endpoint", "change", "id", str(eid), "backup",
                               *(["fullmesh"] if fullmesh else [])], capture_output=True, text=True)
        if proc.returncode != 0:
            errors.append(f"endpoint {eid}: {(proc.stderr or proc.stdout).strip()}")
    return errors


def _initial_backup(s: socket.socket, f: dict, st: dict, t0: float, end: float) -> None:
    """PCDC with the initial subflow's path outside SP*: MP_PRIO it to backup once the
    joins are up. Not at once: an MP_PRIO before the connection is fully established
    (before the first DATA_ACK) kept this kernel's path manager from opening any join,
    and until a join exists the initial subflow is the only one to send on anyway."""
    want = f["mp_prio_wait_subflows"]
    while time.monotonic() < end:
        try:
            if parse_mptcp_info(s.getsockopt(SOL_MPTCP, MPTCP_INFO, 128))["subflows"] >= want:
                break
        except OSError:
            return
        time.sleep(0.002)
    errs = _mp_prio(f["mp_prio_after_connect"], f["fullmesh"])
    st["mp_prio"].append([round(time.monotonic() - t0, 6), f["mp_prio_after_connect"], errs])


def _bulk(s: socket.socket, f: dict, st: dict, base: bytes, end: float) -> None:
    """Write the stream of bytes until `end` (or the flow's size)."""
    s.settimeout(0.05)
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


def _stream(s: socket.socket, f: dict, st: dict, base: bytes, t0: float, end: float) -> None:
    """Frames on the frame clock (docs/streaming.md): frame k is generated at origin +
    round(k / frame_rate) and queued in the app; the non-blocking socket takes what its
    send buffer holds, the rest waits in order. Records each frame's scheduled time, end
    offset and the time its last byte entered the send buffer (enqueued)."""
    stream = f["stream"]
    origin = time.monotonic()  # the frame clock starts when connect() returned
    stop = end if stream.get("duration_s") is None else min(end, origin + stream["duration_s"])
    frames = st["frames"]  # [scheduled_s, end_offset, enqueued_s]
    s.setblocking(False)
    h = st["hash"]
    generated, written, k, cursor = 0, 0, 0, 0
    ck = -1
    chunk = memoryview(b"")
    while True:
        now = time.monotonic()
        if now >= end:
            break
        while origin + frame_offset_s(stream, k) <= now and origin + frame_offset_s(stream, k) < stop:
            generated = frame_end(stream, k)
            frames.append([round(origin + frame_offset_s(stream, k) - t0, 9), generated, None])
            k += 1
        while written < generated:
            q, off = divmod(written, CHUNK)
            if q != ck:
                ck, chunk = q, memoryview(stream_chunk(base, q))
            lim = min(CHUNK, off + generated - written)
            t = time.monotonic()  # the bytes enter the buffer during the call: date it by its start
            try:
                n = s.send(chunk[off:lim])
            except (BlockingIOError, InterruptedError):
                break
            h.update(chunk[off: off + n])
            written += n
            st["sent"] = written
            while cursor < len(frames) and frames[cursor][1] <= written:
                frames[cursor][2] = round(t - t0, 9)
                cursor += 1
        nxt = origin + frame_offset_s(stream, k)
        if nxt >= stop and written >= generated:
            break  # a bounded stream wrote its last frame
        wake = min(nxt if nxt < stop else end, end)
        timeout = max(0.0, wake - time.monotonic())
        if written < generated:
            select.select([], [s], [], timeout)  # writable, or the next frame is due
        elif timeout > 0:
            time.sleep(timeout)


def _poll_stages(s: socket.socket, kind: str, st: dict, t0: float, end: float) -> None:
    """Date the taken and acked stages of a stream's frames: every POLL_S, the bytes the
    MPTCP level handed to subflows (mptcpi_bytes_sent, which grows with snd_nxt only:
    protocol.c mptcp_update_post_push) and the bytes DATA_ACKed (mptcpi_bytes_acked); for
    TCP, tcpi_bytes_sent - tcpi_bytes_retrans and tcpi_bytes_acked. A stage's time is
    the first poll that saw the frame's last byte past it: late by up to one poll."""
    frames, taken, acked = st["frames"], st["taken"], st["acked"]
    polls, last, gap = 0, time.monotonic(), 0.0
    while not st["stop_poll"]:
        now = time.monotonic()
        if now > end:
            break
        try:
            if kind == "mptcp":
                info = parse_mptcp_info(s.getsockopt(SOL_MPTCP, MPTCP_INFO, 128))
                t_off, a_off = info["bytes_sent"], info["bytes_acked"]
            else:
                info = parse_tcp_info(s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCPI_SIZE))
                t_off, a_off = info["bytes_sent"] - info["bytes_retrans"], info["bytes_acked"]
        except OSError:
            break
        polls += 1
        gap, last = max(gap, now - last), now
        t = round(now - t0, 9)
        n = len(frames)
        while len(taken) < n and frames[len(taken)][1] <= t_off:
            taken.append(t)
        while len(acked) < n and frames[len(acked)][1] <= a_off:
            acked.append(t)
        time.sleep(POLL_S)
    st["polls"], st["poll_max_gap_s"] = polls, round(gap, 6)


def client(cfg: dict) -> None:
    flows = cfg["flows"]
    t0, dt, duration, drain = cfg["t0"], cfg["sample_s"], cfg["duration_s"], cfg["drain_s"]
    base = stream_base(cfg["seed"])
    socks: dict[str, socket.socket] = {}
    state = {f["name"]: {"sent": 0, "hash": hashlib.sha256(), "error": None, "closed": "no",
                         "cc": None, "sndbuf_kernel": None, "connected_s": None, "mp_prio": [],
                         "frames": [], "taken": [], "acked": [], "stop_poll": False, "polls": 0,
                         "poll_max_gap_s": None} for f in flows}

    def send(f: dict) -> None:
        st = state[f["name"]]
        poller = None
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
            st["connected_s"] = round(time.monotonic() - t0, 6)
            socks[f["name"]] = s
            if f.get("mp_prio_after_connect"):
                threading.Thread(target=_initial_backup, args=(s, f, st, t0, t0 + duration), daemon=True).start()
            end = t0 + duration
            if f.get("stream"):
                poller = threading.Thread(target=_poll_stages, args=(s, f["kind"], st, t0, end), daemon=True)
                poller.start()
                _stream(s, f, st, base, t0, end)
            else:
                _bulk(s, f, st, base, end)
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
            st["stop_poll"] = True
            if poller is not None:
                poller.join(timeout=1.0)
            s.close()
        except OSError as err:
            st["error"] = f"{type(err).__name__}: {err}"
        finally:
            st["stop_poll"] = True

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
                      "closed": st["closed"], "cc": st["cc"], "sndbuf_kernel": st["sndbuf_kernel"],
                      "connected_s": st["connected_s"], "mp_prio": st["mp_prio"],
                      "frames": [[fr[0], fr[1], fr[2]] for fr in list(st["frames"])],
                      "taken_s": list(st["taken"]), "acked_s": list(st["acked"]),
                      "polls": st["polls"], "poll_max_gap_s": st["poll_max_gap_s"]}
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
    # `sizes` (optional): the payload of each datagram in turn, repeated; else `size`.
    sizes = cfg.get("sizes") or [cfg["size"]]
    gap = cfg["size"] * 8 / cfg["rate_bps"] if cfg.get("rate_bps") else 0.0
    burst = cfg.get("burst", 0)  # sent back to back first, so the link has a backlog from the start
    t = time.monotonic()
    sent = 0
    for seq in range(cfg["count"]):
        if seq == burst:
            t = time.monotonic()
        if gap and seq >= burst:
            t += gap
            d = t - time.monotonic()
            if d > 0.002:
                time.sleep(d - 0.001)
            while time.monotonic() < t:  # the last millisecond: spin, for an even gap
                pass
        try:
            s.sendto(struct.pack("QQ", seq, time.time_ns()) + bytes(max(0, sizes[seq % len(sizes)] - 16)), dst)
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
