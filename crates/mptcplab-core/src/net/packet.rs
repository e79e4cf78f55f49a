//! Packets are small values: the payload is a length, never bytes.

use crate::units::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// SYN (MP_CAPABLE on the initial subflow, MP_JOIN on the others).
    Syn,
    SynAck,
    /// Third handshake ACK.
    HandshakeAck,
    /// MP_JOIN's fourth ACK (server to client): the join is fully established.
    JoinAck,
    Data,
    Ack,
}

/// Up to this many SACK blocks per ACK (Linux sends 3 with timestamps, RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: PacketKind,
    pub conn: u32,
    pub sub: u16,
    /// Index of the hop (link direction) within the route the packet is on.
    pub hop: u16,
    /// Route id (data routes and ACK routes are both in the world's route table).
    pub route: u32,
    /// Bytes on the wire, headers included.
    pub wire_bytes: u32,
    /// Data: first subflow sequence number and payload length.
    pub seq: u32,
    pub len: u32,
    /// Data: data sequence number of the first payload byte (DSS mapping).
    pub dsn: u64,
    /// Data: transmission time (TSval); ACK: echoed time of the segment that triggered it.
    pub ts: SimTime,
    /// ACK: cumulative subflow ACK.
    pub ack: u32,
    /// ACK: DATA_ACK and the connection-level right window edge (RFC 8684 §3.3.4).
    pub data_ack: u64,
    pub rwnd_edge: u64,
    pub n_sack: u8,
    /// Data: this is a retransmission (subflow level); for traces and statistics only.
    pub retrans: bool,
    /// Data: the PSH flag. Linux marks the last skb of each push (`tcp_push` ->
    /// `tcp_mark_push`); a receiver that sees it on a full segment, or any short one,
    /// ACKs once the reader has drained it (`tcp_measure_rcv_mss`, `__tcp_cleanup_rbuf`).
    pub psh: bool,
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn new(kind: PacketKind, conn: u32, sub: u16, route: u32, wire_bytes: u32) -> Packet {
        Packet {
            kind,
            conn,
            sub,
            hop: 0,
            route,
            wire_bytes,
            seq: 0,
            len: 0,
            dsn: 0,
            ts: SimTime::ZERO,
            ack: 0,
            data_ack: 0,
            rwnd_edge: 0,
            n_sack: 0,
            retrans: false,
            psh: false,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }
    pub fn sack_blocks(&self) -> &[(u32, u32)] { &self.sack[..self.n_sack as usize] }
}
