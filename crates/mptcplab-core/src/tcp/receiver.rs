//! Subflow receiver: cumulative ACK, SACK blocks (RFC 2018) and Linux-like delayed ACKs
//! (RFC 1122 §4.2.3.2, RFC 5681 §4.2; Linux `__tcp_ack_snd_check`, reference `tcp.md` §1.5):
//! quick-ACK for the first 16 segments, then an ACK when more than one full segment is
//! unacknowledged or when the delayed-ACK timer (40 ms) fires; an immediate ACK for
//! out-of-order data and for data that fills a hole.

use super::seq::{after, before, off};
use crate::net::packet::MAX_SACK_BLOCKS;
use crate::units::SimTime;

pub const QUICKACKS: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    Now,
    /// Arm (or keep) the delayed-ACK timer for this deadline.
    Delay(SimTime),
}

#[derive(Clone, Debug)]
pub struct SubflowRx {
    pub rcv_nxt: u32,
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted, disjoint, not touching.
    ooo: Vec<(u32, u32)>,
    /// The block that contains the most recent arrival (reported first, RFC 2018 §4).
    last_block: Option<(u32, u32)>,
    unacked_bytes: u32,
    quickacks: u32,
    pub delack_deadline: Option<SimTime>,
    mss: u32,
    delayed_ack: bool,
    ato: SimTime,
    pub segments_received: u64,
    pub duplicate_segments: u64,
}

/// What an arriving segment was, for the connection level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxOutcome {
    /// Not seen before at subflow level.
    pub new: bool,
    pub ack: AckDecision,
}

impl SubflowRx {
    pub fn new(irs: u32, mss: u32, delayed_ack: bool, ato: SimTime) -> Self {
        SubflowRx {
            rcv_nxt: irs,
            ooo: Vec::new(),
            last_block: None,
            unacked_bytes: 0,
            quickacks: QUICKACKS,
            delack_deadline: None,
            mss,
            delayed_ack,
            ato,
            segments_received: 0,
            duplicate_segments: 0,
        }
    }

    pub fn ooo_bytes(&self) -> u64 { self.ooo.iter().map(|&(s, e)| off(e, s) as u64).sum() }

    #[inline(always)]
    pub fn on_segment(&mut self, now: SimTime, seq: u32, len: u32) -> RxOutcome {
        self.segments_received += 1;
        let end = seq.wrapping_add(len);
        if !after(end, self.rcv_nxt) {
            // Entirely old: a duplicate (spurious retransmission). ACK at once (DSACK-like).
            self.duplicate_segments += 1;
            return RxOutcome { new: false, ack: AckDecision::Now };
        }
        if seq == self.rcv_nxt || before(seq, self.rcv_nxt) {
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt = end;
            // Pull in out-of-order ranges that are now contiguous.
            while let Some(&(s, e)) = self.ooo.first() {
                if after(s, self.rcv_nxt) {
                    break;
                }
                if after(e, self.rcv_nxt) {
                    self.rcv_nxt = e;
                }
                self.ooo.remove(0);
            }
            if let Some((_, e)) = self.last_block {
                if !after(e, self.rcv_nxt) {
                    self.last_block = None;
                }
            }
            self.unacked_bytes += len;
            let ack = if had_holes || self.quickacks > 0 || !self.delayed_ack || self.unacked_bytes > self.mss {
                self.quickacks = self.quickacks.saturating_sub(1);
                AckDecision::Now
            } else {
                AckDecision::Delay(now + self.ato)
            };
            return RxOutcome { new: true, ack };
        }
        // Above a hole: insert into the out-of-order set.
        let new = self.insert_ooo(seq, end);
        if !new {
            self.duplicate_segments += 1;
        }
        RxOutcome { new, ack: AckDecision::Now }
    }

    fn insert_ooo(&mut self, s: u32, e: u32) -> bool {
        let base = self.rcv_nxt;
        let (so, eo) = (off(s, base), off(e, base));
        // Find the first range whose end >= s.
        let i = self.ooo.partition_point(|&(_, re)| off(re, base) < so);
        if i < self.ooo.len() {
            let (rs, re) = self.ooo[i];
            if off(rs, base) <= so && off(re, base) >= eo {
                self.last_block = Some((rs, re));
                return false;
            }
        }
        // Merge every range that overlaps or touches [s, e).
        let mut ns = so;
        let mut ne = eo;
        let mut j = i;
        while j < self.ooo.len() && off(self.ooo[j].0, base) <= ne {
            ns = ns.min(off(self.ooo[j].0, base));
            ne = ne.max(off(self.ooo[j].1, base));
            j += 1;
        }
        let merged = (base.wrapping_add(ns), base.wrapping_add(ne));
        self.ooo.splice(i..j, std::iter::once(merged));
        self.last_block = Some(merged);
        true
    }

    /// SACK blocks for the next ACK: the block with the latest arrival first, then the
    /// highest other blocks.
    pub fn sack_blocks(&self, out: &mut [(u32, u32); MAX_SACK_BLOCKS]) -> u8 {
        let mut n = 0usize;
        if let Some(b) = self.last_block {
            out[0] = b;
            n = 1;
        }
        for &b in self.ooo.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if Some(b) == self.last_block {
                continue;
            }
            out[n] = b;
            n += 1;
        }
        n as u8
    }

    /// An ACK went out: nothing is pending any more.
    pub fn on_ack_sent(&mut self) {
        self.unacked_bytes = 0;
        self.delack_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx() -> SubflowRx { SubflowRx::new(0xffff_f000, 1000, true, SimTime::from_ms(40)) }

    #[test]
    fn after_the_quickack_phase_every_second_segment_is_acked() {
        // tcp.md test vector 9: 100 in-order segments -> about 16 + 42 ACKs.
        let mut r = rx();
        let mut seq = 0xffff_f000u32;
        let mut acks = 0;
        for _ in 0..100 {
            if r.on_segment(SimTime::ZERO, seq, 1000).ack == AckDecision::Now {
                acks += 1;
                r.on_ack_sent();
            }
            seq = seq.wrapping_add(1000);
        }
        assert!(acks <= 50 + 16 / 2 + 1 && acks >= 55, "{acks}");
        assert_eq!(r.rcv_nxt, seq);
    }

    #[test]
    fn out_of_order_segments_are_sacked_and_acked_at_once() {
        let mut r = rx();
        let b = 0xffff_f000u32;
        for _ in 0..QUICKACKS { r.quickacks = 0; }
        assert_eq!(r.on_segment(SimTime::ZERO, b.wrapping_add(2000), 1000).ack, AckDecision::Now);
        assert_eq!(r.on_segment(SimTime::ZERO, b.wrapping_add(4000), 1000).ack, AckDecision::Now);
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let n = r.sack_blocks(&mut blocks);
        assert_eq!(n, 2);
        assert_eq!(blocks[0], (b.wrapping_add(4000), b.wrapping_add(5000)));
        // Filling the first hole is acked at once and advances past the first block.
        let o = r.on_segment(SimTime::ZERO, b, 2000);
        assert_eq!(o, RxOutcome { new: true, ack: AckDecision::Now });
        assert_eq!(r.rcv_nxt, b.wrapping_add(3000));
        assert_eq!(r.ooo_bytes(), 1000);
        // A duplicate is not new.
        assert!(!r.on_segment(SimTime::ZERO, b.wrapping_add(4000), 1000).new);
        assert!(!r.on_segment(SimTime::ZERO, b, 1000).new);
    }

    #[test]
    fn a_lone_segment_waits_for_the_delayed_ack_timer() {
        let mut r = rx();
        r.quickacks = 0;
        assert_eq!(r.on_segment(SimTime::from_ms(5), 0xffff_f000, 1000).ack, AckDecision::Delay(SimTime::from_ms(45)));
        assert_eq!(r.on_segment(SimTime::from_ms(6), 0xffff_f000u32.wrapping_add(1000), 1000).ack, AckDecision::Now);
    }
}
