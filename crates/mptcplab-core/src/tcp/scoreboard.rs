//! The sender's scoreboard (RFC 6675 §3; Linux's retransmission queue with the
//! `tcp_skb_cb.sacked` bits): every segment sent and not cumulatively acknowledged, in
//! sequence order, each marked SACKed, lost and/or retransmitted, with the counters Linux
//! keeps of them (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`) and the cursors
//! that keep each walk short. It knows sequence numbers, not time or congestion control:
//! the sender (`tcp::sender`) decides what is lost and what leaves; the scoreboard keeps
//! the books. Reference `tcp.md` §1.2-1.4.

use super::seq::{after, before, off};
use crate::units::SimTime;
use std::collections::VecDeque;

const _: () = assert!(std::mem::size_of::<Seg>() == 48);

pub(super) const SACKED: u8 = 1;
pub(super) const LOST: u8 = 2;
/// Retransmitted and not yet known lost again (Linux `TCPCB_SACKED_RETRANS`).
pub(super) const RETRANS: u8 = 4;
pub(super) const EVER_RETRANS: u8 = 8;
/// Sent while the sender was application-limited (Linux `tx.is_app_limited`).
pub(super) const APP_LIMITED: u8 = 16;
/// Already counted by a delivery-rate sample (Linux clears `tx.delivered_mstamp`).
pub(super) const RATE_DONE: u8 = 32;
/// SACK blocks remembered from one ACK to the next (Linux sends at most 3, RFC 2018).
const SACK_SEEN: usize = 4;
/// A scoreboard keeps room for this many segments however few are out.
const SEGS_FLOOR: usize = 32;

/// One segment on the scoreboard. 48 bytes (issue 14: with 1 000 connections in slow
/// start the scoreboards held 290 000 of them).
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub seq: u32,
    pub len: u32,
    pub dsn: u64,
    pub sent_at: SimTime,
    /// Delivery-rate snapshot at send time (Linux `tcp_skb_cb.tx`, `tcp_rate_skb_sent`).
    pub(super) tx_delivered_at: SimTime,
    pub(super) tx_first_tx_at: SimTime,
    /// The sender's `delivered` count at send time, its low 32 bits, as Linux keeps it
    /// (`tx.delivered` is a u32). Fewer than 2^31 segments are delivered while one is
    /// out (its sequence space is smaller), so `tx_delivered` gets the full count back.
    tx_delivered_lo: u32,
    pub(super) flags: u8,
}

impl Seg {
    /// A new segment, sent at `now`, with no rate stamp yet.
    pub(super) fn new(seq: u32, len: u32, dsn: u64, now: SimTime) -> Seg {
        Seg { seq, len, dsn, sent_at: now, tx_delivered_lo: 0, tx_delivered_at: now, tx_first_tx_at: now, flags: 0 }
    }

    /// The sender's `delivered` count when the segment was sent, given the count now
    /// (`delivered_now` >= that, by less than 2^32).
    #[inline]
    pub(super) fn tx_delivered(&self, delivered_now: u64) -> u64 {
        delivered_now - (delivered_now as u32).wrapping_sub(self.tx_delivered_lo) as u64
    }

    /// Sent with a later `delivered` count than `other` (Linux `tcp_rate_skb_delivered`:
    /// `after(scb->tx.delivered, rs->prior_delivered)`, serial arithmetic on the u32).
    #[inline]
    pub(super) fn delivered_after(&self, other: &Seg) -> bool { (self.tx_delivered_lo.wrapping_sub(other.tx_delivered_lo) as i32) > 0 }

    pub fn sacked(&self) -> bool { self.flags & SACKED != 0 }

    /// The sequence number after the segment.
    fn end(&self) -> u32 { self.seq.wrapping_add(self.len) }

    /// Linux `tcp_rate_skb_sent`: the delivery state the packet leaves with.
    pub(super) fn stamp_rate(&mut self, r: RateStamp) {
        self.tx_delivered_lo = r.delivered as u32;
        self.tx_delivered_at = r.delivered_at;
        self.tx_first_tx_at = r.first_tx_at;
        self.flags &= !(APP_LIMITED | RATE_DONE);
        if r.app_limited {
            self.flags |= APP_LIMITED;
        }
    }
}

/// The sender's delivery-rate state at a send (`Seg::stamp_rate`).
#[derive(Clone, Copy)]
pub(super) struct RateStamp {
    pub(super) delivered: u64,
    pub(super) delivered_at: SimTime,
    pub(super) first_tx_at: SimTime,
    pub(super) app_limited: bool,
}

/// What a cumulative ACK took off the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CumAcked {
    /// Segments acked that were not SACKed before (newly delivered).
    pub delivered: u32,
    pub bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    pub(super) segs: VecDeque<Seg>,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Cursors: segments before `retx_hint` have no retransmission pending; those before
    /// `lost_hint` need no loss marking.
    pub(super) retx_hint: usize,
    pub(super) lost_hint: usize,
    /// One past the highest SACKed segment (0: none): `mark_lost` scans down from here
    /// instead of from the tail, which is the last RTT's unSACKed flight.
    pub(super) sacked_end: usize,
    /// The first segment RACK's scan of originals needs: every one before it is SACKed or
    /// already lost (Linux removes those from the time-sorted list, `tcp_tsorted_anchor`).
    pub(super) rack_hint: usize,
    /// The SACK blocks of the previous ACK that were walked in full, as (start, end):
    /// every segment inside one is SACKed (flags are never cleared and later segments
    /// start beyond them), so the next ACK's walk jumps over them. `n_seen` are valid.
    sack_seen: [(u32, u32); SACK_SEEN],
    n_seen: usize,
    /// Sequence numbers of retransmissions in the order they were sent.
    pub(super) retrans_fifo: VecDeque<u32>,
}

impl Scoreboard {
    pub fn new() -> Scoreboard { Scoreboard::default() }

    /// Linux `tcp_packets_in_flight`.
    #[inline]
    pub fn in_flight(&self) -> u32 { self.packets_out - (self.sacked_out + self.lost_out) + self.retrans_out }

    #[inline]
    pub fn len(&self) -> usize { self.segs.len() }

    #[inline]
    pub fn is_empty(&self) -> bool { self.segs.is_empty() }

    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &Seg> { self.segs.iter() }

    /// The segment starting at `seq` (Ok) or where one would go (Err); `snd_una` is the
    /// sequence space's origin.
    #[inline]
    pub(super) fn index_of(&self, snd_una: u32, seq: u32) -> Result<usize, usize> {
        self.segs.binary_search_by(|s| off(s.seq, snd_una).cmp(&off(seq, snd_una)))
    }

    /// A segment leaves for the first time.
    #[inline]
    pub(super) fn push(&mut self, seg: Seg) {
        self.segs.push_back(seg);
        self.packets_out += 1;
    }

    /// Index of the first segment marked lost and not yet retransmitted.
    #[inline]
    pub fn next_retransmit(&mut self) -> Option<usize> {
        if self.lost_out <= self.retrans_out {
            return None;
        }
        while self.retx_hint < self.segs.len() {
            let f = self.segs[self.retx_hint].flags;
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                return Some(self.retx_hint);
            }
            self.retx_hint += 1;
        }
        None
    }

    /// Segment `idx` was retransmitted (`TCPCB_SACKED_RETRANS`).
    #[inline]
    pub(super) fn mark_retransmitted(&mut self, idx: usize) {
        self.segs[idx].flags |= RETRANS;
        self.retrans_fifo.push_back(self.segs[idx].seq);
        self.retrans_out += 1;
    }

    /// Forget the previous ACK's SACK blocks (the next walk starts afresh).
    #[inline]
    pub(super) fn forget_blocks(&mut self) { self.n_seen = 0; }

    /// Mark the segments the SACK blocks of an ACK of `ack` fully cover (RFC 2018,
    /// RFC 6675 §5; Linux `tcp_sacktag_write_queue`). `newly` sees each newly SACKed
    /// segment in sequence order, as it was before the ACK. Returns how many there were.
    #[inline]
    pub(super) fn sack(&mut self, snd_una: u32, snd_nxt: u32, ack: u32, blocks: &[(u32, u32)], mut newly: impl FnMut(Seg)) -> u32 {
        let mut count = 0;
        let (seen, n_seen) = (self.sack_seen, self.n_seen);
        let seen = &seen[..n_seen];
        self.n_seen = 0;
        for &(bs, be) in blocks {
            if !after(be, ack) || after(be, snd_nxt) {
                continue;
            }
            // Walked in full below (a start before snd_una finds no segment).
            if !before(bs, snd_una) && before(bs, be) && self.n_seen < SACK_SEEN {
                self.sack_seen[self.n_seen] = (bs, be);
                self.n_seen += 1;
            }
            let mut i = match self.index_of(snd_una, bs) { Ok(i) => i, Err(i) => i };
            while i < self.segs.len() {
                let s = self.segs[i];
                if !before(s.seq, be) {
                    break;
                }
                let end = s.end();
                if s.flags & SACKED != 0 {
                    // Inside a block of the previous ACK: the segments up to that block's
                    // end are all SACKed, nothing to do for them (a block grows by the
                    // latest arrivals; stepping through it cost O(cwnd) per ACK).
                    if let Some(&(_, ce)) = seen.iter().find(|&&(cs, ce)| !before(s.seq, cs) && !after(end, ce)) {
                        i = self.segs.partition_point(|t| !after(t.end(), ce));
                        continue;
                    }
                } else if !after(end, be) && !before(s.seq, bs) {
                    let f = &mut self.segs[i].flags;
                    if *f & LOST != 0 { self.lost_out -= 1; }
                    if *f & RETRANS != 0 { self.retrans_out -= 1; }
                    // A SACKed segment is neither lost nor in flight any more.
                    *f = (*f | SACKED) & !(LOST | RETRANS);
                    self.sacked_out += 1;
                    self.sacked_end = self.sacked_end.max(i + 1);
                    count += 1;
                    newly(s);
                    self.segs[i].flags |= RATE_DONE;
                }
                i += 1;
            }
        }
        count
    }

    /// Take the segments a cumulative ACK of `ack` covers off the scoreboard (Linux
    /// `tcp_clean_rtx_queue`). `delivered` sees each one that was not SACKed, in order.
    #[inline]
    pub(super) fn cum_ack(&mut self, ack: u32, mut delivered: impl FnMut(&Seg)) -> CumAcked {
        let mut out = CumAcked::default();
        while let Some(s) = self.segs.front() {
            if after(s.end(), ack) {
                break;
            }
            let s = self.segs.pop_front().unwrap_or_else(|| unreachable!());
            self.packets_out -= 1;
            if s.flags & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                out.delivered += 1;
                delivered(&s);
            }
            if s.flags & LOST != 0 { self.lost_out -= 1; }
            if s.flags & RETRANS != 0 { self.retrans_out -= 1; }
            out.bytes += s.len as u64;
            self.retx_hint = self.retx_hint.saturating_sub(1);
            self.lost_hint = self.lost_hint.saturating_sub(1);
            self.sacked_end = self.sacked_end.saturating_sub(1);
            self.rack_hint = self.rack_hint.saturating_sub(1);
        }
        crate::sim::shrink_sparse(&mut self.segs, SEGS_FLOOR);
        out
    }

    /// RFC 6675 §5 `IsLost` with FACK's reading (Linux 3.x/4.x `tcp_mark_head_lost`): every
    /// segment below the `dupthresh`-th highest SACKed one that is neither SACKed nor lost
    /// becomes lost. Returns how many.
    pub(super) fn mark_lost(&mut self, dupthresh: u32) -> u32 {
        // Find the index of the DupThresh-th highest SACKed segment.
        let mut count = 0;
        let mut limit = None;
        for i in (self.lost_hint..self.sacked_end).rev() {
            if self.segs[i].flags & SACKED != 0 {
                count += 1;
                if count >= dupthresh {
                    limit = Some(i);
                    break;
                }
            }
        }
        let Some(limit) = limit else { return 0 };
        let (mut first, mut newly) = (None, 0);
        for i in self.lost_hint..limit {
            let f = &mut self.segs[i].flags;
            if *f & (SACKED | LOST) == 0 {
                *f |= LOST;
                self.lost_out += 1;
                newly += 1;
                first.get_or_insert(i);
            }
        }
        self.lost_hint = self.lost_hint.max(limit);
        if let Some(i) = first {
            self.retx_hint = self.retx_hint.min(i);
        }
        newly
    }

    /// Retransmissions sent before `horizon`, the send time of the latest segment known
    /// delivered, were lost again (paths never reorder; Linux 4.x `tcp_mark_lost_retrans`).
    /// Returns how many.
    pub(super) fn mark_lost_retrans(&mut self, snd_una: u32, horizon: SimTime) -> u32 {
        let mut newly = 0;
        while let Some(&seq) = self.retrans_fifo.front() {
            let Ok(i) = self.index_of(snd_una, seq) else {
                self.retrans_fifo.pop_front(); // acked meanwhile
                continue;
            };
            let s = &mut self.segs[i];
            if s.flags & RETRANS == 0 || s.flags & SACKED != 0 {
                self.retrans_fifo.pop_front();
                continue;
            }
            if s.sent_at >= horizon {
                break;
            }
            s.flags &= !RETRANS;
            self.retrans_out -= 1;
            newly += 1;
            self.retrans_fifo.pop_front();
            self.retx_hint = self.retx_hint.min(i);
        }
        newly
    }

    /// An RTO (Linux `tcp_enter_loss`): every segment not SACKed is lost and nothing is in
    /// flight any more. Returns how many segments count as newly lost (not marked before,
    /// or marked and retransmitted since).
    pub(super) fn mark_all_lost(&mut self) -> u32 {
        let mut newly = 0;
        self.lost_out = 0;
        self.retrans_out = 0;
        for s in self.segs.iter_mut() {
            if s.flags & SACKED == 0 {
                if s.flags & LOST == 0 || s.flags & RETRANS != 0 {
                    newly += 1;
                }
                s.flags |= LOST;
                self.lost_out += 1;
            }
            s.flags &= !RETRANS;
        }
        self.retx_hint = 0;
        self.lost_hint = self.segs.len();
        self.retrans_fifo.clear();
        newly
    }

    /// Data sequence ranges of the segments not SACKed.
    pub fn unacked_dsn_ranges(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.segs.iter().filter(|s| s.flags & SACKED == 0).map(|s| (s.dsn, s.len))
    }

    /// The counters agree with the segments' marks, and the cursors with the segments.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for (i, s) in self.segs.iter().enumerate() {
            if s.flags & SACKED != 0 {
                sacked += 1;
                if i >= self.sacked_end {
                    return Err(format!("segment {i} is SACKed above the hint {}", self.sacked_end));
                }
            }
            let end = s.end();
            if s.flags & SACKED == 0 && self.sack_seen[..self.n_seen].iter().any(|&(cs, ce)| !before(s.seq, cs) && !after(end, ce)) {
                return Err(format!("segment {i} lies in a remembered SACK block but is not SACKed"));
            }
            if s.flags & LOST != 0 && s.flags & SACKED == 0 { lost += 1; }
            if s.flags & RETRANS != 0 && s.flags & SACKED == 0 { retrans += 1; }
        }
        if self.packets_out as usize != self.segs.len() || sacked != self.sacked_out || lost != self.lost_out || retrans != self.retrans_out {
            return Err(format!(
                "scoreboard mismatch: out {} vs {}, sacked {} vs {}, lost {} vs {}, retrans {} vs {}",
                self.packets_out, self.segs.len(), self.sacked_out, sacked, self.lost_out, lost, self.retrans_out, retrans
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    const ISS: u32 = 4_294_960_000; // wraps within the first ten segments

    /// `n` segments of MSS bytes from ISS, sent at 1 ms intervals.
    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::new();
        for k in 0..n {
            b.push(Seg::new(ISS.wrapping_add(k * MSS), MSS, k as u64 * MSS as u64, SimTime::from_ms(k as u64)));
        }
        b
    }

    fn seq(k: u32) -> u32 { ISS.wrapping_add(k * MSS) }

    fn sacked(b: &Scoreboard) -> Vec<usize> { b.iter().enumerate().filter(|(_, s)| s.sacked()).map(|(i, _)| i).collect() }

    #[test]
    fn a_sack_block_marks_only_the_segments_it_covers_in_full_and_leaves_the_flight() {
        let mut b = board(10);
        let nxt = seq(10);
        let mut seen = Vec::new();
        // Segments 3..6 in full; half of segment 7.
        let n = b.sack(ISS, nxt, ISS, &[(seq(3), seq(7).wrapping_add(MSS / 2))], |s| seen.push(s.seq));
        assert_eq!(n, 4);
        assert_eq!(seen, vec![seq(3), seq(4), seq(5), seq(6)]);
        assert_eq!(sacked(&b), vec![3, 4, 5, 6]);
        assert_eq!((b.packets_out, b.sacked_out, b.in_flight()), (10, 4, 6));
        // The same block again, grown by one segment: only the new one is news.
        let n = b.sack(ISS, nxt, ISS, &[(seq(3), seq(8))], |s| seen.push(s.seq));
        assert_eq!((n, seen.last().copied()), (1, Some(seq(7))));
        // A block below the ACK or beyond snd_nxt is ignored.
        assert_eq!(b.sack(ISS, nxt, seq(2), &[(seq(1), seq(2))], |_| {}), 0);
        assert_eq!(b.sack(ISS, nxt, ISS, &[(seq(9), seq(11))], |_| {}), 0);
        b.check_invariants().unwrap();
    }

    #[test]
    fn the_cumulative_ack_delivers_what_was_not_sacked_and_moves_every_cursor_down() {
        let mut b = board(10);
        b.sack(ISS, seq(10), ISS, &[(seq(2), seq(4))], |_| {});
        assert_eq!(b.mark_lost(2), 2); // segments 0 and 1 lie below two SACKed ones
        let mut delivered = Vec::new();
        let got = b.cum_ack(seq(5), |s| delivered.push(s.seq));
        // Segments 0, 1 and 4 are news; 2 and 3 were SACKed already.
        assert_eq!(got, CumAcked { delivered: 3, bytes: 5 * MSS as u64 });
        assert_eq!(delivered, vec![seq(0), seq(1), seq(4)]);
        assert_eq!((b.packets_out, b.sacked_out, b.lost_out, b.len()), (5, 0, 0, 5));
        assert_eq!((b.lost_hint, b.sacked_end), (0, 0));
        b.check_invariants().unwrap();
    }

    #[test]
    fn dupthresh_sacked_segments_above_a_hole_make_it_lost_once_and_it_is_retransmitted_once() {
        let mut b = board(10);
        b.sack(ISS, seq(10), ISS, &[(seq(1), seq(3))], |_| {});
        assert_eq!(b.mark_lost(3), 0, "two SACKed segments are not enough");
        b.sack(ISS, seq(10), ISS, &[(seq(1), seq(4))], |_| {});
        assert_eq!(b.mark_lost(3), 1);
        assert_eq!(b.mark_lost(3), 0, "marked once");
        assert_eq!((b.lost_out, b.in_flight()), (1, 6));
        assert_eq!(b.next_retransmit(), Some(0));
        b.mark_retransmitted(0);
        assert_eq!((b.retrans_out, b.in_flight(), b.next_retransmit()), (1, 7, None));
        b.check_invariants().unwrap();
    }

    #[test]
    fn a_retransmission_sent_before_a_later_delivery_is_lost_again() {
        let mut b = board(6);
        b.sack(ISS, seq(6), ISS, &[(seq(1), seq(4))], |_| {});
        b.mark_lost(3);
        b.mark_retransmitted(0);
        b.segs[0].sent_at = SimTime::from_ms(10);
        // Delivered segments were all sent before the retransmission: nothing to say.
        assert_eq!(b.mark_lost_retrans(ISS, SimTime::from_ms(5)), 0);
        // A segment sent after it was delivered: the retransmission was lost too.
        assert_eq!(b.mark_lost_retrans(ISS, SimTime::from_ms(11)), 1);
        assert_eq!((b.retrans_out, b.lost_out, b.next_retransmit()), (0, 1, Some(0)));
        b.check_invariants().unwrap();
    }

    #[test]
    fn an_rto_makes_every_unsacked_segment_lost_and_counts_only_the_news() {
        let mut b = board(6);
        b.sack(ISS, seq(6), ISS, &[(seq(1), seq(4))], |_| {});
        b.mark_lost(3); // segment 0
        // Segment 0 was lost before and not retransmitted: not news; 4 and 5 are.
        assert_eq!(b.mark_all_lost(), 2);
        assert_eq!((b.lost_out, b.retrans_out, b.sacked_out, b.in_flight()), (3, 0, 3, 0));
        assert_eq!(b.next_retransmit(), Some(0));
        b.check_invariants().unwrap();
    }

    #[test]
    fn random_acks_keep_the_counters_equal_to_the_marks() {
        let mut rng = 0x5eed_u64;
        let mut next = || crate::rng::splitmix64(&mut rng);
        for _ in 0..200 {
            let mut b = board(40);
            let (mut una, nxt) = (ISS, seq(40));
            for _ in 0..30 {
                let k = (next() % 40) as u32;
                let len = 1 + (next() % 6) as u32;
                let blocks = [(seq(k), seq((k + len).min(40)))];
                b.sack(una, nxt, una, &blocks, |_| {});
                match next() % 5 {
                    0 => { b.mark_lost(3); }
                    1 => { if let Some(i) = b.next_retransmit() { b.mark_retransmitted(i); } }
                    2 => { b.mark_lost_retrans(una, SimTime::from_ms(next() % 40)); }
                    3 => {
                        let upto = seq(((una.wrapping_sub(ISS)) / MSS + (next() % 4) as u32).min(40));
                        b.cum_ack(upto, |_| {});
                        una = upto;
                    }
                    _ => {}
                }
                b.check_invariants().unwrap();
                assert!(b.in_flight() <= b.packets_out);
            }
        }
    }

    #[test]
    fn the_delivered_stamp_keeps_32_bits_and_gives_the_full_count_back() {
        // Across the 2^32 boundary of the sender's count, as Linux's u32 `tx.delivered`.
        let stamp = |d: u64| RateStamp { delivered: d, delivered_at: SimTime::ZERO, first_tx_at: SimTime::ZERO, app_limited: false };
        for sent in [0u64, 5, (1 << 32) - 3, (1 << 32) + 7, 3 << 40] {
            let mut s = Seg::new(0, MSS, 0, SimTime::ZERO);
            s.stamp_rate(stamp(sent));
            for later in [0u64, 1, 10, 1 << 20, (1 << 31) - 1] {
                assert_eq!(s.tx_delivered(sent + later), sent, "sent at {sent}, read {later} later");
            }
            let mut t = Seg::new(MSS, MSS, 0, SimTime::ZERO);
            t.stamp_rate(stamp(sent + 4));
            assert!(t.delivered_after(&s) && !s.delivered_after(&t) && !s.delivered_after(&s));
        }
    }
}
