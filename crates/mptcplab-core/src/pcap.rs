//! Packet captures of a simulated run: one classic pcap file per path, written at the
//! client's end of the path, the capture point of the kernel backend's forwarder
//! (`python/mptcplab/kernel/forwarder.c`, `pcap_write`): client-to-server packets when
//! they leave the client (so packets later dropped in the network are in it), and
//! server-to-client packets when they reach the client.
//!
//! The engine's packets carry lengths and sequence numbers, not bytes. This module
//! writes each as a real IPv4 + TCP header with the options a Linux MPTCP v1 stack
//! would put there (RFC 8684), so that Wireshark/tshark decode and group them; what is
//! synthesized (keys, nonces, the server's ISN, addresses, ports, payload bytes) is
//! drawn from its own named random streams and never perturbs the run.
//!
//! The core does no I/O: the caller hands in one `Write` per path (the Python binding
//! opens files). Writing stops at the first I/O error of a sink; `finish` reports it.

use crate::mptcp::conn::TCP_HEADER_BYTES;
use crate::net::{Packet, PacketKind};
use crate::rng::Rng;
use crate::units::SimTime;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::io::{self, Write};

/// Bytes of each packet kept in the file (IPv4 header, TCP header and the first payload
/// bytes); the length fields stay true. The kernel backend's forwarder keeps 128 bytes
/// of each Ethernet frame (`PCAP_SNAPLEN`).
pub const SNAPLEN: u32 = 128;
/// pcap-savefile(5) magic for nanosecond timestamps (draft-ietf-opsawg-pcap §4).
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record starts with the IPv4 header (tcpdump.org/linktypes.html).
const LINKTYPE_RAW: u32 = 101;
/// The server's address; client addresses are per path. The same as the kernel
/// backend's plan (`python/mptcplab/kernel/plan.py`: server 10.200.0.1, path i's client
/// 10.100.i.1), so both backends' captures read alike.
const SERVER_IP: [u8; 4] = [10, 200, 0, 1];
/// Server port of connection i (connections, then plain flows): 5001 + i, as the kernel
/// backend's plan numbers them.
const SERVER_PORT_BASE: u16 = 5001;
/// Client port of subflow j of connection i: CLIENT_PORT_BASE + 64 i + j (at most 64
/// subflows a connection, `mptcp::conn::MAX_SUBFLOWS`).
const CLIENT_PORT_BASE: u16 = 32768;
/// Window scale the client announces (Linux picks 7 for tcp_rmem[2] = 6 MiB,
/// `tcp_select_initial_window`); the server announces its own (`SubflowInfo::wscale`).
const WSCALE: u8 = 7;
/// The window the client advertises: it receives no data in the simulator, so a fixed
/// tcp_rmem[1] (131072 bytes).
const CLIENT_WINDOW_BYTES: u64 = 131_072;
/// Largest TCP option space (RFC 9293 §3.1: data offset ≤ 15 words).
const MAX_OPTIONS: usize = 40;

// TCP option kinds (IANA "TCP Option Kind Numbers").
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERM: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TS: u8 = 8;
const OPT_MPTCP: u8 = 30;
// MPTCP option subtypes (RFC 8684 §3, Table 1).
const MP_CAPABLE: u8 = 0x0;
const MP_JOIN: u8 = 0x1;
const DSS: u8 = 0x2;
const MP_PRIO: u8 = 0x5;
/// MP_CAPABLE version 1 (RFC 8684 §3.1).
const MPTCP_VERSION: u8 = 1;
/// MP_CAPABLE flags: only H (HMAC-SHA256); A (checksum) off, so DSS carries no checksum.
const MPC_FLAG_H: u8 = 0x01;
// DSS flags (RFC 8684 §3.3, Figure 9): A, a, M, m.
const DSS_A: u8 = 0x01;
const DSS_A8: u8 = 0x02;
const DSS_M: u8 = 0x04;
const DSS_M8: u8 = 0x08;
// TCP header flags (RFC 9293 §3.1).
const TCP_SYN: u8 = 0x02;
const TCP_PSH: u8 = 0x08;
const TCP_ACK: u8 = 0x10;

/// The fixed TCP header fields of a record.
struct Header {
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    payload: u32,
    ip_id: u16,
}

/// Scaled window field of a non-SYN segment (RFC 7323 §2.3).
fn scaled(bytes: u64, wscale: u8) -> u16 { (bytes >> wscale).min(0xffff) as u16 }

/// What the engine knows about the subflow a packet belongs to, given with each packet.
#[derive(Clone, Copy, Debug)]
pub struct SubflowInfo {
    pub mptcp: bool,
    /// The connection's first subflow (MP_CAPABLE), else an MP_JOIN subflow.
    pub initial: bool,
    pub backup: bool,
    /// Payload bytes per segment (the MSS option announces mss + 12, the timestamps).
    pub mss: u32,
    /// The server's receive window scale, as its SYN-ACK announces it: 7 for Linux's
    /// default tcp_rmem[2], less for a locked SO_RCVBUF (2 for seed 001's 200 KB;
    /// `tcp_select_initial_window`, the simulator's `RcvMem`), so the ACKs' window
    /// fields carry the receiver's window to the byte, as the kernel backend's do.
    pub wscale: u8,
}

/// The synthesized per-connection values: keys and what RFC 8684 derives from them.
struct ConnWire {
    key_client: u64,
    key_server: u64,
    /// Token = the most significant 32 bits of SHA-256(key); IDSN = its least
    /// significant 64 bits (RFC 8684 §3.1).
    token_server: u32,
    idsn_client: u64,
    idsn_server: u64,
    name: String,
    seed: u64,
    subs: Vec<SubWire>,
    /// The server's latest DATA_ACK and window edge (sim data space), for its packets
    /// that carry none (the MP_JOIN fourth ACK).
    data_ack: u64,
    window_edge: u64,
}

/// Per subflow: sequence spaces, nonces, timestamps echo state, IP ids.
#[derive(Clone, Default)]
struct SubWire {
    seen: bool,
    /// The client's ISN on the wire: the simulator's `iss` is its first data byte, so
    /// the SYN is at iss - 1 (the SYN takes one sequence number, RFC 9293 §3.4).
    isn_client: u32,
    isn_server: u32,
    nonce_client: u32,
    nonce_server: u32,
    /// The latest TSval each end has received (RFC 7323 §4.3 TS.Recent, simplified:
    /// the latest segment's, in or out of order).
    ts_recent_client: u32,
    ts_recent_server: u32,
    /// The server's latest cumulative ACK (the MP_JOIN fourth ACK carries none).
    ack_server: u32,
    ip_id_client: u16,
    ip_id_server: u16,
}

impl SubWire {
    /// The next IPv4 identification of one end (per-end counters, as Linux keeps one per
    /// socket with DF set).
    fn next_ip_id(&mut self, from_client: bool) -> u16 {
        let id = if from_client { &mut self.ip_id_client } else { &mut self.ip_id_server };
        *id = id.wrapping_add(1);
        *id
    }
}

struct Sink {
    out: Box<dyn Write + Send>,
    records: u64,
    failed: bool,
}

/// A failed write: which sink (path index) and the I/O error.
#[derive(Debug)]
pub struct PcapError {
    pub path: usize,
    pub error: io::Error,
}

pub struct PcapWriter {
    sinks: Vec<Sink>,
    conns: Vec<ConnWire>,
    error: Option<PcapError>,
    /// Scratch for one record.
    buf: Vec<u8>,
}

type HmacSha256 = Hmac<Sha256>;

fn sha256(bytes: &[u8]) -> [u8; 32] { Sha256::digest(bytes).into() }

/// HMAC-SHA256 of `msg` under `key` (RFC 2104 via the `hmac` crate; RFC 8684 §3.2).
fn hmac256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length (RFC 2104 §2), so `new_from_slice` cannot fail.
    let mut m = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(msg);
    m.finalize().into_bytes().into()
}

/// Token (most significant 32 bits) and IDSN (least significant 64 bits) of
/// SHA-256(key), the key in network byte order (RFC 8684 §3.1).
pub fn token_and_idsn(key: u64) -> (u32, u64) {
    let h = sha256(&key.to_be_bytes());
    let token = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let mut lo = [0u8; 8];
    lo.copy_from_slice(&h[24..32]);
    (token, u64::from_be_bytes(lo))
}

/// The MP_JOIN HMACs (RFC 8684 §3.2): the listener (B, server) sends
/// HMAC(Key=(Key-B + Key-A), Msg=(R-B + R-A)) truncated to its leftmost 64 bits in the
/// SYN/ACK; the initiator (A, client) sends HMAC(Key=(Key-A + Key-B), Msg=(R-A + R-B)),
/// its leftmost 160 bits, in the third ACK.
pub fn join_hmacs(key_a: u64, key_b: u64, r_a: u32, r_b: u32) -> ([u8; 8], [u8; 20]) {
    let cat_keys = |x: u64, y: u64| {
        let mut k = [0u8; 16];
        k[..8].copy_from_slice(&x.to_be_bytes());
        k[8..].copy_from_slice(&y.to_be_bytes());
        k
    };
    let cat_nonces = |x: u32, y: u32| {
        let mut m = [0u8; 8];
        m[..4].copy_from_slice(&x.to_be_bytes());
        m[4..].copy_from_slice(&y.to_be_bytes());
        m
    };
    let b = hmac256(&cat_keys(key_b, key_a), &cat_nonces(r_b, r_a));
    let a = hmac256(&cat_keys(key_a, key_b), &cat_nonces(r_a, r_b));
    let mut trunc = [0u8; 8];
    trunc.copy_from_slice(&b[..8]);
    let mut full = [0u8; 20];
    full.copy_from_slice(&a[..20]);
    (trunc, full)
}

/// Internet checksum (RFC 1071): one's complement of the one's complement sum.
fn checksum_add(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut it = bytes.chunks_exact(2);
    for w in &mut it {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = it.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn checksum_fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// TSval: the sender's clock in milliseconds of simulated time (Linux's default TCP
/// timestamp clock, `tcp_time_stamp_ms`; RFC 7323 §5.4 allows 1 ms..1 s ticks).
fn tsval(t: SimTime) -> u32 { (t.ns() / 1_000_000) as u32 }

/// The client address of world path `p`: 10.100.p.1 (10.(100 + p / 256).(p % 256).1
/// beyond 255 paths).
pub fn client_ip(path: usize) -> [u8; 4] { [10, 100u8.wrapping_add((path / 256) as u8), (path % 256) as u8, 1] }

/// TCP options, appended to a fixed buffer.
struct Options {
    b: [u8; MAX_OPTIONS],
    n: usize,
}

impl Options {
    fn new() -> Options { Options { b: [0; MAX_OPTIONS], n: 0 } }
    fn put(&mut self, bytes: &[u8]) {
        self.b[self.n..self.n + bytes.len()].copy_from_slice(bytes);
        self.n += bytes.len();
    }
    fn nops(&mut self, k: usize) {
        for _ in 0..k {
            self.put(&[OPT_NOP]);
        }
    }
    /// NOP, NOP, timestamps (RFC 7323 §3; Linux's layout, `tcp_options_write`).
    fn timestamps(&mut self, val: u32, ecr: u32) {
        self.nops(2);
        self.put(&[OPT_TS, 10]);
        self.put(&val.to_be_bytes());
        self.put(&ecr.to_be_bytes());
    }
    /// The SYN's options in Linux's order: MSS, SACK-permitted + timestamps, NOP + window
    /// scale (RFC 9293 §3.7.1, RFC 2018 §2, RFC 7323 §2.2 and §3).
    fn syn(&mut self, mss_opt: u16, val: u32, ecr: u32, wscale: u8) {
        self.put(&[OPT_MSS, 4]);
        self.put(&mss_opt.to_be_bytes());
        self.put(&[OPT_SACK_PERM, 2, OPT_TS, 10]);
        self.put(&val.to_be_bytes());
        self.put(&ecr.to_be_bytes());
        self.put(&[OPT_NOP, OPT_WSCALE, 3, wscale]);
    }
    /// Pad to a multiple of 4 bytes with NOPs (the data offset counts 32-bit words).
    fn align(&mut self) {
        while self.n % 4 != 0 {
            self.put(&[OPT_NOP]);
        }
    }
    fn room(&self) -> usize { MAX_OPTIONS - self.n }
}

impl PcapWriter {
    /// A writer for a run of `plan` under `seed`, with one sink per path of the plan (in
    /// its order). Writes the file headers at once.
    pub fn new(plan: &crate::scenario::Plan, seed: u64, sinks: Vec<Box<dyn Write + Send>>) -> PcapWriter {
        let conns = plan
            .conns
            .iter()
            .map(|c| {
                // Keys come from their own stream, so captures never change the run.
                let mut r = Rng::stream(seed, &format!("pcap/conn/{}/keys", c.cfg.name));
                let key_client = r.next_u64();
                let key_server = r.next_u64();
                let (_, idsn_client) = token_and_idsn(key_client);
                let (token_server, idsn_server) = token_and_idsn(key_server);
                ConnWire { key_client, key_server, token_server, idsn_client, idsn_server, name: c.cfg.name.clone(), seed, subs: Vec::new(), data_ack: 0, window_edge: 0 }
            })
            .collect();
        let mut w = PcapWriter { sinks: sinks.into_iter().map(|out| Sink { out, records: 0, failed: false }).collect(), conns, error: None, buf: Vec::with_capacity(SNAPLEN as usize + 16) };
        // File header (pcap-savefile(5)): magic, version 2.4, thiszone, sigfigs, snaplen,
        // link type; little-endian, as the magic's byte order tells readers.
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        for i in 0..w.sinks.len() {
            // (A failed header write is kept in `error`.)
            let _ = w.emit(i, &h);
        }
        w
    }

    /// Records written to each sink.
    pub fn records(&self) -> Vec<u64> { self.sinks.iter().map(|s| s.records).collect() }

    /// The first write error, if any (writing to that sink stopped there).
    pub fn error(&self) -> Option<&PcapError> { self.error.as_ref() }

    /// Flush every sink; the first error of the run, or of the flush.
    pub fn finish(mut self) -> Result<Vec<u64>, PcapError> {
        for (i, s) in self.sinks.iter_mut().enumerate() {
            if !s.failed {
                if let Err(e) = s.out.flush() {
                    s.failed = true;
                    self.error.get_or_insert(PcapError { path: i, error: e });
                }
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.records()),
        }
    }

    /// Write to sink `i`; true if it took the bytes.
    fn emit(&mut self, i: usize, bytes: &[u8]) -> bool {
        let Some(s) = self.sinks.get_mut(i) else { return false };
        if s.failed {
            return false;
        }
        if let Err(e) = s.out.write_all(bytes) {
            s.failed = true;
            self.error.get_or_insert(PcapError { path: i, error: e });
            return false;
        }
        true
    }

    fn sub(&mut self, conn: u32, sub: u16) -> Option<&mut SubWire> {
        let c = self.conns.get_mut(conn as usize)?;
        let k = sub as usize;
        if c.subs.len() <= k {
            c.subs.resize(k + 1, SubWire::default());
        }
        let s = &mut c.subs[k];
        if !s.seen {
            // Per-subflow values from a stream named by connection and subflow index,
            // independent of the order subflows appear in.
            let mut r = Rng::stream(c.seed, &format!("pcap/conn/{}/sub/{k}", c.name));
            s.isn_server = r.next_u64() as u32;
            s.nonce_client = r.next_u64() as u32;
            s.nonce_server = r.next_u64() as u32;
            s.seen = true;
        }
        Some(s)
    }

    /// A packet leaves its source (hop 0 of its route): client-to-server packets are
    /// written now. Server-to-client packets are written when they reach the client.
    #[inline]
    pub fn on_send(&mut self, now: SimTime, p: &Packet, info: SubflowInfo) {
        if p.route % 2 == 0 {
            self.write(now, p, info);
        }
    }

    /// A packet reached its destination end: the server notes the client's TSval; the
    /// client's arrivals are written.
    #[inline]
    pub fn on_arrive(&mut self, now: SimTime, p: &Packet, info: SubflowInfo) {
        if p.route % 2 == 0 {
            // Every client packet's TSval is its `ts` (its sending time).
            let ts = tsval(p.ts);
            if let Some(s) = self.sub(p.conn, p.sub) {
                s.ts_recent_server = ts;
            }
        } else {
            self.write(now, p, info);
        }
    }

    /// Build one record (IPv4 + TCP header + payload zeros up to the snap length) and
    /// write it to the file of the packet's path.
    fn write(&mut self, now: SimTime, p: &Packet, info: SubflowInfo) {
        // Path i's routes are 2i (client to server) and 2i + 1 (`Simulator::new`).
        let path = (p.route / 2) as usize;
        let to_server = p.route % 2 == 0;
        let Some(c) = self.conns.get(p.conn as usize) else { return };
        let (key_client, key_server, token_server, idsn_client, idsn_server) = (c.key_client, c.key_server, c.token_server, c.idsn_client, c.idsn_server);
        if !to_server && p.kind == PacketKind::Ack {
            let c = &mut self.conns[p.conn as usize];
            c.data_ack = p.data_ack;
            c.window_edge = p.rwnd_edge;
        }
        let (conn_data_ack, conn_edge) = (self.conns[p.conn as usize].data_ack, self.conns[p.conn as usize].window_edge);
        let Some(s) = self.sub(p.conn, p.sub) else { return };
        let mut o = Options::new();
        let (seq, ack, flags, window, payload): (u32, u32, u8, u16, u32);
        let mss_opt = (info.mss + 12).min(0xffff) as u16;
        match p.kind {
            PacketKind::Syn => {
                s.isn_client = p.seq.wrapping_sub(1);
                seq = s.isn_client;
                ack = 0;
                flags = TCP_SYN;
                window = 0xffff;
                payload = 0;
                o.syn(mss_opt, tsval(now), 0, WSCALE);
                if info.mptcp && info.initial {
                    // MP_CAPABLE on the SYN: no key in v1 (RFC 8684 §3.1, Figure 4).
                    o.put(&[OPT_MPTCP, 4, MP_CAPABLE << 4 | MPTCP_VERSION, MPC_FLAG_H]);
                } else if info.mptcp {
                    // MP_JOIN SYN: B flag, address id, receiver's token, sender's random
                    // number (RFC 8684 §3.2, Figure 5). Address id = path index + 1, the
                    // kernel backend's endpoint ids.
                    o.put(&[OPT_MPTCP, 12, MP_JOIN << 4 | info.backup as u8, (path + 1) as u8]);
                    o.put(&token_server.to_be_bytes());
                    o.put(&s.nonce_client.to_be_bytes());
                }
            }
            PacketKind::SynAck => {
                seq = s.isn_server;
                ack = s.isn_client.wrapping_add(1);
                s.ack_server = ack;
                flags = TCP_SYN | TCP_ACK;
                // The SYN-ACK's window is not scaled (RFC 7323 §2.2).
                window = p.rwnd_edge.min(0xffff) as u16;
                payload = 0;
                // The engine keeps no send time for the SYN-ACK (its `ts` echoes the
                // SYN's): its TSval is the SYN's.
                o.syn(mss_opt, tsval(p.ts), s.ts_recent_server, info.wscale);
                if info.mptcp && info.initial {
                    // MP_CAPABLE on the SYN/ACK: the listener's key (RFC 8684 §3.1).
                    o.put(&[OPT_MPTCP, 12, MP_CAPABLE << 4 | MPTCP_VERSION, MPC_FLAG_H]);
                    o.put(&key_server.to_be_bytes());
                } else if info.mptcp {
                    // MP_JOIN SYN/ACK: B flag, address id 0 (the server's one address),
                    // truncated HMAC, random number (RFC 8684 §3.2, Figure 6).
                    let (trunc, _) = join_hmacs(key_client, key_server, s.nonce_client, s.nonce_server);
                    o.put(&[OPT_MPTCP, 16, MP_JOIN << 4 | info.backup as u8, 0]);
                    o.put(&trunc);
                    o.put(&s.nonce_server.to_be_bytes());
                }
            }
            PacketKind::HandshakeAck => {
                seq = s.isn_client.wrapping_add(1);
                ack = s.isn_server.wrapping_add(1);
                flags = TCP_ACK;
                window = scaled(CLIENT_WINDOW_BYTES, WSCALE);
                payload = 0;
                o.timestamps(tsval(now), s.ts_recent_client);
                if info.mptcp && info.initial {
                    // MP_CAPABLE on the third ACK: both keys, sender's first (§3.1).
                    o.put(&[OPT_MPTCP, 20, MP_CAPABLE << 4 | MPTCP_VERSION, MPC_FLAG_H]);
                    o.put(&key_client.to_be_bytes());
                    o.put(&key_server.to_be_bytes());
                } else if info.mptcp {
                    // MP_JOIN third ACK: the sender's 160-bit HMAC (§3.2, Figure 7).
                    let (_, full) = join_hmacs(key_client, key_server, s.nonce_client, s.nonce_server);
                    o.put(&[OPT_MPTCP, 24, MP_JOIN << 4, 0]);
                    o.put(&full);
                }
            }
            PacketKind::Data => {
                seq = p.seq;
                ack = s.isn_server.wrapping_add(1);
                flags = if p.psh { TCP_ACK | TCP_PSH } else { TCP_ACK };
                window = scaled(CLIENT_WINDOW_BYTES, WSCALE);
                payload = p.len;
                o.timestamps(tsval(p.ts), s.ts_recent_client);
                if info.mptcp {
                    // DSS with a 64-bit mapping (M, m): DSN, subflow sequence number
                    // relative to the ISN, data-level length; no checksum (RFC 8684 §3.3,
                    // Figure 9). The first data byte is IDSN + 1 (Linux `write_seq =
                    // idsn + 1`). The engine's header bytes choose the layout: 20 bytes
                    // of DSS (out-of-tree accounting) hold no DATA_ACK (4 + 8 + 4 + 2 =
                    // 18, padded); 24 (upstream, as Linux sends it) add a 32-bit DATA_ACK
                    // of the server's data (none: its IDSN + 1).
                    let dsn = idsn_client.wrapping_add(1).wrapping_add(p.dsn);
                    let ssn = p.seq.wrapping_sub(s.isn_client);
                    if p.wire_bytes >= TCP_HEADER_BYTES + 24 + p.len {
                        o.put(&[OPT_MPTCP, 22, DSS << 4, DSS_A | DSS_M | DSS_M8]);
                        o.put(&(idsn_server.wrapping_add(1) as u32).to_be_bytes());
                    } else {
                        o.put(&[OPT_MPTCP, 18, DSS << 4, DSS_M | DSS_M8]);
                    }
                    o.put(&dsn.to_be_bytes());
                    o.put(&ssn.to_be_bytes());
                    o.put(&(p.len.min(0xffff) as u16).to_be_bytes());
                }
            }
            PacketKind::Ack | PacketKind::JoinAck => {
                seq = s.isn_server.wrapping_add(1);
                if p.kind == PacketKind::Ack {
                    s.ack_server = p.ack;
                }
                ack = s.ack_server;
                flags = TCP_ACK;
                let (data_ack, edge) = if p.kind == PacketKind::Ack { (p.data_ack, p.rwnd_edge) } else { (conn_data_ack, conn_edge) };
                // An MPTCP subflow advertises the connection-level window from DATA_ACK
                // (RFC 8684 §3.3.4); a plain TCP receiver its own, the same number here.
                window = scaled(edge.saturating_sub(data_ack), info.wscale);
                payload = 0;
                o.timestamps(tsval(p.ts), s.ts_recent_server);
                if info.mptcp {
                    // DSS with a 64-bit DATA_ACK (A, a), as Linux answers a peer that
                    // maps with 64-bit DSNs (`use_64bit_ack`).
                    o.put(&[OPT_MPTCP, 12, DSS << 4, DSS_A | DSS_A8]);
                    o.put(&idsn_client.wrapping_add(1).wrapping_add(data_ack).to_be_bytes());
                }
                // SACK blocks in the space left (Linux `tcp_established_options`: after
                // the MPTCP option, (remaining - 4) / 8 blocks with NOP, NOP).
                let n = (p.n_sack as usize).min(o.room().saturating_sub(4) / 8);
                if n > 0 {
                    o.nops(2);
                    o.put(&[OPT_SACK, (2 + 8 * n) as u8]);
                    for &(l, r) in &p.sack_blocks()[..n] {
                        o.put(&l.to_be_bytes());
                        o.put(&r.to_be_bytes());
                    }
                }
            }
        }
        o.align();
        // The client's TS.Recent: the server's TSval it has just received.
        if !to_server {
            s.ts_recent_client = tsval(p.ts);
        }
        let hdr = Header { seq, ack, flags, window, payload, ip_id: s.next_ip_id(to_server) };
        self.record(now, path, to_server, p.conn, p.sub, hdr, &o);
    }

    /// The engine changed a subflow's backup flag (a path manager's MP_PRIO): write the
    /// client's pure ACK with MP_PRIO, B flag, no address id (RFC 8684 §3.3.8, Figure
    /// 11), as Linux sends it (`mptcp_pm_nl_mp_prio_send_ack`). `snd_nxt`: the
    /// subflow's next sequence number.
    pub fn on_mp_prio(&mut self, now: SimTime, conn: u32, sub: u16, route_fwd: u32, snd_nxt: u32, info: SubflowInfo) {
        let Some(s) = self.sub(conn, sub) else { return };
        let mut o = Options::new();
        o.timestamps(tsval(now), s.ts_recent_client);
        o.put(&[OPT_MPTCP, 3, MP_PRIO << 4 | info.backup as u8]);
        o.align();
        let hdr = Header { seq: snd_nxt, ack: s.isn_server.wrapping_add(1), flags: TCP_ACK, window: scaled(CLIENT_WINDOW_BYTES, WSCALE), payload: 0, ip_id: s.next_ip_id(true) };
        self.record(now, (route_fwd / 2) as usize, true, conn, sub, hdr, &o);
    }

    /// Write one record: IPv4 + TCP header with `o`'s options, then payload zeros up to
    /// the snap length, to the file of `path`.
    #[allow(clippy::too_many_arguments)]
    fn record(&mut self, now: SimTime, path: usize, to_server: bool, conn: u32, sub: u16, h: Header, o: &Options) {
        let Header { seq, ack, flags, window, payload, ip_id } = h;
        let (cip, cport, sport) = (client_ip(path), CLIENT_PORT_BASE.wrapping_add((conn as u16).wrapping_mul(64)).wrapping_add(sub), SERVER_PORT_BASE.wrapping_add(conn as u16));
        let (src, dst, srcp, dstp) = if to_server { (cip, SERVER_IP, cport, sport) } else { (SERVER_IP, cip, sport, cport) };
        let tcp_hdr = 20 + o.n;
        let tcp_len = tcp_hdr as u32 + payload;
        let total = 20 + tcp_len;
        let b = &mut self.buf;
        b.clear();
        // Record header: seconds, nanoseconds, captured length, original length.
        let incl = total.min(SNAPLEN);
        b.extend_from_slice(&((now.ns() / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((now.ns() % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&incl.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        // IPv4 header (RFC 791 §3.1): no options, DF set, TTL 64, protocol 6.
        let ip0 = b.len();
        b.extend_from_slice(&[0x45, 0]);
        b.extend_from_slice(&(total.min(0xffff) as u16).to_be_bytes());
        b.extend_from_slice(&ip_id.to_be_bytes());
        b.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]);
        b.extend_from_slice(&src);
        b.extend_from_slice(&dst);
        let ipsum = checksum_fold(checksum_add(0, &b[ip0..ip0 + 20]));
        b[ip0 + 10..ip0 + 12].copy_from_slice(&ipsum.to_be_bytes());
        // TCP header (RFC 9293 §3.1).
        let t0 = b.len();
        b.extend_from_slice(&srcp.to_be_bytes());
        b.extend_from_slice(&dstp.to_be_bytes());
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(&ack.to_be_bytes());
        b.extend_from_slice(&[((tcp_hdr / 4) as u8) << 4, flags]);
        b.extend_from_slice(&window.to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&o.b[..o.n]);
        // Checksum over the pseudo-header (RFC 9293 §3.1) and the segment; the payload is
        // zeros, which add nothing, so the header alone gives the full segment's sum.
        let mut sum = checksum_add(0, &src);
        sum = checksum_add(sum, &dst);
        sum += 6 + tcp_len;
        sum = checksum_add(sum, &b[t0..t0 + tcp_hdr]);
        let tsum = checksum_fold(sum);
        b[t0 + 16..t0 + 18].copy_from_slice(&tsum.to_be_bytes());
        // Payload: zeros up to the snap length (the engine's payload is a length).
        let keep = (incl as usize + 16).saturating_sub(b.len());
        b.resize(b.len() + keep, 0);
        let rec = std::mem::take(&mut self.buf);
        if self.emit(path, &rec) {
            // (emit found the sink: the index is in range.)
            self.sinks[path].records += 1;
        }
        self.buf = rec;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_and_idsn_are_the_ends_of_sha256_of_the_key() {
        // SHA-256 of eight zero bytes is af5570f5 a1810b7a f78caf4b c70a660f 0df51e42
        // baf91d4d e5b2328d e0e83dfc (computed independently with Python's hashlib).
        let (token, idsn) = token_and_idsn(0);
        assert_eq!(token, 0xaf55_70f5);
        assert_eq!(idsn, 0xe5b2_328d_e0e8_3dfc);
    }

    #[test]
    fn join_hmacs_follow_rfc_8684_key_and_nonce_order() {
        // Python: hmac.new(bytes.fromhex(kb+ka), bytes.fromhex(rb+ra), 'sha256')
        let (trunc, full) = join_hmacs(0x0102030405060708, 0x1112131415161718, 0x21222324, 0x31323334);
        let b = hmac256(&[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 1, 2, 3, 4, 5, 6, 7, 8], &[0x31, 0x32, 0x33, 0x34, 0x21, 0x22, 0x23, 0x24]);
        assert_eq!(trunc[..], b[..8]);
        let a = hmac256(&[1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18], &[0x21, 0x22, 0x23, 0x24, 0x31, 0x32, 0x33, 0x34]);
        assert_eq!(full[..], a[..20]);
        assert_ne!(trunc[..], full[..8]);
        // Known answer from Python's hmac module (key Kb+Ka, message Rb+Ra).
        assert_eq!(trunc, [0x0f, 0xce, 0x25, 0x97, 0xe5, 0x5e, 0x87, 0xef]);
    }

    /// A sink the test reads back.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> { Ok(()) }
    }

    #[test]
    fn the_data_segments_dss_fills_the_header_bytes_the_engine_charged() {
        let json = r#"{"name": "t", "links": [{"name": "l", "rate": "10 Mbit/s", "delay": "5 ms"}],
            "paths": [{"name": "p", "links": ["l"]}], "connections": [{"name": "c", "paths": ["p"]}]}"#;
        let plan = crate::Scenario::from_json(json).unwrap().plan().unwrap();
        let sink = Shared::default();
        let mut w = PcapWriter::new(&plan, 1, vec![Box::new(sink.clone())]);
        let info = SubflowInfo { mptcp: true, initial: true, backup: false, mss: 1448, wscale: WSCALE };
        let mut syn = Packet::new(PacketKind::Syn, 0, 0, 0, 60);
        syn.seq = 1000;
        w.on_send(SimTime::ZERO, &syn, info);
        let mut sizes = Vec::new();
        for dss in [20, 24] {
            let mut d = Packet::new(PacketKind::Data, 0, 0, 0, TCP_HEADER_BYTES + dss + 1448);
            (d.seq, d.len) = (1000, 1448);
            w.on_send(SimTime::from_ms(1), &d, info);
            let file = sink.0.lock().unwrap().clone();
            let rec = &file[file.len() - SNAPLEN as usize..];
            let orig = u32::from_le_bytes(file[file.len() - 132..file.len() - 128].try_into().unwrap());
            let thl = (rec[32] >> 4) as usize * 4;
            // NOP NOP TS(10), then the DSS: kind, length, subtype, flags
            assert_eq!(&rec[40..44], &[1, 1, 8, 10]);
            let (len, flags) = (rec[53], rec[55]);
            sizes.push((orig, thl, len, flags));
        }
        // 20 bytes: M, m (no DATA_ACK); 24: A as well (32-bit DATA_ACK), as Linux sends it
        assert_eq!(sizes, vec![(20 + 52 + 1448, 52, 18, 0x0c), (20 + 56 + 1448, 56, 22, 0x0d)]);
    }

    #[test]
    fn checksum_of_a_header_with_its_checksum_is_zero() {
        let mut h = [0x45, 0, 0, 0x54, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 100, 0, 1, 10, 200, 0, 1];
        let s = checksum_fold(checksum_add(0, &h));
        h[10..12].copy_from_slice(&s.to_be_bytes());
        assert_eq!(checksum_fold(checksum_add(0, &h)), 0);
        // RFC 1071 §3 example: words 0001 f203 f4f5 f6f7 sum to ddf2 (checksum 220d).
        assert_eq!(checksum_fold(checksum_add(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), 0x220d);
    }
}
