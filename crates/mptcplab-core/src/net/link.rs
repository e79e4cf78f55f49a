//! One direction of a full-duplex link: a loss model, a DropTail queue served at line
//! rate (whole packets, headers included), then a propagation delay.
//!
//! Every packet accepted by the link sits in one FIFO (`onlink`) until it reaches the far
//! end, with its transmission start/end and arrival time computed when it is accepted
//! (FIFO at a known rate). Only the head's arrival is in the global event heap, so the
//! heap stays small and a rate change or outage only touches this link. Arrival times
//! never decrease along the FIFO: packets on a link never overtake each other, even
//! when the delay shrinks.

use super::loss::LossModel;
use super::packet::Packet;
use crate::rng::Rng;
use crate::sim::prefetch;
use crate::units::{Bandwidth, QueueLimit, SimTime};
use std::collections::VecDeque;

/// A packet on the link and when it reaches the far end. Its transmission times are not
/// kept here: `txq` has the end of those still being sent, and only the first of those
/// has started (each starts when the one before it ends; issue 14: 96 bytes, not 112).
///
/// The packet itself, not a handle on a store: a store slot per packet in flight was
/// tried (issue 16). It made the k = 8 FatTree's 6-hop paths about 10 % faster (12 bytes
/// moved per hop instead of 96), and S3 N = 1000 (one hop, 65 000 packets in flight)
/// 1.3 times slower even with a prefetch, because a ring is read and written in order
/// and the hardware prefetcher follows it, where the store's slots are scattered.
#[derive(Clone, Copy, Debug)]
struct OnLink {
    pkt: Packet,
    arrive: SimTime,
}

/// How many packets ahead of the head `pop_arrival` prefetches.
const PREFETCH_AHEAD: usize = 4;

const _: () = assert!(std::mem::size_of::<OnLink>() == 96);

/// A timed change of a link direction (one schedule entry, or one step of a ramp).
#[derive(Clone, Debug)]
pub struct LinkChange {
    pub at: SimTime,
    pub rate: Option<Bandwidth>,
    pub delay: Option<SimTime>,
    pub loss: Option<f64>,
    pub up: Option<bool>,
}

/// What happened to a packet offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted. `new_head` is true when it became the head of an empty link: the caller
    /// must schedule its arrival at `arrive`.
    Accepted { arrive: SimTime, new_head: bool },
    DroppedLoss,
    DroppedQueue,
    DroppedDown,
}

#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    /// Packets offered to this link direction.
    pub offered: u64,
    pub delivered: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub dropped_down: u64,
    pub bytes_delivered: u64,
}

impl LinkStats {
    pub fn dropped(&self) -> u64 { self.dropped_loss + self.dropped_queue + self.dropped_down }
}

#[repr(C, align(64))]
pub struct LinkDir {
    // Fields in the order an offer and an arrival read them, so that what they read
    // fills the first three cache lines (a test pins it): the rings; the clock of the
    // queue with the flags an offer tests first; the counters and the limit (issue 16:
    // at a k = 8 FatTree the 768 link directions' structs leave L1 between two visits,
    // and the next link's lines were the largest share of an offer's misses). `repr(C)`
    // keeps the order.
    onlink: VecDeque<OnLink>,
    /// The packets whose transmission had not ended when last looked at (`settle`, lazy):
    /// the last `txq.len()` packets of `onlink`, as (transmission end, wire bytes). The
    /// queue's length and bytes come from this compact ring, not from the packets
    /// themselves: with thousands of packets propagating, reading each packet again when
    /// its transmission ends cost a cache miss per packet (cachegrind, S3 N=1000).
    txq: VecDeque<(SimTime, u32)>,
    busy_until: SimTime,
    last_arrive: SimTime,
    queued_bytes: u64,
    pub delay: SimTime,
    /// The last serialisation times computed, one for packets under 512 bytes (ACKs)
    /// and one for larger ones (data), with their sizes: a direction carries mostly a
    /// full data segment's size and an ACK's, and the division and float rounding of
    /// `Bandwidth::tx_time` were a fifth of `offer` (perf, S1). In a FatTree every link
    /// carries both, which one memo kept forgetting. A change of the rate (`set_rate`)
    /// forgets them.
    tx_memo: [SimTime; 2],
    tx_memo_bytes: [u32; 2],
    pub epoch: u32,
    up: bool,
    /// `loss.can_drop()`, beside the queue's clock (an offer tests it first; false: no
    /// draw, as `LossModel::drops` makes none).
    lossy: bool,
    /// `jitter.is_some()`, here for the same reason: `jitter` itself lies on the fifth
    /// cache line, which every accepted packet read to find it empty (issue 16).
    jittered: bool,
    pub stats: LinkStats,
    pub limit: QueueLimit,
    rate: Bandwidth,
    loss: LossModel,
    rng: Rng,
    /// `links[].jitter`: the bound of the extra per-packet delay and its own stream (so
    /// that a link without jitter draws exactly what it drew before).
    jitter: Option<(SimTime, Rng)>,
    pub name: String,
    /// "forward" or "reverse".
    pub direction: &'static str,
    pub changes: Vec<LinkChange>,
}

impl LinkDir {
    pub fn new(name: String, direction: &'static str, rate: Bandwidth, delay: SimTime, limit: QueueLimit, loss: LossModel, rng: Rng) -> Self {
        LinkDir {
            name,
            direction,
            rate,
            delay,
            limit,
            lossy: loss.can_drop(),
            loss,
            up: true,
            rng,
            onlink: VecDeque::new(),
            txq: VecDeque::new(),
            queued_bytes: 0,
            busy_until: SimTime::ZERO,
            last_arrive: SimTime::ZERO,
            jitter: None,
            jittered: false,
            tx_memo: [SimTime::ZERO; 2],
            tx_memo_bytes: [u32::MAX; 2],
            epoch: 0,
            stats: LinkStats::default(),
            changes: Vec::new(),
        }
    }

    /// Add an extra delay per packet, uniform in [0, `bound`), drawn from `rng`.
    pub fn set_jitter(&mut self, bound: SimTime, rng: Rng) {
        self.jitter = Some((bound, rng));
        self.jittered = true;
    }

    /// This packet's extra delay (`set_jitter`): uniform in [0, bound).
    fn draw_jitter(&mut self) -> SimTime {
        self.jitter.as_mut().map_or(SimTime::ZERO, |(bound, rng)| SimTime::from_ns((rng.next_f64() * bound.ns() as f64) as u64))
    }

    pub fn rate(&self) -> Bandwidth { self.rate }

    fn set_rate(&mut self, rate: Bandwidth) {
        self.rate = rate;
        self.tx_memo_bytes = [u32::MAX; 2];
    }

    /// `self.rate.tx_time(bytes)`, remembered for the last size.
    #[inline]
    fn tx_time(&mut self, bytes: u32) -> SimTime {
        let k = usize::from(bytes < 512);
        if self.tx_memo_bytes[k] != bytes {
            self.tx_memo_bytes[k] = bytes;
            self.tx_memo[k] = self.rate.tx_time(bytes);
        }
        self.tx_memo[k]
    }

    /// Drop from `txq` the packets whose transmission has ended by `now`.
    fn settle(&mut self, now: SimTime) {
        while let Some(&(tx_end, bytes)) = self.txq.front() {
            if tx_end > now {
                break;
            }
            self.queued_bytes -= bytes as u64;
            self.txq.pop_front();
        }
    }

    pub fn queue_len(&mut self, now: SimTime) -> (usize, u64) {
        self.settle(now);
        (self.txq.len(), self.queued_bytes)
    }

    /// Packets on the link (queued or propagating).
    pub fn on_link(&self) -> usize { self.onlink.len() }

    #[inline]
    pub fn offer(&mut self, now: SimTime, pkt: &Packet) -> Offer {
        self.stats.offered += 1;
        if !self.up {
            self.stats.dropped_down += 1;
            return Offer::DroppedDown;
        }
        if self.lossy && self.loss.drops(&mut self.rng) {
            self.stats.dropped_loss += 1;
            return Offer::DroppedLoss;
        }
        self.settle(now);
        let qlen = self.txq.len();
        let fits = match self.limit {
            QueueLimit::Packets(n) => qlen < n as usize,
            QueueLimit::Bytes(b) => self.queued_bytes + pkt.wire_bytes as u64 <= b || qlen == 0,
        };
        if !fits {
            self.stats.dropped_queue += 1;
            return Offer::DroppedQueue;
        }
        let tx_start = self.busy_until.max(now);
        let tx_end = tx_start + self.tx_time(pkt.wire_bytes);
        let extra = if self.jittered { self.draw_jitter() } else { SimTime::ZERO };
        // FIFO: a packet never arrives before the one ahead of it.
        let arrive = (tx_end + self.delay + extra).max(self.last_arrive);
        self.busy_until = tx_end;
        self.last_arrive = arrive;
        self.queued_bytes += pkt.wire_bytes as u64;
        let new_head = self.onlink.is_empty();
        self.onlink.push_back(OnLink { pkt: *pkt, arrive });
        self.txq.push_back((tx_end, pkt.wire_bytes));
        Offer::Accepted { arrive, new_head }
    }

    /// Pop the head packet if its event is current. Returns the packet and the arrival
    /// time of the next head, which the caller schedules.
    #[inline]
    pub fn pop_arrival(&mut self, now: SimTime, epoch: u32) -> Option<(Packet, Option<SimTime>)> {
        if epoch != self.epoch {
            return None;
        }
        let head = self.onlink.front()?;
        debug_assert!(head.arrive <= now);
        if head.arrive > now {
            return None;
        }
        let h = self.onlink.pop_front()?;
        if self.txq.len() > self.onlink.len() {
            // It was still counted as queued (not settled yet; only when tx_end == arrive,
            // zero delay, can the head be): it leaves the count too.
            self.txq.pop_front();
            self.queued_bytes -= h.pkt.wire_bytes as u64;
        }
        self.stats.delivered += 1;
        self.stats.bytes_delivered += h.pkt.wire_bytes as u64;
        if self.onlink.is_empty() {
            // Back to the ring's first slot (`clear` resets the head index): a link that
            // empties often then reuses its first few slots, still in cache, instead of
            // writing each arrival to the slot the ring used a whole capacity ago.
            self.onlink.clear();
            self.txq.clear();
        } else {
            crate::sim::shrink_sparse(&mut self.onlink, 1024);
        }
        // The ring is read in order but long after it was written (a link at 10 Gbit/s
        // with 20 ms of delay holds ~17 000 packets): fetch a packet a few places ahead
        // into cache now, so its own pop finds it there (issue 14: at 1 000 connections
        // the pop's reads were a third of the run's samples).
        if let Some(ahead) = self.onlink.get(PREFETCH_AHEAD) {
            prefetch(ahead);
        }
        Some((h.pkt, self.onlink.front().map(|p| p.arrive)))
    }

    /// Apply a change at `now`. Returns the new head arrival to schedule (with the new
    /// epoch) when the head's timing was invalidated, which a rate or delay change never
    /// does: the head has always started its transmission, and keeps its times.
    pub fn apply(&mut self, now: SimTime, ch: &LinkChange) -> Option<SimTime> {
        if let Some(p) = ch.loss {
            self.loss.set_bernoulli(p);
            self.lossy = self.loss.can_drop();
        }
        if let Some(false) = ch.up {
            // Down: what is queued and what is in flight on the link is lost.
            self.up = false;
            self.stats.dropped_down += self.onlink.len() as u64;
            self.onlink.clear();
            self.txq.clear();
            self.queued_bytes = 0;
            self.busy_until = now;
            self.last_arrive = now;
            self.epoch = self.epoch.wrapping_add(1);
            if let Some(r) = ch.rate { self.set_rate(r); }
            if let Some(d) = ch.delay { self.delay = d; }
            return None;
        }
        if let Some(true) = ch.up {
            self.up = true;
        }
        if ch.rate.is_none() && ch.delay.is_none() {
            return None;
        }
        if let Some(r) = ch.rate { self.set_rate(r); }
        if let Some(d) = ch.delay { self.delay = d; }
        // Re-time the packets whose transmission has not started; those in service or
        // propagating keep their times.
        self.settle(now);
        // After `settle`, `txq` holds the last `txq.len()` packets of `onlink`, each still
        // being sent or waiting. Those before it have been sent, and the first of it is in
        // service (the one before it ended by `now`, and it was offered by `now`): these
        // `kept` packets keep their times. The others start when the one before them ends.
        let settled = self.onlink.len() - self.txq.len();
        let kept = (settled + 1).min(self.onlink.len());
        let mut last_arrive = self.onlink.range(..kept).map(|p| p.arrive).max().unwrap_or(SimTime::ZERO);
        let mut cursor = self.txq.front().map_or(now, |&(tx_end, _)| tx_end.max(now));
        for i in kept..self.onlink.len() {
            let p = &mut self.onlink[i];
            let tx_end = cursor + self.rate.tx_time(p.pkt.wire_bytes);
            p.arrive = (tx_end + self.delay).max(last_arrive);
            // Not started, so not settled: its `txq` entry moves with it.
            self.txq[i - settled].0 = tx_end;
            cursor = tx_end;
            last_arrive = p.arrive;
        }
        self.busy_until = cursor;
        if kept < self.onlink.len() {
            self.last_arrive = last_arrive;
        }
        // The head is among the `kept` (it has started), so its scheduled arrival stands.
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::PacketKind;

    fn link(rate_mbps: f64, delay_ms: u64, limit: QueueLimit) -> LinkDir {
        LinkDir::new("l".into(), "forward", Bandwidth(rate_mbps * 1e6), SimTime::from_ms(delay_ms), limit, LossModel::none(), Rng::stream(1, "l"))
    }
    fn pkt(bytes: u32) -> Packet { Packet::new(PacketKind::Data, 0, 0, 0, bytes) }

    #[test]
    fn an_offer_reads_the_first_three_cache_lines() {
        use std::mem::offset_of;
        let lines = [
            (offset_of!(LinkDir, txq), 0),
            (offset_of!(LinkDir, tx_memo), 1),
            (offset_of!(LinkDir, tx_memo_bytes), 1),
            (offset_of!(LinkDir, up), 1),
            (offset_of!(LinkDir, lossy), 1),
            (offset_of!(LinkDir, jittered), 1),
            (offset_of!(LinkDir, limit), 2),
        ];
        for (offset, line) in lines {
            assert_eq!(offset / 64, line, "offset {offset}");
        }
    }

    #[test]
    fn packets_are_serialised_then_delayed() {
        let mut l = link(100.0, 10, QueueLimit::Packets(10));
        let a = l.offer(SimTime::ZERO, &pkt(1500));
        let b = l.offer(SimTime::ZERO, &pkt(1500));
        assert_eq!(a, Offer::Accepted { arrive: SimTime::from_us(10_120), new_head: true });
        assert_eq!(b, Offer::Accepted { arrive: SimTime::from_us(10_240), new_head: false });
        assert_eq!(l.queue_len(SimTime::from_us(100)).0, 2);
        assert_eq!(l.queue_len(SimTime::from_us(130)).0, 1);
        assert_eq!(l.queue_len(SimTime::from_us(240)).0, 0);
    }

    #[test]
    fn droptail_limits_packets_and_counts_service_as_queued() {
        let mut l = link(1.0, 1, QueueLimit::Packets(3));
        let r: Vec<Offer> = (0..5).map(|_| l.offer(SimTime::ZERO, &pkt(1000))).collect();
        assert!(matches!(r[2], Offer::Accepted { .. }));
        assert_eq!(r[3], Offer::DroppedQueue);
        assert_eq!(l.stats.dropped_queue, 2);
        let mut lb = link(1.0, 1, QueueLimit::Bytes(2500));
        let r: Vec<Offer> = (0..3).map(|_| lb.offer(SimTime::ZERO, &pkt(1000))).collect();
        assert_eq!(r[2], Offer::DroppedQueue);
    }

    #[test]
    fn a_down_link_drops_queued_and_in_flight_packets() {
        let mut l = link(10.0, 50, QueueLimit::Packets(100));
        for _ in 0..5 {
            l.offer(SimTime::ZERO, &pkt(1500));
        }
        let ep = l.epoch;
        l.apply(SimTime::from_ms(2), &LinkChange { at: SimTime::from_ms(2), rate: None, delay: None, loss: None, up: Some(false) });
        assert_eq!(l.stats.dropped_down, 5);
        assert!(l.pop_arrival(SimTime::from_ms(60), ep).is_none());
        assert_eq!(l.offer(SimTime::from_ms(3), &pkt(100)), Offer::DroppedDown);
        assert_eq!(l.stats.offered, l.stats.delivered + l.stats.dropped() + l.on_link() as u64);
    }

    #[test]
    fn jitter_adds_up_to_its_bound_per_packet_without_reordering() {
        let mut l = link(100.0, 10, QueueLimit::Packets(1000));
        l.set_jitter(SimTime::from_us(500), Rng::stream(7, "j"));
        let tx = SimTime::from_us(120); // 1500 B at 100 Mbit/s
        let mut last = SimTime::ZERO;
        let mut extras = vec![];
        for k in 0..200u64 {
            let Offer::Accepted { arrive, .. } = l.offer(SimTime::ZERO, &pkt(1500)) else { panic!("accepted") };
            let base = SimTime::from_ms(10) + tx.mul(k + 1);
            assert!(arrive >= base && arrive >= last, "never early, never overtaking");
            assert!(arrive < base + SimTime::from_us(500) || arrive == last);
            extras.push((arrive - base).ns());
            last = arrive;
        }
        assert!(extras.iter().any(|&e| e > 0) && extras.iter().collect::<std::collections::HashSet<_>>().len() > 50, "it varies");
        // Without jitter the same offers arrive exactly at tx_end + delay.
        let mut plain = link(100.0, 10, QueueLimit::Packets(1000));
        let Offer::Accepted { arrive, .. } = plain.offer(SimTime::ZERO, &pkt(1500)) else { panic!("accepted") };
        assert_eq!(arrive, SimTime::from_ms(10) + tx);
    }

    #[test]
    fn a_shorter_delay_never_lets_packets_overtake() {
        let mut l = link(100.0, 100, QueueLimit::Packets(100));
        let Offer::Accepted { arrive: a1, .. } = l.offer(SimTime::ZERO, &pkt(1500)) else { panic!() };
        l.apply(SimTime::from_ms(1), &LinkChange { at: SimTime::from_ms(1), rate: None, delay: Some(SimTime::from_ms(1)), loss: None, up: None });
        let Offer::Accepted { arrive: a2, .. } = l.offer(SimTime::from_ms(1), &pkt(1500)) else { panic!() };
        assert!(a2 >= a1);
    }

    #[test]
    fn a_rate_change_retimes_packets_not_yet_started() {
        let mut l = link(1.0, 0, QueueLimit::Packets(100));
        l.offer(SimTime::ZERO, &pkt(1000)); // 8 ms at 1 Mbit/s
        l.offer(SimTime::ZERO, &pkt(1000));
        let ep = l.epoch;
        // At 4 ms the first is in service; the second starts at 8 ms at the new rate.
        let head = l.apply(SimTime::from_ms(4), &LinkChange { at: SimTime::from_ms(4), rate: Some(Bandwidth(2e6)), delay: None, loss: None, up: None });
        assert!(head.is_none(), "head keeps its time");
        let (_, next) = l.pop_arrival(SimTime::from_ms(8), ep).unwrap();
        assert_eq!(next, Some(SimTime::from_ms(12)));
    }

    #[test]
    fn a_rate_change_keeps_sent_and_in_service_packets_and_chains_the_waiting_ones() {
        // 1000 B at 1 Mbit/s = 8 ms, 10 ms of delay. Offered at 0: the first ends at 8 ms
        // and arrives at 18, the second ends at 16 (arrives 26), the third at 24, the
        // fourth at 32.
        let mut l = link(1.0, 10, QueueLimit::Packets(100));
        for _ in 0..4 {
            l.offer(SimTime::ZERO, &pkt(1000));
        }
        let ep = l.epoch;
        // At 12 ms the first is propagating, the second in service (8-16 ms), the third
        // and fourth wait: at 4 Mbit/s they take 2 ms each, from 16 ms on.
        let head = l.apply(SimTime::from_ms(12), &LinkChange { at: SimTime::from_ms(12), rate: Some(Bandwidth(4e6)), delay: None, loss: None, up: None });
        assert!(head.is_none(), "the head keeps its time");
        assert_eq!(l.queue_len(SimTime::from_ms(12)).0, 3, "in service and waiting");
        assert_eq!(l.queue_len(SimTime::from_ms(17)).0, 2, "the third in service (16-18 ms)");
        // A packet offered at 19 ms starts when the fourth ends (20 ms): 2 ms, then 10.
        assert_eq!(l.offer(SimTime::from_ms(19), &pkt(1000)), Offer::Accepted { arrive: SimTime::from_ms(32), new_head: false });
        assert_eq!(l.queue_len(SimTime::from_ms(21)).0, 1);
        let arrivals: Vec<_> = [18, 26, 28, 30, 32].iter().map(|&t| l.pop_arrival(SimTime::from_ms(t), ep).unwrap().1).collect();
        // The one in service keeps its end (16 + 10); the waiting ones chain at the new rate.
        let ms = |t: u64| Some(SimTime::from_ms(t));
        assert_eq!(arrivals, vec![ms(26), ms(28), ms(30), ms(32), None]);
    }
}
