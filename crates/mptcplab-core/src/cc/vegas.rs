//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995), as Linux
//! `net/ipv4/tcp_vegas.c`. Reference `cc-uncoupled.md` §2.5.
//!
//! Once per RTT Vegas compares the window with what the path delivers at its base RTT
//! and keeps between `alpha` and `beta` of its own packets queued. Linux departs from
//! the paper: `diff` divides by baseRTT, the RTT is the minimum over the last RTT (not
//! the mean), slow start doubles every RTT (not every other), and loss recovery is
//! Reno's. Times are µs as in Linux, each sample + 1 µs (`vrtt`).

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling, Reno};
use crate::units::SimTime;

/// Linux's "no sample yet" for baseRTT and minRTT.
const NO_RTT_US: u32 = 0x7fff_ffff;

fn seq_after(a: u32, b: u32) -> bool { (b.wrapping_sub(a) as i32) < 0 }

/// Where the current Vegas round ends (Linux `beg_snd_nxt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoundEnd {
    /// The first ACK beyond this sequence ends the round.
    After(u32),
    /// Enabled with nothing in flight (init, `TxStart`, `CwndRestart`): Linux's
    /// `beg_snd_nxt = snd_nxt` equals snd_una then, so the next ACK of new data ends it.
    NextAck,
    /// Enabled by `set_state(Open)`, which Linux and the engine call while processing an
    /// ACK, before `cong_avoid`: `beg_snd_nxt` is the snd_nxt that ACK's sample carries.
    SndNxtOfNextAck,
}

#[derive(Clone, Debug)]
pub struct Vegas {
    /// Lower bound of own packets queued (Linux module parameter, packets).
    pub alpha: u32,
    /// Upper bound of own packets queued.
    pub beta: u32,
    /// Slow-start exit threshold.
    pub gamma: u32,
    /// `doing_vegas_now`: only in CA state Open, Reno otherwise.
    enabled: bool,
    round_end: RoundEnd,
    /// `baseRTT`: minimum `vrtt` since init or the last idle restart.
    base_rtt_us: u32,
    /// `minRTT`: minimum `vrtt` in the current round.
    min_rtt_us: u32,
    /// `cntRTT`: RTT samples in the current round.
    cnt_rtt: u32,
}

impl Vegas {
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas { alpha, beta, gamma, enabled: true, round_end: RoundEnd::NextAck, base_rtt_us: NO_RTT_US, min_rtt_us: NO_RTT_US, cnt_rtt: 0 }
    }

    /// Linux `vegas_enable`.
    fn enable(&mut self, round_end: RoundEnd) {
        self.enabled = true;
        self.round_end = round_end;
        self.cnt_rtt = 0;
        self.min_rtt_us = NO_RTT_US;
    }

    /// Linux `tcp_vegas_init`: forget baseRTT and start a fresh round.
    fn restart(&mut self) {
        self.base_rtt_us = NO_RTT_US;
        self.enable(RoundEnd::NextAck);
    }

    /// The once-per-RTT update of `tcp_vegas_cong_avoid`, with enough samples.
    fn adjust(&self, st: &mut CcState, acked: u32) {
        let rtt = self.min_rtt_us;
        let base = self.base_rtt_us;
        // Expected window at the measured rate: target = cwnd · baseRTT / rtt (u64, tcp_vegas.c).
        let target = (st.cwnd as u64 * base as u64 / rtt as u64) as u32;
        // Linux Diff = cwnd · (rtt − baseRTT) / baseRTT, packets queued, in u32 as Linux
        // (the product wraps past 2^32). The paper divides by rtt instead.
        let diff = st.cwnd.wrapping_mul(rtt.wrapping_sub(base)) / base;
        if diff > self.gamma && st.in_slow_start() {
            // Leave slow start at the rate the path delivers, +1 for truncation.
            st.cwnd = st.cwnd.min(target.saturating_add(1));
            st.ssthresh = st.ssthresh.min(st.cwnd);
        } else if st.in_slow_start() {
            st.slow_start(acked);
        } else if diff > self.beta {
            st.cwnd = st.cwnd.saturating_sub(1);
            st.ssthresh = st.ssthresh.min(st.cwnd);
        } else if diff < self.alpha {
            st.cwnd = st.cwnd.saturating_add(1);
        }
        if st.cwnd < 2 {
            st.cwnd = 2;
        } else if st.cwnd > st.cwnd_clamp {
            st.cwnd = st.cwnd_clamp;
        }
        st.ssthresh = st.current_ssthresh();
    }
}

impl Default for Vegas {
    fn default() -> Self { Vegas::new(2, 4, 1) }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str { "vegas" }

    fn init(&mut self, _now: SimTime, _st: &mut CcState) { self.restart(); }

    /// `tcp_vegas_pkts_acked`: vrtt = rtt + 1 µs, min-filtered per round and for life.
    fn on_rtt_sample(&mut self, _now: SimTime, _st: &mut CcState, rtt: Option<SimTime>, _acked: u32) {
        let Some(rtt) = rtt else { return };
        let vrtt = rtt.us().min(u32::MAX as u64 - 1) as u32 + 1;
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    /// `tcp_vegas_cong_avoid`. Like Linux, the Vegas update does not require the
    /// window to be the limit; the Reno fallback does.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        if !self.enabled {
            Reno.on_ack(st, ack, c);
            return;
        }
        if self.round_end == RoundEnd::SndNxtOfNextAck {
            self.round_end = RoundEnd::After(ack.snd_nxt);
        }
        let round_over = match self.round_end {
            RoundEnd::After(beg_snd_nxt) => seq_after(ack.ack_seq, beg_snd_nxt),
            RoundEnd::NextAck => true,
            RoundEnd::SndNxtOfNextAck => false,
        };
        if round_over {
            self.round_end = RoundEnd::After(ack.snd_nxt);
            // Two samples or fewer are likely all delayed ACKs: behave as Reno.
            if self.cnt_rtt <= 2 {
                Reno.on_ack(st, ack, c);
            } else {
                self.adjust(st, ack.acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt_us = NO_RTT_US;
        } else if st.in_slow_start() {
            st.slow_start(ack.acked);
        }
    }

    /// `tcp_reno_ssthresh`: losses are handled as Reno.
    fn ssthresh(&mut self, st: &CcState) -> u32 { (st.cwnd >> 1).max(2) }

    /// `tcp_vegas_state`.
    fn on_state(&mut self, _st: &mut CcState, state: CaState, _c: &Coupling) {
        if state == CaState::Open {
            self.enable(RoundEnd::SndNxtOfNextAck);
        } else {
            self.enabled = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: after idle, stale samples are dropped, baseRTT included.
    fn on_event(&mut self, _now: SimTime, _st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_driver::Driver;
    use crate::cc::INFINITE_SSTHRESH;

    const NOW: SimTime = SimTime::ZERO;

    fn sample(v: &mut Vegas, st: &mut CcState, rtt_us: u64) { v.on_rtt_sample(NOW, st, Some(SimTime::from_us(rtt_us)), 1); }

    fn ack(v: &mut Vegas, st: &mut CcState, ack_seq: u32, snd_nxt: u32) {
        v.on_ack(st, &AckSample::simple(NOW, 1, ack_seq, snd_nxt, None), &Coupling::alone());
    }

    /// One round with a single `base_us` sample (too few for Vegas, and not cwnd-limited,
    /// so Reno leaves cwnd alone), then a round of three `rtt_us` samples and the ACK
    /// that ends it. Returns (cwnd, ssthresh) after that Vegas decision.
    fn decide(cwnd: u32, ssthresh: u32, base_us: u64, rtt_us: u64) -> (u32, u32) {
        let mut v = Vegas::default();
        let mut st = CcState::new(cwnd, 1448);
        st.ssthresh = ssthresh;
        v.init(NOW, &mut st);
        sample(&mut v, &mut st, base_us);
        let not_limited = AckSample { cwnd_limited: false, ..AckSample::simple(NOW, 1, 1, 100, None) };
        v.on_ack(&mut st, &not_limited, &Coupling::alone());
        assert_eq!((st.cwnd, v.round_end, v.cnt_rtt), (cwnd, RoundEnd::After(100), 0));
        for _ in 0..3 {
            sample(&mut v, &mut st, rtt_us);
        }
        ack(&mut v, &mut st, 101, 200);
        assert_eq!((v.cnt_rtt, v.min_rtt_us), (0, NO_RTT_US), "the decision wipes the round");
        (st.cwnd, st.ssthresh)
    }

    // §2.5 vectors, baseRTT 100 ms and rtt 110 ms as Vegas holds them (vrtt = sample + 1 µs).
    const BASE: u64 = 99_999;
    const RTT: u64 = 109_999;

    #[test]
    fn vegas_holds_cwnd_30_with_three_packets_queued() {
        // diff = 30 · 10 / 100 = 3 ∈ [alpha, beta]. ssthresh = max(20, 3/4 · 30).
        assert_eq!(decide(30, 20, BASE, RTT), (30, 22));
    }

    #[test]
    fn vegas_shrinks_cwnd_50_with_five_packets_queued() {
        // diff = 5 > beta: −1; ssthresh = min(20, 49), then tcp_current_ssthresh = 36.
        assert_eq!(decide(50, 20, BASE, RTT), (49, 36));
    }

    #[test]
    fn vegas_grows_cwnd_15_with_one_packet_queued() {
        // diff = ⌊1.5⌋ = 1 < alpha: +1.
        assert_eq!(decide(15, 10, BASE, RTT), (16, 12));
    }

    #[test]
    fn vegas_leaves_slow_start_at_the_delivered_rate_plus_one() {
        // diff = 3 > gamma: cwnd = min(32, ⌊32 · 100/110⌋ + 1) = 30, ssthresh 30.
        assert_eq!(decide(32, INFINITE_SSTHRESH, BASE, RTT), (30, 30));
        // No queueing: slow start goes on.
        assert_eq!(decide(32, INFINITE_SSTHRESH, BASE, BASE), (33, INFINITE_SSTHRESH));
    }

    #[test]
    fn the_added_microsecond_moves_round_rtts_below_the_integer_steps() {
        // Raw samples of exactly 100 and 110 ms become 100.001/110.001 ms:
        // 50 · 10 000 / 100 001 = 4 (hold, not −1) and 30 → 2 (still hold).
        assert_eq!(decide(50, 20, 100_000, 110_000), (50, 37));
        assert_eq!(decide(30, 20, 100_000, 110_000), (30, 22));
    }

    #[test]
    fn vegas_behaves_as_reno_with_two_samples_or_fewer_in_a_round() {
        let mut v = Vegas::default();
        let mut st = CcState::new(50, 1448);
        st.ssthresh = 20;
        v.init(NOW, &mut st);
        sample(&mut v, &mut st, BASE);
        ack(&mut v, &mut st, 1, 100); // round 1: Reno, cwnd_cnt 1
        sample(&mut v, &mut st, 300_000);
        sample(&mut v, &mut st, 300_000);
        ack(&mut v, &mut st, 101, 200); // round 2: 2 samples, Reno again despite diff 100
        assert_eq!((st.cwnd, st.cwnd_cnt), (50, 2));
    }

    #[test]
    fn vegas_slow_starts_between_round_ends_and_updates_once_per_round() {
        let mut v = Vegas::default();
        let mut st = CcState::new(10, 1448);
        v.init(NOW, &mut st);
        ack(&mut v, &mut st, 1, 11); // round end (no samples): Reno slow start
        assert_eq!(st.cwnd, 11);
        for s in 2..=11 {
            sample(&mut v, &mut st, 200_000);
            let snd_nxt = s + st.cwnd;
            ack(&mut v, &mut st, s, snd_nxt);
        }
        assert_eq!((st.cwnd, v.cnt_rtt), (21, 10), "tcp_slow_start per ACK inside the round");
        sample(&mut v, &mut st, 200_000);
        ack(&mut v, &mut st, 12, 40); // passes beg_snd_nxt = 11
        assert_eq!((st.cwnd, v.cnt_rtt, v.round_end), (22, 0, RoundEnd::After(40)));
    }

    #[test]
    fn vegas_is_reno_outside_open_and_restarts_its_round_on_reopening() {
        let mut v = Vegas::default();
        let mut st = CcState::new(40, 1448);
        st.ssthresh = 20;
        v.init(NOW, &mut st);
        v.on_state(&mut st, CaState::Recovery, &Coupling::alone());
        for _ in 0..40 {
            sample(&mut v, &mut st, 300_000);
            ack(&mut v, &mut st, 1, 50);
        }
        assert_eq!(st.cwnd, 41, "Reno: +1 per cwnd ACKs");
        v.on_state(&mut st, CaState::Open, &Coupling::alone());
        assert_eq!((v.cnt_rtt, v.min_rtt_us, v.base_rtt_us), (0, NO_RTT_US, 300_001));
        // The ACK that reopened carries snd_nxt 500: the round ends after it, not before.
        for _ in 0..3 {
            sample(&mut v, &mut st, 300_000);
        }
        ack(&mut v, &mut st, 400, 500);
        assert_eq!((st.cwnd, v.round_end, v.cnt_rtt), (41, RoundEnd::After(500), 3));
        ack(&mut v, &mut st, 501, 600);
        assert_eq!((st.cwnd, v.cnt_rtt), (42, 0), "round ended; no queueing: +1");
    }

    #[test]
    fn base_rtt_is_a_lifetime_minimum_reset_only_by_init_and_idle_restarts() {
        let mut v = Vegas::default();
        let mut st = CcState::new(10, 1448);
        v.init(NOW, &mut st);
        sample(&mut v, &mut st, 50_000);
        ack(&mut v, &mut st, 1, 20);
        sample(&mut v, &mut st, 80_000);
        v.on_state(&mut st, CaState::Recovery, &Coupling::alone());
        v.on_state(&mut st, CaState::Open, &Coupling::alone());
        assert_eq!(v.base_rtt_us, 50_001);
        v.on_event(NOW, &mut st, CaEvent::TxStart, &Coupling::alone());
        assert_eq!(v.base_rtt_us, NO_RTT_US);
        sample(&mut v, &mut st, 80_000);
        v.on_event(NOW, &mut st, CaEvent::CwndRestart, &Coupling::alone());
        assert_eq!((v.base_rtt_us, v.round_end), (NO_RTT_US, RoundEnd::NextAck));
    }

    #[test]
    fn a_lone_vegas_flow_keeps_two_to_four_packets_in_the_bottleneck_queue() {
        // Fluid bottleneck: 1000 pkt/s, 50 ms propagation RTT, BDP 50 packets; each RTT the
        // queue is what cwnd exceeds the BDP by, adding 1 ms per packet to the RTT.
        let base = SimTime::from_ms(50);
        let bdp = 50u32;
        let mut d = Driver::new(Vegas::default(), base);
        let mut tail = Vec::new();
        for round in 0..120 {
            let queue = d.st.cwnd.saturating_sub(bdp);
            d.rtt = base + SimTime::from_ms(queue as u64);
            d.round();
            if round >= 100 {
                tail.push(d.st.cwnd);
            }
        }
        assert!(d.st.ssthresh < INFINITE_SSTHRESH, "left slow start");
        for &cwnd in &tail {
            // Linux diff at this cwnd: cwnd · queueing delay / baseRTT ≈ packets queued.
            let queue = cwnd - bdp;
            let diff = cwnd * (queue * 1000) / (50_000 + 1);
            assert!((2..=4).contains(&queue), "queue {queue} at cwnd {cwnd}: {tail:?}");
            assert!((2..=4).contains(&diff), "diff {diff}");
        }
    }
}
