//! AR&P scheduler (Adaptively Redundant and Predictive), seed `004_811a4f59e195d45d.txt`
//! §V (Eq. 3–4, Algorithms 2–3; Han et al., "Leveraging Coupled BBR and Adaptive Packet
//! Scheduling to Boost MPTCP", IEEE TWC 2021), reference schedulers.md §4.6.
//!
//! Inputs, per subflow i (the seed only says "as measured by Coupled BBR"):
//! - x_i, the sending rate: the subflow's pacing rate (BBR: `pacing_gain · BW`), in
//!   bytes/s. BBR's bottleneck-bandwidth estimate serves as BW_i in the scheduling
//!   window, as the seed names the two separately.
//! - r_i, the RTT: the subflow's min RTT (BBR's propagation-delay estimate; SRTT until
//!   the first sample, which the handshake provides). The same r_i is the RTT of the
//!   scheduling window and of the decision period.
//!
//! With a congestion control that is not BBR (coupled or not) AR&P runs on a stand-in:
//! x_i = BW_i = cwnd · mss / SRTT, and congestion avoidance (cwnd ≥ ssthresh, Open
//! state) takes the place of PROBE_BW as the "steady rate" that P-Scheduling needs. The
//! seed evaluates AR&P only with Coupled BBR; these runs are not the seed's algorithm.
//!
//! AR-Scheduling (Algorithm 2), decided every min_{i∈S} r_i and at once when the set of
//! usable subflows S changes: sort S by x_i/r_i (descending, ties in the kernel's list
//! order); the first is non-redundant (N); each next j joins N iff
//! `x_j / Σ_N x_i > Σ_N x_i (r_j − 2 r_i) / Σ_N x_i r_i` (the exact greedy step of Eq. 3)
//! and it has at least 4 packets in flight (Algorithm 2 prints `inflight_i`; the text
//! means the candidate j: fewer than 4 cannot trigger fast retransmit). The others form
//! R and carry only copies of data already sent on another subflow and not yet
//! DATA_ACKed, each in data-sequence order from the oldest it has not carried.
//!
//! P-Scheduling (Algorithm 3, Eq. 4), while every subflow in N is in PROBE_BW: the next
//! new packet goes to argmin_{i∈N} A_i = t0 + L_i / x_i + r_i / 2, L_i the bytes already
//! pre-scheduled on i and not yet sent (the packet's own size not counted). It leaves at
//! once when that subflow has nothing queued and cwnd, pacer and window allow it;
//! otherwise it is pre-scheduled (`Action::Enqueue`) while the pre-scheduled, unsent
//! bytes stay within the scheduling window `max_{i∈N} r_i · Σ_{i∈N} BW_i` (floored at one
//! MSS so that a subflow whose estimates are still zero can make progress). Outside
//! PROBE_BW new data goes round-robin over N (one packet per turn, skipping subflows
//! whose cwnd is full, as `roundrobin` with its defaults). R never gets new data.
//!
//! Departures: reinjections (data of a failed subflow) go first, on the minRTT choice,
//! as in every other scheduler; backup subflows are outside S unless no active subflow is
//! usable. Data pre-scheduled on a subflow that later moves to R is still sent there.

use super::{Action, MetaSegs, MinRtt, RoundRobin, SchedView, Scheduler, Segment, StatusNote, SubflowView};
use crate::cc::CaState;
use crate::mptcp::meta::MetaSeg;
use crate::units::SimTime;

/// A candidate needs this many packets in flight to join N (3 dupACKs + the lost one).
const MIN_INFLIGHT_PKTS: u32 = 4;

/// What AR-Scheduling knows of one subflow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathEstimate {
    /// Sending rate x_i, bytes/s.
    pub x: f64,
    /// RTT r_i, seconds.
    pub r: f64,
    /// Packets in flight.
    pub inflight_pkts: u32,
}

/// Algorithm 2: `true` at k when `paths[k]` is non-redundant. Ties in x/r keep the
/// input order.
pub fn ar_partition(paths: &[PathEstimate]) -> Vec<bool> {
    let mut in_n = vec![false; paths.len()];
    let mut idx: Vec<usize> = (0..paths.len()).collect();
    idx.sort_by(|&a, &b| (paths[b].x / paths[b].r).total_cmp(&(paths[a].x / paths[a].r)));
    let Some((&first, rest)) = idx.split_first() else { return in_n };
    in_n[first] = true;
    // Σ_N x_i and Σ_N x_i r_i.
    let (mut sx, mut sxr) = (paths[first].x, paths[first].x * paths[first].r);
    for &j in rest {
        let p = &paths[j];
        // x_j / Σx > Σ x_i (r_j − 2 r_i) / Σ x_i r_i, with Σ x_i (r_j − 2 r_i) = r_j Σx − 2 Σxr.
        let gain = p.x / sx > (p.r * sx - 2.0 * sxr) / sxr;
        if gain && p.inflight_pkts >= MIN_INFLIGHT_PKTS {
            in_n[j] = true;
            sx += p.x;
            sxr += p.x * p.r;
        }
    }
    in_n
}

/// Eq. 3: `ln Σ_N x_i − ln(Σ_N x_i r_i / Σ_N x_i)` over the subflows marked in `set`.
pub fn objective(paths: &[PathEstimate], set: &[bool]) -> f64 {
    let (sx, sxr) = paths.iter().zip(set).filter(|(_, &m)| m).fold((0.0, 0.0), |(a, b), (p, _)| (a + p.x, b + p.x * p.r));
    sx.ln() - (sxr / sx).ln()
}

/// Eq. 4 without t0: `L_i / x_i + r_i / 2` in seconds for `queued_bytes` = L_i, `x` in
/// bytes/s, `r` in seconds. A subflow with data queued and no rate never delivers it.
pub fn predicted_arrival(queued_bytes: u64, x: f64, r: f64) -> f64 {
    let wait = if queued_bytes == 0 {
        0.0
    } else if x > 0.0 {
        queued_bytes as f64 / x
    } else {
        f64::INFINITY
    };
    wait + r / 2.0
}

/// BBR reports one of its modes; other controllers report "" or their own words.
fn rate_based(s: &SubflowView) -> bool { matches!(s.cc_mode, "startup" | "drain" | "probe_bw" | "probe_rtt") }

/// x_i in bytes/s: BBR's pacing rate, else the stand-in cwnd · mss / SRTT.
fn rate(s: &SubflowView) -> f64 {
    if rate_based(s) && s.pacing_rate_bps > 0.0 {
        return s.pacing_rate_bps / 8.0;
    }
    if s.srtt == SimTime::ZERO {
        return 0.0;
    }
    s.cwnd as f64 * s.mss as f64 / s.srtt.secs_f64()
}

/// BW_i in bytes/s: BBR's bottleneck-bandwidth estimate, else x_i.
fn bandwidth(s: &SubflowView) -> f64 { if rate_based(s) && s.bw_bps > 0.0 { s.bw_bps / 8.0 } else { rate(s) } }

/// r_i in seconds: min RTT, SRTT before the first sample, 1 µs when neither exists (so
/// that x/r stays a number).
fn rtt(s: &SubflowView) -> f64 {
    let r = if s.min_rtt > SimTime::ZERO { s.min_rtt } else { s.srtt };
    r.secs_f64().max(1e-6)
}

/// The rate is steady enough to predict: PROBE_BW, or congestion avoidance for the
/// window-based stand-in.
fn steady(s: &SubflowView) -> bool {
    if rate_based(s) {
        s.cc_mode == "probe_bw"
    } else {
        s.cwnd >= s.ssthresh && s.ca_state == CaState::Open
    }
}

/// Segments at or after `dsn`, in data-sequence order.
fn segs_from<'a>(segs: &MetaSegs<'a>, dsn: u64) -> impl Iterator<Item = &'a MetaSeg> + 'a {
    let i = segs.front.partition_point(|s| s.dsn < dsn);
    let j = segs.back.partition_point(|s| s.dsn < dsn);
    segs.front[i..].iter().chain(segs.back[j..].iter())
}

pub struct Arp {
    /// Bit i: subflow i is in N (non-redundant).
    non_redundant: u64,
    /// Bit i: subflow i was in S at the last decision (R = S − N).
    decided_for: u64,
    next_decision: SimTime,
    /// Per subflow: end of the last data copied on it (redundant subflows walk the meta
    /// retransmission queue).
    copied_to: Vec<u64>,
    /// Round-robin fallback: the subflow that took the last turn.
    rr_last: Option<usize>,
    /// Changes of the redundant set for the subflow event log.
    notes: Vec<StatusNote>,
}

impl Default for Arp {
    fn default() -> Self { Self::new() }
}

impl Arp {
    pub fn new() -> Self { Arp { non_redundant: 0, decided_for: 0, next_decision: SimTime::ZERO, copied_to: Vec::new(), rr_last: None, notes: Vec::new() } }

    /// Bit i set: subflow i is non-redundant after the last decision.
    pub fn non_redundant(&self) -> u64 { self.non_redundant }

    /// S: established active subflows, or the established backups when there are none.
    fn usable(v: &SchedView) -> Vec<usize> {
        let active: Vec<usize> = v.order.iter().copied().filter(|&i| v.subflows[i].established && !v.subflows[i].backup).collect();
        if !active.is_empty() {
            return active;
        }
        v.order.iter().copied().filter(|&i| v.subflows[i].established).collect()
    }

    /// AR-Scheduling, every min_{i∈S} r_i or when S changes.
    fn handle_decision(&mut self, v: &SchedView) {
        let set = Self::usable(v);
        let mask = set.iter().fold(0u64, |m, &i| m | 1 << i);
        if mask == self.decided_for && v.now < self.next_decision {
            return;
        }
        let est: Vec<PathEstimate> = set.iter().map(|&i| PathEstimate { x: rate(&v.subflows[i]), r: rtt(&v.subflows[i]), inflight_pkts: v.subflows[i].in_flight }).collect();
        let in_n = ar_partition(&est);
        let before = self.non_redundant & self.decided_for;
        self.non_redundant = set.iter().zip(&in_n).filter(|(_, &m)| m).fold(0u64, |m, (&i, _)| m | 1 << i);
        // Report the redundant set in the subflow event log (status "redundant").
        let r_before = self.decided_for & !before;
        let r_now = mask & !self.non_redundant;
        for &i in &set {
            let (was, is) = (r_before & 1 << i != 0, r_now & 1 << i != 0);
            if was != is {
                self.notes.push(StatusNote { at: v.now, subflow: i, status: is.then_some("redundant"), reason: "arp" });
            }
        }
        self.decided_for = mask;
        let period = est.iter().map(|p| p.r).fold(f64::INFINITY, f64::min);
        self.next_decision = if period.is_finite() { v.now + SimTime::from_secs_f64(period) } else { v.now };
    }

    /// New data on N: P-Scheduling in PROBE_BW, round-robin otherwise.
    fn poll_new_data(&mut self, v: &SchedView) -> Option<Action> {
        let subs = v.subflows;
        let n: Vec<usize> = v.order.iter().copied().filter(|&i| self.non_redundant & 1 << i != 0 && subs[i].established && subs[i].ca_state != CaState::Loss).collect();
        if n.is_empty() {
            return None;
        }
        let len = v.meta.next_len;
        if !n.iter().all(|&i| steady(&subs[i])) {
            return self.poll_round_robin(v, &n);
        }
        // Algorithm 3: earliest predicted arrival, first in list order on ties.
        let mut best = n[0];
        let mut best_a = f64::INFINITY;
        for &i in &n {
            let a = predicted_arrival(subs[i].queued_bytes, rate(&subs[i]), rtt(&subs[i]));
            if a < best_a {
                best = i;
                best_a = a;
            }
        }
        let s = &subs[best];
        if s.queued_bytes == 0 && s.has_space() {
            return Some(Action::Send { sub: best, seg: Segment::New });
        }
        // Scheduling window: max_{i∈N} RTT_i · Σ_{i∈N} BW_i bytes of pre-scheduled data.
        let max_r = n.iter().map(|&i| rtt(&subs[i])).fold(0.0, f64::max);
        let sum_bw: f64 = n.iter().map(|&i| bandwidth(&subs[i])).sum();
        let window = (max_r * sum_bw).max(s.mss as f64);
        let queued: u64 = subs.iter().map(|s| s.queued_bytes).sum();
        ((queued + len as u64) as f64 <= window).then_some(Action::Enqueue { sub: best, bytes: len })
    }

    /// Round-robin over N: the next subflow after the last turn whose cwnd has room.
    fn poll_round_robin(&mut self, v: &SchedView, n: &[usize]) -> Option<Action> {
        let start = self.rr_last.and_then(|l| n.iter().position(|&i| i == l)).map_or(0, |p| p + 1);
        for k in 0..n.len() {
            let i = n[(start + k) % n.len()];
            let s = &v.subflows[i];
            if !RoundRobin::available(s, true) {
                continue;
            }
            self.rr_last = Some(i);
            if s.queued_bytes == 0 && s.can_transmit_now() {
                return Some(Action::Send { sub: i, seg: Segment::New });
            }
            return Some(Action::Enqueue { sub: i, bytes: v.meta.next_len });
        }
        None
    }

    /// A copy for the first redundant subflow (list order) that can send now.
    fn poll_copy(&mut self, v: &SchedView) -> Option<Action> {
        let r_mask = self.decided_for & !self.non_redundant;
        for &i in v.order {
            if r_mask & 1 << i == 0 || !v.subflows[i].available() {
                continue;
            }
            let bit = 1u64 << i;
            let from = self.copied_to[i].max(v.meta.data_una);
            // Data sent on some other subflow and not yet on this one.
            if let Some(seg) = segs_from(&v.segs, from).find(|s| s.path_mask & bit == 0 && s.path_mask & !bit != 0) {
                self.copied_to[i] = seg.dsn + seg.len as u64;
                return Some(Action::Send { sub: i, seg: Segment::Copy { dsn: seg.dsn, len: seg.len } });
            }
        }
        None
    }
}

impl Scheduler for Arp {
    fn name(&self) -> &'static str { "arp" }

    fn needs_rates(&self) -> bool { true }

    fn drain_status_notes(&mut self, out: &mut Vec<StatusNote>) { out.append(&mut self.notes); }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if self.copied_to.len() < v.subflows.len() {
            self.copied_to.resize(v.subflows.len(), 0);
        }
        self.handle_decision(v);
        if let Some((_, _, mask)) = v.meta.reinject {
            if let Ok(Some(sub)) = MinRtt::pick(v.subflows, v.order, mask) {
                if v.subflows[sub].can_transmit_now() {
                    out.push(Action::Send { sub, seg: Segment::Reinject });
                    return;
                }
            }
        }
        if v.meta.new_data {
            if let Some(a) = self.poll_new_data(v) {
                out.push(a);
                return;
            }
        }
        if let Some(a) = self.poll_copy(v) {
            out.push(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{MetaView, SchedView};
    use super::*;

    /// `x` in Mbit/s (pacing rate = BBR bandwidth), `r` min RTT in ms, PROBE_BW.
    fn bbr(x_mbit: f64, r_ms: u64, in_flight: u32) -> SubflowView {
        SubflowView { pacing_rate_bps: x_mbit * 1e6, bw_bps: x_mbit * 1e6, min_rtt: SimTime::from_ms(r_ms), cc_mode: "probe_bw", ..sub(r_ms, 1000, in_flight) }
    }

    fn est(x: f64, r_ms: f64, inflight_pkts: u32) -> PathEstimate { PathEstimate { x, r: r_ms / 1e3, inflight_pkts } }

    fn run(s: &mut Arp, subs: &[SubflowView], meta: MetaView) -> Vec<Action> {
        let order: Vec<usize> = (0..subs.len()).collect();
        let mut out = vec![];
        s.schedule(&view(subs, &order, meta), &mut out);
        out
    }

    #[test]
    fn equal_paths_are_both_non_redundant() {
        // schedulers.md §4.6: x = (10, 10) Mbit/s, r = (20, 20) ms: 10/10 > −1 ⇒ added.
        assert_eq!(ar_partition(&[est(10.0, 20.0, 10), est(10.0, 20.0, 10)]), vec![true, true]);
        let mut s = Arp::new();
        run(&mut s, &[bbr(10.0, 20, 10), bbr(10.0, 20, 10)], new_data(0, 1448));
        assert_eq!(s.non_redundant(), 0b11);
    }

    #[test]
    fn a_slow_long_path_is_only_redundant() {
        // x = (10, 1), r = (10, 200) ms: 1/10 = 0.1 > 18? no ⇒ subflow 2 in R.
        assert_eq!(ar_partition(&[est(10.0, 10.0, 10), est(1.0, 200.0, 10)]), vec![true, false]);
        // Listed the other way round: the sort still puts the fast path first.
        assert_eq!(ar_partition(&[est(1.0, 200.0, 10), est(10.0, 10.0, 10)]), vec![false, true]);
        let mut s = Arp::new();
        let subs = [bbr(10.0, 10, 10), bbr(1.0, 200, 10)];
        assert_eq!(run(&mut s, &subs, new_data(0, 1448)), vec![Action::Send { sub: 0, seg: Segment::New }]);
        assert_eq!(s.non_redundant(), 0b01);
        // Subflow 0 held by its pacer: the packet is pre-scheduled on it, never sent new
        // on the redundant subflow.
        let held = [SubflowView { pacing_ok: false, ..subs[0] }, subs[1]];
        assert_eq!(run(&mut s, &held, new_data(0, 1448)), vec![Action::Enqueue { sub: 0, bytes: 1448 }]);
    }

    #[test]
    fn the_greedy_test_agrees_with_the_objective() {
        // x = (10, 1), r = (10, 200) ms: J({1}) = 0.0, J({1, 2}) = −0.908 (ln, r in ms).
        let p = [est(10.0, 10.0, 10), est(1.0, 200.0, 10)];
        let ms = |j: f64| j - (1e3f64).ln(); // r in s instead of ms adds ln 1000 to J
        assert!(ms(objective(&p, &[true, false])).abs() < 1e-9);
        assert!((ms(objective(&p, &[true, true])) + 0.908).abs() < 5e-4);
        // For two subflows the greedy step is the exact comparison of Eq. 3 (off its tie
        // at x = (10, 5), r = (10, 25), where rounding decides).
        for (x2, r2) in [(1.0, 200.0), (10.0, 20.0), (5.0, 24.0), (5.0, 26.0), (2.0, 15.0), (20.0, 80.0)] {
            let p = [est(10.0, 10.0, 10), est(x2, r2, 10)];
            let better = objective(&p, &[true, true]) > objective(&p, &[true, false]);
            let first_is_0 = 10.0 / 10.0 >= x2 / r2;
            if first_is_0 {
                assert_eq!(ar_partition(&p)[1], better, "x2 {x2} r2 {r2}");
            }
        }
    }

    #[test]
    fn a_candidate_with_fewer_than_4_packets_in_flight_stays_redundant() {
        // x = (10, 10), r = (20, 20) but inflight_2 = 3 ⇒ subflow 2 in R.
        assert_eq!(ar_partition(&[est(10.0, 20.0, 10), est(10.0, 20.0, 3)]), vec![true, false]);
        assert_eq!(ar_partition(&[est(10.0, 20.0, 10), est(10.0, 20.0, 4)]), vec![true, true]);
        // The first subflow needs no packets in flight.
        assert_eq!(ar_partition(&[est(10.0, 20.0, 0)]), vec![true]);
    }

    #[test]
    fn prediction_counts_only_data_queued_before_the_packet() {
        // Queued (0, 50 000 B), x = (1, 10) MB/s, r = (10, 40) ms: A_1 = 5 ms, A_2 = 25 ms.
        assert!((predicted_arrival(0, 1e6, 0.010) - 0.005).abs() < 1e-12);
        assert!((predicted_arrival(50_000, 10e6, 0.040) - 0.025).abs() < 1e-12);
        // Through the trait: both are non-redundant (x/r sorts subflow 2 first; subflow
        // 1: 0.1 > 10·(10 − 80)/(10·40) = −1.75), and the packet goes to subflow 1.
        let subs = [bbr(8.0, 10, 10), SubflowView { queued_bytes: 50_000, ..bbr(80.0, 40, 10) }];
        let mut s = Arp::new();
        assert_eq!(run(&mut s, &subs, new_data(0, 1448)), vec![Action::Send { sub: 0, seg: Segment::New }]);
        assert_eq!(s.non_redundant(), 0b11);
        // With 100 kB queued on subflow 1 (A_1 = 105 ms), subflow 2 wins; data is queued
        // there, so the packet is pre-scheduled (window 40 ms · 11 MB/s = 440 kB).
        let subs = [SubflowView { queued_bytes: 100_000, ..subs[0] }, SubflowView { pacing_ok: false, ..subs[1] }];
        let mut s = Arp::new();
        assert_eq!(run(&mut s, &subs, new_data(0, 1448)), vec![Action::Enqueue { sub: 1, bytes: 1448 }]);
    }

    #[test]
    fn pre_scheduling_stops_at_the_scheduling_window() {
        // Window = 20 ms · (10 + 10) Mbit/s = 50 000 B; 49 000 B already queued.
        let a = SubflowView { queued_bytes: 24_500, pacing_ok: false, ..bbr(10.0, 20, 10) };
        let mut s = Arp::new();
        assert_eq!(run(&mut s, &[a, a], new_data(0, 1000)), vec![Action::Enqueue { sub: 0, bytes: 1000 }]);
        assert_eq!(run(&mut s, &[a, a], new_data(0, 1448)), vec![], "49 000 + 1448 > 50 000");
    }

    #[test]
    fn outside_probe_bw_new_data_goes_round_robin() {
        let a = SubflowView { cc_mode: "startup", ..bbr(10.0, 20, 10) };
        let mut s = Arp::new();
        let seq: Vec<Action> = (0..4).flat_map(|_| run(&mut s, &[a, a], new_data(0, 1448))).collect();
        let subs: Vec<usize> = seq.iter().map(|x| if let Action::Send { sub, seg: Segment::New } = x { *sub } else { usize::MAX }).collect();
        assert_eq!(subs, vec![0, 1, 0, 1]);
        // In PROBE_BW the same view goes to the earliest arrival: subflow 0 each time.
        let mut s = Arp::new();
        let b = bbr(10.0, 20, 10);
        assert!((0..4).all(|_| run(&mut s, &[b, b], new_data(0, 1448)) == vec![Action::Send { sub: 0, seg: Segment::New }]));
    }

    #[test]
    fn redundant_subflows_copy_unacknowledged_data_in_order_and_never_send_new_data() {
        let subs = [SubflowView { in_flight: 1000, ..bbr(10.0, 10, 10) }, bbr(1.0, 200, 10)];
        let segs = [MetaSeg::new(0, 1448, 0b01), MetaSeg::new(1448, 1448, 0b01)];
        let mut s = Arp::new();
        let mut copies = vec![];
        for _ in 0..3 {
            let mut out = vec![];
            let meta = MetaView { data_una: 0, ..new_data(2896, 0) };
            let v = SchedView { segs: MetaSegs { front: &segs, back: &[] }, ..view(&subs, &[0, 1], meta) };
            s.schedule(&v, &mut out);
            copies.extend(out);
        }
        // All data is sent (on subflow 0, whose cwnd is full); subflow 1 copies segment 0
        // then 1, then has nothing left to copy.
        assert_eq!(s.non_redundant(), 0b01);
        assert_eq!(copies, vec![Action::Send { sub: 1, seg: Segment::Copy { dsn: 0, len: 1448 } }, Action::Send { sub: 1, seg: Segment::Copy { dsn: 1448, len: 1448 } }]);
    }

    #[test]
    fn reinjections_go_first_on_the_minrtt_choice() {
        let subs = [bbr(10.0, 10, 10), bbr(1.0, 200, 10)];
        let meta = MetaView { reinject: Some((0, 1448, 0b10)), ..new_data(1448, 1448) };
        assert_eq!(run(&mut Arp::new(), &subs, meta), vec![Action::Send { sub: 0, seg: Segment::Reinject }]);
    }

    #[test]
    fn a_backup_subflow_is_neither_striped_nor_copied_while_an_active_one_is_usable() {
        let subs = [bbr(10.0, 20, 10), SubflowView { backup: true, ..bbr(10.0, 20, 10) }];
        let mut s = Arp::new();
        run(&mut s, &subs, new_data(0, 1448));
        assert_eq!(s.non_redundant(), 0b01);
        let segs = [MetaSeg::new(0, 1448, 0b01)];
        let v = SchedView { segs: MetaSegs { front: &segs, back: &[] }, ..view(&subs, &[0, 1], MetaView { data_una: 0, ..new_data(1448, 0) }) };
        let mut out = vec![];
        s.schedule(&v, &mut out);
        assert_eq!(out, vec![], "no copy on the backup");
        // The active subflow gone: the backup becomes the non-redundant subflow at once.
        let down = [SubflowView { established: false, ..subs[0] }, subs[1]];
        assert_eq!(run(&mut s, &down, new_data(1448, 1448)), vec![Action::Send { sub: 1, seg: Segment::New }]);
    }

    #[test]
    fn window_based_controllers_use_the_cwnd_stand_in() {
        // Reno-like: x = cwnd · mss / srtt. (100 pkts, 10 ms) vs (4 pkts, 200 ms): R.
        let fast = SubflowView { ssthresh: 50, ..sub(10, 100, 50) };
        let slow = SubflowView { ssthresh: 2, ..sub(200, 4, 4) };
        assert!((rate(&fast) - 100.0 * 1448.0 / 0.010).abs() < 1e-6);
        let mut s = Arp::new();
        run(&mut s, &[fast, slow], new_data(0, 1448));
        assert_eq!(s.non_redundant(), 0b01);
        assert!(steady(&fast) && !steady(&SubflowView { ssthresh: 200, ..fast }));
    }

    #[test]
    fn the_decision_is_kept_for_one_min_rtt() {
        let mut s = Arp::new();
        let good = [bbr(10.0, 20, 10), bbr(10.0, 20, 10)];
        let bad = [bbr(10.0, 20, 10), bbr(10.0, 20, 2)];
        let at = |ms: u64, subs: &[SubflowView; 2], s: &mut Arp| {
            let mut out = vec![];
            s.schedule(&SchedView { now: SimTime::from_secs(1) + SimTime::from_ms(ms), ..view(subs, &[0, 1], new_data(0, 1448)) }, &mut out);
            s.non_redundant()
        };
        assert_eq!(at(0, &good, &mut s), 0b11);
        assert_eq!(at(19, &bad, &mut s), 0b11, "within min RTT (20 ms): kept");
        assert_eq!(at(20, &bad, &mut s), 0b01, "after min RTT: decided again");
    }
}
