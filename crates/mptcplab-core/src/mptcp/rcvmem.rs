//! Receive memory of upstream Linux 6.x MPTCP (`tcp.receive_memory = "skb"`, the
//! `upstream` profile's default): what the kernel charges for received data, how it
//! turns that into a window, and when it refuses to take more.
//!
//! Rules M1-M4 and M7 of docs/research/upstream-receive-deadlock-measured.md (measured
//! on this project's Linux 6.18.44 with bpftrace, `ss -tmiM` and pcaps), each with the
//! kernel function it follows:
//!
//! - M1: every received segment is an skb charged its truesize, a kmalloc bucket
//!   (`truesize`); an out-of-order skb that fits the tailroom of its DSN predecessor is
//!   merged into it at no cost (`mptcp_ooo_try_coalesce` -> `skb_try_coalesce`).
//! - M2: the window is the free memory times the payload/truesize ratio, aligned to the
//!   window scale (`mptcp_space`, `__tcp_win_from_space`, `__tcp_select_window`).
//! - M3/M4: the MPTCP socket takes an skb from a subflow only while its own memory is
//!   at most `sk_rcvbuf`, whether or not that skb fills its hole
//!   (`__mptcp_move_skbs_from_subflow`); the reader drains only in-order data, so memory
//!   above the buffer with nothing in order never falls (the connection's deadlock).
//! - M7: a subflow over its own `sk_rcvbuf` drops what arrives (`tcp_data_queue`,
//!   `tcp_data_queue_ofo`, `tcp_try_rmem_schedule`, `tcp_can_ingest`); the caller does
//!   that with `Admission`.

use crate::tcp::seq::before;
use std::collections::{BTreeMap, VecDeque};

/// `sizeof(struct skb_shared_info)` after `SKB_DATA_ALIGN` plus the headroom and
/// headers a received segment uses in its head, on x86-64: the payload a kmalloc
/// bucket of 2^k bytes holds is 2^k - 426. Measured (5.1 of the note, ~87 000
/// segments): 152..=592 B payload take the 1 280-B truesize, 604..=1 424 B the 2 304-B
/// one, so the per-skb overhead is between 420 and 432 B; 426 is the middle.
const HEAD_OVERHEAD: u32 = 426;
/// `SKB_TRUESIZE` adds `sizeof(struct sk_buff)` rounded, 256 B, to the bucket.
const SKB_STRUCT: u32 = 256;
/// Measured: payloads of 4..=148 B cost 832 B (a smaller head allocation).
const SMALL_PAYLOAD: u32 = 150;
const SMALL_TRUESIZE: u32 = 832;

/// Truesize and payload capacity of the skb a segment of `len` payload bytes arrives
/// in (M1; `__alloc_skb` rounds the head to a kmalloc bucket, `SKB_TRUESIZE`).
pub fn skb_size(len: u32) -> (u32, u32) {
    if len <= SMALL_PAYLOAD {
        return (SMALL_TRUESIZE, SMALL_PAYLOAD);
    }
    let bucket = (len + HEAD_OVERHEAD).next_power_of_two().max(1024);
    (bucket + SKB_STRUCT, bucket - HEAD_OVERHEAD)
}

/// Truesize of a received segment of `len` payload bytes.
pub fn truesize(len: u32) -> u32 { skb_size(len).0 }

/// `TCP_RMEM_TO_WIN_SCALE`: the scaling ratio is a fraction of 256.
const WIN_SCALE_SHIFT: u32 = 8;
/// `net.ipv4.tcp_rmem[2]`: the receive buffer when the application sets none.
pub const TCP_RMEM_MAX: u64 = 6 * 1024 * 1024;
/// `net.core.rmem_max` default.
const RMEM_MAX: u64 = 212_992;

/// `sk_rcvbuf` of a connection whose scenario gives `receive_buffer` (`locked`) under
/// `accounting`: twice the SO_RCVBUF the kernel backend sets for it (socket(7); the
/// calibration of python/mptcplab/kernel/plan.py `so_rcvbuf_for`: payload bytes / (2 x
/// 157/256), rounded half to even as Python's `round`; "linux": half the buffer). With
/// no `receive_buffer`, tcp_rmem[2] (auto-tuning is not modelled: gap
/// `receive_buffer_autotuning`).
pub fn sk_rcvbuf(receive_buffer: u64, accounting: crate::tcp::BufferAccounting, locked: bool) -> u64 {
    if !locked {
        return TCP_RMEM_MAX;
    }
    let so_rcvbuf = match accounting {
        crate::tcp::BufferAccounting::Linux => (receive_buffer / 2).max(1),
        crate::tcp::BufferAccounting::Payload => ((receive_buffer as f64 / (2.0 * 157.0 / 256.0)).round_ties_even() as u64).max(1),
    };
    2 * so_rcvbuf
}

/// One skb in the MPTCP socket's out-of-order queue: DSN end, payload, truesize and
/// payload capacity (for coalescing).
#[derive(Clone, Copy, Debug)]
struct OfoSkb {
    end: u64,
    len: u32,
    truesize: u32,
    cap: u32,
}

/// The MPTCP socket's receive memory (`sk_rmem_alloc` of the msk) and its window.
#[derive(Clone, Debug)]
pub struct RcvMem {
    /// `sk_rcvbuf` in truesize bytes (twice SO_RCVBUF, or tcp_rmem[2]).
    pub sk_rcvbuf: u64,
    /// `tcp_sock.scaling_ratio`: payload per truesize, in 1/256.
    pub scaling_ratio: u64,
    /// `icsk_ack.rcv_mss`.
    pub rcv_mss: u64,
    /// `rcv_wscale` from `tcp_select_initial_window`.
    pub rcv_wscale: u32,
    /// `sk_rmem_alloc` of the MPTCP socket.
    pub rmem: u64,
    ofo: BTreeMap<u64, OfoSkb>,
    /// In-order skbs not read yet: (DSN end, truesize).
    inq: VecDeque<(u64, u32)>,
    /// Out-of-order skbs merged into a predecessor (`MPTCP_MIB_OFOMERGE`).
    pub ofo_merged: u64,
}

impl RcvMem {
    /// `sk_rcvbuf` = `sk_rcvbuf` bytes, `locked` when the application set SO_RCVBUF;
    /// `mss` the payload of a full segment.
    pub fn new(sk_rcvbuf: u64, locked: bool, mss: u32) -> RcvMem {
        // `tcp_measure_rcv_mss`: scaling_ratio = len * 256 / truesize of a full segment.
        let scaling_ratio = ((mss as u64) << WIN_SCALE_SHIFT) / truesize(mss) as u64;
        let full = (sk_rcvbuf * scaling_ratio) >> WIN_SCALE_SHIFT;
        // `tcp_select_initial_window`: space = max(tcp_rmem[2], rmem_max) capped by the
        // window clamp, which a locked SO_RCVBUF sets to the full space
        // (`tcp_openreq_init_rwin`); rcv_wscale = ilog2(space) - 15, in 0..=14.
        let space = if locked { TCP_RMEM_MAX.max(RMEM_MAX).min(full) } else { TCP_RMEM_MAX.max(RMEM_MAX) };
        let ilog2 = 63 - space.max(1).leading_zeros() as i64;
        let rcv_wscale = (ilog2 - 15).clamp(0, 14) as u32;
        RcvMem { sk_rcvbuf, scaling_ratio, rcv_mss: mss as u64, rcv_wscale, rmem: 0, ofo: BTreeMap::new(), inq: VecDeque::new(), ofo_merged: 0 }
    }

    /// M3: the MPTCP socket takes another skb from a subflow only while this is false
    /// (`__mptcp_move_skbs_from_subflow`, `__mptcp_move_skbs`: `sk_rmem_alloc >
    /// sk_rcvbuf` stops the pull, before the skb is looked at).
    pub fn over(&self) -> bool { self.rmem > self.sk_rcvbuf }

    /// M2: the window to advertise (`__tcp_select_window` with `mptcp_space`): the free
    /// memory times the scaling ratio; below half the full window it is rounded down to
    /// the scale and is 0 under 1/16 of the full window or under one MSS; it is then
    /// aligned up to the scale.
    pub fn window(&self) -> u64 {
        let mut free = self.space();
        let allowed = self.full_space();
        let unit = 1u64 << self.rcv_wscale;
        if free < allowed / 2 {
            free -= free % unit;
            if free < allowed >> 4 || free < self.rcv_mss {
                return 0;
            }
        }
        free.div_ceil(unit) * unit
    }

    /// `__mptcp_space`: the free memory times the scaling ratio, unrounded (0 when over).
    pub fn space(&self) -> u64 { (self.sk_rcvbuf.saturating_sub(self.rmem) * self.scaling_ratio) >> WIN_SCALE_SHIFT }

    /// `tcp_full_space`: the whole buffer times the scaling ratio.
    fn full_space(&self) -> u64 { (self.sk_rcvbuf * self.scaling_ratio) >> WIN_SCALE_SHIFT }

    /// `__tcp_select_window`'s "free_space < full_space / 2" (which also ends the quick
    /// ACKs, `icsk_ack.quick = 0`).
    pub fn below_half(&self) -> bool { self.space() < self.full_space() / 2 }

    /// An skb [dsn, dsn + len) of truesize `truesize` moves into the MPTCP socket, whose
    /// in-order point was `rcv_nxt` before and is `rcv_nxt_after` after (the caller's
    /// `MetaReceiver` does the byte ranges). In order: queued for the reader, and the
    /// out-of-order skbs it reaches follow it (`__mptcp_ofo_queue`). Out of order:
    /// `mptcp_data_queue_ofo`: dropped when its bytes are all there, merged into its DSN
    /// predecessor when it fits its tailroom, else inserted, replacing the skbs it covers.
    pub fn enter(&mut self, dsn: u64, len: u32, truesize: u32, cap: u32, rcv_nxt: u64, rcv_nxt_after: u64) {
        let end = dsn + len as u64;
        if end <= rcv_nxt {
            return; // old data: dropped (MPTCP_MIB_DUPDATA), never charged
        }
        if dsn <= rcv_nxt {
            self.rmem += truesize as u64;
            self.inq.push_back((end, truesize));
            // `__mptcp_ofo_queue`: skbs now at or below the in-order point move to the
            // receive queue with their charge, or are freed when wholly old.
            while let Some((&s, &skb)) = self.ofo.iter().next() {
                if s > rcv_nxt_after {
                    break;
                }
                self.ofo.remove(&s);
                if skb.end <= end {
                    self.rmem -= skb.truesize as u64;
                } else {
                    self.inq.push_back((skb.end, skb.truesize));
                }
            }
            return;
        }
        if let Some((_, skb)) = self.ofo.range(..=dsn).next_back() {
            if skb.end >= end {
                return; // all the bits are present: dropped
            }
        }
        if let Some((_, pred)) = self.ofo.range_mut(..dsn).next_back() {
            if pred.end == dsn && len <= pred.cap - pred.len {
                pred.end = end;
                pred.len += len;
                self.ofo_merged += 1;
                return;
            }
        }
        // Insert; skbs that start inside it and end within it are freed (`merge_right`).
        while let Some(k) = self.ofo.range(dsn..end).find(|(_, s)| s.end <= end).map(|(&k, _)| k) {
            if let Some(s) = self.ofo.remove(&k) {
                self.rmem -= s.truesize as u64;
            }
        }
        self.ofo.insert(dsn, OfoSkb { end, len, truesize, cap });
        self.rmem += truesize as u64;
    }

    /// The reader consumed everything before DSN `consumed`: skbs wholly read are freed.
    pub fn consumed(&mut self, consumed: u64) {
        while let Some(&(end, t)) = self.inq.front() {
            if end > consumed {
                break;
            }
            self.inq.pop_front();
            self.rmem -= t as u64;
        }
    }
}

/// An skb a subflow holds until the MPTCP socket pulls it.
#[derive(Clone, Copy, Debug)]
pub struct HeldSkb {
    pub seq: u32,
    pub len: u32,
    pub dsn: u64,
    pub truesize: u32,
    pub cap: u32,
}

/// A subflow's receive queue under Linux receive memory: the skbs it received and the
/// MPTCP socket has not pulled yet, in subflow sequence order (`sk_receive_queue` and its
/// out-of-order queue as one), and their truesize (the subflow's `sk_rmem_alloc`). The
/// connection admits a segment (M7), holds it, and pulls the in-order head into the
/// MPTCP socket (M3, `__mptcp_move_skbs_from_subflow`).
#[derive(Clone, Debug, Default)]
pub struct HeldQueue {
    skbs: VecDeque<HeldSkb>,
    mem: u64,
}

impl HeldQueue {
    /// Truesize bytes held (`sk_rmem_alloc`).
    #[inline]
    pub fn mem(&self) -> u64 { self.mem }

    pub fn len(&self) -> usize { self.skbs.len() }

    pub fn is_empty(&self) -> bool { self.skbs.is_empty() }

    pub fn iter(&self) -> impl Iterator<Item = &HeldSkb> { self.skbs.iter() }

    /// The head skb if it is in order for a subflow whose `rcv_nxt` is given (it starts
    /// before `rcv_nxt`), i.e. the MPTCP socket may pull it.
    #[inline]
    pub fn in_order_head(&self, rcv_nxt: u32) -> Option<HeldSkb> {
        self.skbs.front().copied().filter(|h| before(h.seq, rcv_nxt))
    }

    /// M7 for a segment that brings new data: whether the subflow takes it, against its
    /// `sk_rcvbuf` (`admission`; in-order data waiting to be pulled counts).
    pub fn admit(&self, sk_rcvbuf: u64, in_sequence: bool, rcv_nxt: u32) -> Admission {
        admission(self.mem, sk_rcvbuf, in_sequence, self.in_order_head(rcv_nxt).is_some())
    }

    /// Hold a new skb (subflow sequence `seq`, `len` payload bytes, DSN `dsn`) at its
    /// place in subflow sequence order, charged its truesize (M1).
    pub fn hold(&mut self, seq: u32, len: u32, dsn: u64) {
        let (truesize, cap) = skb_size(len);
        let pos = self.skbs.iter().rposition(|h| before(h.seq, seq)).map_or(0, |p| p + 1);
        self.skbs.insert(pos, HeldSkb { seq, len, dsn, truesize, cap });
        self.mem += truesize as u64;
    }

    /// Take the head skb out (the MPTCP socket pulled it): its truesize is uncharged.
    #[inline]
    pub fn pop(&mut self) -> Option<HeldSkb> {
        let h = self.skbs.pop_front()?;
        self.mem -= h.truesize as u64;
        Some(h)
    }
}

/// M7: what a subflow over its `sk_rcvbuf` does with an arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Take,
    /// In sequence with a non-empty receive queue: dropped, `TCPRcvQDrop`, and the
    /// receiver ACKs at once (`tcp_data_queue`: `tcp_try_rmem_schedule` fails).
    DropInSequence,
    /// Out of order: dropped, `TCPOFODrop`, no ACK (`tcp_data_queue_ofo`).
    DropOutOfOrder,
}

/// `tcp_data_queue` / `tcp_data_queue_ofo` for a subflow holding `held` truesize bytes
/// against `sk_rcvbuf`: an in-sequence segment is always taken when nothing in order
/// waits (`sk_forced_mem_schedule`); otherwise `tcp_can_ingest` (rmem <= rcvbuf)
/// decides. Pruning (`tcp_prune_queue`) never rescued a segment in the measured runs
/// (`PruneCalled == RcvPruned`), so it is not modelled.
pub fn admission(held: u64, sk_rcvbuf: u64, in_sequence: bool, in_order_waiting: bool) -> Admission {
    if held <= sk_rcvbuf || (in_sequence && !in_order_waiting) {
        Admission::Take
    } else if in_sequence {
        Admission::DropInSequence
    } else {
        Admission::DropOutOfOrder
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subflows_queue_keeps_sequence_order_charges_truesize_and_yields_only_its_in_order_head() {
        let mut q = HeldQueue::default();
        // Arrivals out of order, across the 32-bit wrap of the subflow sequence space.
        let base = u32::MAX - 2_000;
        q.hold(base.wrapping_add(2 * 1424), 1424, 30_000);
        q.hold(base, 1424, 10_000);
        q.hold(base.wrapping_add(1424), 100, 20_000);
        let seqs: Vec<u32> = q.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, vec![base, base.wrapping_add(1424), base.wrapping_add(2 * 1424)], "sequence order across the wrap");
        assert_eq!(q.mem(), 2 * 2304 + 832, "truesize buckets: 2 304 for 1 424 B, 832 for 100 B");
        assert!(q.in_order_head(base).is_none(), "nothing before rcv_nxt = the head's seq");
        assert_eq!(q.in_order_head(base.wrapping_add(1)).map(|h| h.dsn), Some(10_000));
        assert_eq!(q.pop().map(|h| h.dsn), Some(10_000));
        assert_eq!((q.len(), q.mem()), (2, 2304 + 832));
        assert!(q.pop().is_some() && q.pop().is_some() && q.pop().is_none());
        assert!(q.is_empty() && q.mem() == 0);
    }

    #[test]
    fn a_subflow_over_its_buffer_drops_unless_the_segment_is_in_sequence_with_nothing_waiting() {
        let mut q = HeldQueue::default();
        q.hold(5_000, 1424, 0); // out of order for rcv_nxt = 1_000
        assert_eq!(q.admit(1_000, false, 1_000), Admission::DropOutOfOrder, "2 304 > 1 000: over");
        assert_eq!(q.admit(1_000, true, 1_000), Admission::Take, "in sequence, nothing in order waits");
        assert_eq!(q.admit(1_000, true, 6_000), Admission::DropInSequence, "in sequence, but the head waits");
        assert_eq!(q.admit(4_000, false, 6_000), Admission::Take, "under its buffer");
    }

    #[test]
    fn truesize_follows_the_measured_buckets() {
        // Note 5.1: 4..=148 -> 832, 152..=592 -> 1 280, 604..=1 424 -> 2 304.
        for (len, t) in [(4, 832), (148, 832), (152, 1280), (592, 1280), (604, 2304), (1424, 2304), (1448, 2304)] {
            assert_eq!(truesize(len), t, "payload {len}");
        }
        // The tailroom of a full 1 424-B skb is about 200 B (note M1).
        let (_, cap) = skb_size(1424);
        assert!((190..=210).contains(&(cap - 1424)), "tailroom {}", cap - 1424);
    }

    /// SO_RCVBUF 163 057 (the kernel backend's 200 KB), so sk_rcvbuf = 326 114.
    fn mem() -> RcvMem { RcvMem::new(326_114, true, 1424) }

    #[test]
    fn the_window_matches_the_measured_ones() {
        let mut m = mem();
        assert_eq!(m.scaling_ratio, 158, "1 424 * 256 / 2 304");
        assert_eq!(m.rcv_wscale, 2);
        // Note 5.1: W = 200 760 / 200 484 with 832 / 1 280 B held. (Its third reading,
        // 199 060 with 3 584 B held, is 4 B under this rule's 199 064: the rule needs
        // 3 586..=3 592 B held for it, so that reading's memory figure was not the one
        // the window was computed from.)
        for (held, w) in [(832, 200_760), (1280, 200_484), (3584, 199_064)] {
            m.rmem = held;
            assert_eq!(m.window(), w, "held {held}");
        }
        m.rmem = 326_114 - 1000;
        assert_eq!(m.window(), 0, "under one MSS of free space");
        m.rmem = 326_144;
        assert_eq!(m.window(), 0);
        assert!(m.over());
    }

    #[test]
    fn a_full_window_of_out_of_order_skbs_can_end_over_the_buffer() {
        // The deadlock fill (note 5.2): 141 full skbs and one of the 1 280-B bucket,
        // out of order behind a hole at DSN 0: 326 144 = sk_rcvbuf + 30.
        let mut m = mem();
        let mut dsn = 1424;
        for _ in 0..141 {
            let (t, c) = skb_size(1424);
            m.enter(dsn, 1424, t, c, 0, 0);
            dsn += 1424;
        }
        assert_eq!(m.rmem, 141 * 2304);
        assert!(!m.over(), "141 full skbs: 1 250 B under, the clean fill");
        // A 400-B segment that does not start where its predecessor ends: no merge.
        let (t, c) = skb_size(400);
        m.enter(dsn + 1000, 400, t, c, 0, 0);
        assert_eq!(m.rmem, 326_144);
        assert!(m.over(), "the deadlocked fill");
        assert_eq!(m.window(), 0);
    }

    #[test]
    fn a_small_out_of_order_skb_merges_into_its_predecessor_for_free() {
        let mut m = mem();
        let (t, c) = skb_size(1424);
        m.enter(2000, 1424, t, c, 0, 0);
        let (t4, c4) = skb_size(4);
        m.enter(3424, 4, t4, c4, 0, 0);
        assert_eq!((m.rmem, m.ofo_merged), (2304, 1), "merged into the tailroom");
        let (t3, c3) = skb_size(600);
        m.enter(3428, 600, t3, c3, 0, 0);
        assert_eq!((m.rmem, m.ofo_merged), (2304 + 2304, 1), "600 B do not fit 196 B of tailroom");
        // A duplicate is dropped uncharged; the hole filler drains all of it in order.
        m.enter(2000, 1424, t, c, 0, 0);
        assert_eq!(m.rmem, 4608);
        let (th, ch) = skb_size(1424);
        m.enter(0, 1424, th, ch, 0, 4028);
        assert_eq!(m.rmem, 3 * 2304);
        m.consumed(3424);
        assert_eq!(m.rmem, 2 * 2304, "the read frees whole skbs only");
        m.consumed(4028);
        assert_eq!(m.rmem, 0);
    }

    #[test]
    fn the_buffer_is_twice_the_kernel_backends_so_rcvbuf() {
        use crate::tcp::BufferAccounting::*;
        // docs/research: "rb326114 on all four subflows and the msk" for 200 KB.
        assert_eq!(sk_rcvbuf(200_000, Payload, true), 326_114);
        assert_eq!(sk_rcvbuf(200_000, Linux, true), 200_000);
        assert_eq!(sk_rcvbuf(200_000, Payload, false), TCP_RMEM_MAX);
    }

    #[test]
    fn admission_drops_only_over_the_buffer_and_forces_the_first_in_order_skb() {
        assert_eq!(admission(326_114, 326_114, true, true), Admission::Take);
        assert_eq!(admission(326_115, 326_114, true, true), Admission::DropInSequence);
        assert_eq!(admission(326_115, 326_114, true, false), Admission::Take);
        assert_eq!(admission(326_115, 326_114, false, false), Admission::DropOutOfOrder);
    }
}
