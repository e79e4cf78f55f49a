//! wVegas, weighted Vegas (Cao, Xu, Fu, "Delay-based Congestion Control for Multipath
//! TCP", IEEE ICNP 2012), as the out-of-tree Linux module `net/mptcp/mptcp_wvegas.c`
//! (v0.94/v0.95, identical). Reference `cc-coupled.md` §3.4.
//!
//! Once per RTT each subflow compares its backlog `diff = cwnd · (rtt − base)/rtt`
//! (packets queued, with `rtt` the *mean* RTT of the round) with its share `alpha` of a
//! connection-wide total backlog of 10 packets, the share being its rate's weight among
//! the subflows' rates (paper §III). It then moves cwnd by one packet, and halves it
//! (roughly) when the queueing delay doubles.
//!
//! **The zero-queue trap.** When the mean RTT of a round equals the base RTT, as on a
//! jitter-free simulated link that never queues, the queueing delay q is 0; Linux sets
//! `queue_delay = 0` and then `q >= 2 · queue_delay` holds (0 ≥ 0), so every
//! congestion-avoidance round multiplies cwnd by base/(2·rtt) = ½. cwnd then climbs back
//! in slow start (it is below ssthresh) and is halved again at the next round: wVegas
//! never settles. This is the Linux behaviour and the default; option
//! `zero_queue_halving = false` skips the drain when q = 0.
//!
//! Unlike the other coupled modules, mptcp_wvegas.c has no `mptcp(tp)` test: a plain TCP
//! flow runs the same delay-based algorithm with its weight fixed at 1 (alpha = 10). It
//! also ignores `tcp_is_cwnd_limited` except in its Reno fallbacks.

use super::multipath::live_paths;
use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling, Reno};
use crate::tcp::seq::after;
use crate::units::SimTime;

/// Module parameters `initial_alpha`, `total_alpha`, `gamma` and `MPTCP_WVEGAS_SCALE`.
const INITIAL_ALPHA: u32 = 2;
const TOTAL_ALPHA: u64 = 10;
const GAMMA: u32 = 1;
const SCALE: u32 = 16;

#[derive(Clone, Copy, Debug)]
pub struct WVegas {
    /// Right edge of the current round (`beg_snd_nxt`).
    beg_snd_nxt: u32,
    /// `doing_wvegas_now`: only in the Open state; Reno otherwise.
    doing: bool,
    /// RTT samples of the current round: count (u16 in Linux) and sum in µs.
    cnt_rtt: u16,
    sampled_rtt: u32,
    /// Smallest RTT sample ever seen, µs (`base_rtt`).
    base_rtt: u32,
    /// cwnd / rtt ×2^16 (packets per µs), measured when the backlog reached alpha.
    instant_rate: u64,
    /// This subflow's share of the connection's rate, ×2^16.
    weight: u64,
    alpha: u32,
    /// Smallest queueing delay seen since the last drain, µs.
    queue_delay: u32,
    pub zero_queue_halving: bool,
}

impl Default for WVegas {
    fn default() -> Self {
        WVegas {
            beg_snd_nxt: 0,
            doing: false,
            cnt_rtt: 0,
            sampled_rtt: 0,
            base_rtt: 0x7fff_ffff,
            instant_rate: 0,
            weight: 1 << SCALE,
            alpha: INITIAL_ALPHA,
            queue_delay: 0,
            zero_queue_halving: true,
        }
    }
}

impl WVegas {
    /// This subflow's backlog target in packets.
    pub fn alpha(&self) -> u32 { self.alpha }

    /// This subflow's share of the connection's rate, ×2^16.
    pub fn weight(&self) -> u64 { self.weight }

    /// RTT samples taken in the current round.
    pub fn round_samples(&self) -> u16 { self.cnt_rtt }

    /// cwnd / mean RTT ×2^16 (packets per µs), as last measured.
    pub fn instant_rate(&self) -> u64 { self.instant_rate }

    /// `wvegas_enable`: a new round from snd_nxt, alpha 2, weight 1.
    fn enable(&mut self, st: &CcState) {
        self.doing = true;
        self.beg_snd_nxt = st.snd_nxt;
        (self.cnt_rtt, self.sampled_rtt) = (0, 0);
        self.instant_rate = 0;
        self.alpha = INITIAL_ALPHA;
        self.weight = 1 << SCALE;
        self.queue_delay = 0;
    }

    /// `mptcp_wvegas_init`: forget the base RTT too.
    fn reset(&mut self, st: &CcState) {
        self.base_rtt = 0x7fff_ffff;
        self.enable(st);
    }

    /// `mptcp_wvegas_weight`: instant_rate · 2^16 / Σ instant_rate over the subflows that
    /// can send and have RTT samples in their current round; the old weight when either is
    /// 0 or the flow is not MPTCP.
    fn shared_weight(&self, st: &CcState, c: &Coupling) -> u64 {
        if c.meta.is_none() {
            return self.weight;
        }
        let total = live_paths(c, st, self.export())
            .filter(|(_, p)| p.established && p.vars[1] != 0)
            .fold(0u64, |t, (_, p)| t.wrapping_add(p.vars[0]));
        if total != 0 && self.instant_rate != 0 {
            (self.instant_rate << SCALE) / total
        } else {
            self.weight
        }
    }

    /// The once-per-RTT update with the round's mean RTT `rtt` (µs).
    fn round(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        // cnt_rtt > 2 here; each sample is ≥ 1 µs, so the mean is ≥ 1 unless the u32 sum wrapped
        // (Linux would then divide by zero).
        let rtt = (self.sampled_rtt / self.cnt_rtt as u32).max(1);
        let base = self.base_rtt;
        // target = cwnd · base/rtt; diff = cwnd · (rtt − base)/rtt, the packets queued.
        let target = st.cwnd as u64 * base as u64 / rtt as u64;
        let diff = (st.cwnd as u64 * rtt.wrapping_sub(base) as u64 / rtt as u64) as u32;
        if diff > GAMMA && st.in_slow_start() {
            // Leave slow start at the expected window (`mptcp_wvegas_ssthresh` = min(ssthresh, cwnd)).
            st.cwnd = st.cwnd.min((target as u32).wrapping_add(1));
            st.ssthresh = st.ssthresh.min(st.cwnd);
        } else if st.in_slow_start() {
            st.slow_start(ack.acked);
        } else {
            if diff >= self.alpha {
                // alpha = max(2, weight · total_alpha): this subflow's share of the backlog.
                self.instant_rate = ((st.cwnd as u64) << SCALE) / rtt as u64;
                self.weight = self.shared_weight(st, c);
                self.alpha = 2u32.max((self.weight.wrapping_mul(TOTAL_ALPHA) >> SCALE) as u32);
            }
            if diff > self.alpha {
                st.cwnd = st.cwnd.wrapping_sub(1);
                st.ssthresh = st.ssthresh.min(st.cwnd);
            } else if diff < self.alpha {
                st.cwnd = st.cwnd.saturating_add(1);
            }
            // Drain the queue when the queueing delay doubled since its minimum:
            // cwnd ·= base / (2·rtt).
            let q = rtt.wrapping_sub(base);
            if self.queue_delay == 0 || self.queue_delay > q {
                self.queue_delay = q;
            }
            let drain = q >= self.queue_delay.wrapping_mul(2) && (self.zero_queue_halving || q != 0);
            if drain {
                let backoff = ((base as u64) << SCALE) / rtt.wrapping_mul(2).max(1) as u64;
                st.cwnd = ((st.cwnd as u64 * backoff) >> SCALE) as u32;
                self.queue_delay = 0;
            }
        }
        st.cwnd = st.cwnd.clamp(2, st.cwnd_clamp.max(2));
        st.ssthresh = st.current_ssthresh();
    }
}

impl CongestionControl for WVegas {
    fn name(&self) -> &'static str { "wvegas" }

    fn needs_coupling(&self) -> bool { true }

    fn init(&mut self, _now: SimTime, st: &mut CcState) { self.reset(st) }

    /// `mptcp_wvegas_pkts_acked`: vrtt = rtt + 1 µs, so that a 0 µs sample still counts.
    fn on_rtt_sample(&mut self, _now: SimTime, _st: &mut CcState, rtt: Option<SimTime>, _acked: u32) {
        let Some(rtt) = rtt else { return };
        let vrtt = (rtt.us() as u32).wrapping_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.sampled_rtt = self.sampled_rtt.wrapping_add(vrtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
    }

    /// `mptcp_wvegas_cong_avoid`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        if !self.doing {
            return Reno.on_ack(st, ack, c);
        }
        if after(ack.ack_seq, self.beg_snd_nxt) {
            self.beg_snd_nxt = st.snd_nxt;
            if self.cnt_rtt <= 2 {
                Reno.on_ack(st, ack, c); // too few samples for a mean
            } else {
                self.round(st, ack, c);
            }
            (self.cnt_rtt, self.sampled_rtt) = (0, 0);
        } else if st.in_slow_start() {
            st.slow_start(ack.acked);
        }
    }

    /// `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, st: &CcState) -> u32 { Reno.ssthresh(st) }

    /// `mptcp_wvegas_state`: wVegas only in Open, Reno in every other state.
    fn on_state(&mut self, st: &mut CcState, state: CaState, _c: &Coupling) {
        if state == CaState::Open {
            self.enable(st);
        } else {
            self.doing = false;
        }
    }

    /// `mptcp_wvegas_cwnd_event`: re-initialise on CWND_RESTART, forget the rate on LOSS.
    fn on_event(&mut self, _now: SimTime, st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        match ev {
            CaEvent::CwndRestart => self.reset(st),
            CaEvent::Loss => self.instant_rate = 0,
            _ => {}
        }
    }

    /// `[instant_rate, sampled_rtt > 0]`: what the siblings' weight needs.
    fn export(&self) -> [u64; 2] { [self.instant_rate, (self.sampled_rtt > 0) as u64] }

    fn mode(&self) -> &'static str { if self.doing { "wvegas" } else { "reno" } }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled_driver::{opts, CoupledDriver};
    use crate::cc::AnyCc;

    fn wv(d: &CoupledDriver, i: usize) -> &WVegas {
        match &d.subs[i].cc {
            AnyCc::WVegas(w) => w,
            _ => unreachable!("a wVegas driver"),
        }
    }

    /// ACK subflow `i` up to and including the ACK that ends its round; returns the cwnd then.
    fn finish_round(d: &mut CoupledDriver, i: usize) -> u32 {
        for _ in 0..100_000 {
            d.ack(i, 1);
            if wv(d, i).round_samples() == 0 {
                return d.cwnd(i);
            }
        }
        unreachable!("no round boundary");
    }

    /// Subflows in congestion avoidance at `cwnds`, base RTT 100 ms measured by one ACK
    /// each (a round boundary with one sample: Reno), then every RTT sample `rtt_ms`.
    fn measured(plain: bool, params: &[(&str, &str)], cwnds: &[u32], rtt_ms: u64) -> CoupledDriver {
        let mut d = if plain { CoupledDriver::plain_tcp("wvegas", &opts(params), 100) } else { CoupledDriver::new("wvegas", &opts(params), &vec![100; cwnds.len()]) };
        for (i, &w) in cwnds.iter().enumerate() {
            d.set(i, w, 2);
            d.ack(i, 1);
            assert_eq!(d.cwnd(i), w);
            d.subs[i].rtt = SimTime::from_ms(rtt_ms);
        }
        d
    }

    #[test]
    fn rates_three_to_one_give_backlog_targets_seven_and_two() {
        // cc-coupled.md §3.4: weights 0.75/0.25 of total_alpha 10 → 7.5 and 2.5, floored.
        let mut d = measured(false, &[], &[300, 100], 110);
        // Subflow 1's first round: no sibling rate yet, weight 1, alpha 10; rate 300·2^16/110001 = 178.
        finish_round(&mut d, 0);
        assert_eq!((wv(&d, 0).instant_rate(), wv(&d, 0).alpha()), (178, 10));
        d.ack(0, 1); // a sample in its new round: its rate counts for the siblings
        // Subflow 2: rate 59, weight 59·2^16/(178 + 59) = 16314 (0.249) → alpha 2.
        finish_round(&mut d, 1);
        assert_eq!((wv(&d, 1).instant_rate(), wv(&d, 1).weight(), wv(&d, 1).alpha()), (59, 16314, 2));
        d.ack(1, 1);
        // Subflow 1 again: weight 178·2^16/237 = 49221 (0.751) → alpha 7.
        finish_round(&mut d, 0);
        assert_eq!((wv(&d, 0).weight(), wv(&d, 0).alpha()), (49221, 7));
    }

    #[test]
    fn a_backlog_of_four_packets_grows_a_lone_subflow_and_shrinks_one_with_a_fifth_of_the_rate() {
        // Base 100 ms, mean 105 ms, cwnd 100: diff = 100·5000/105001 = 4 ≥ alpha 2, so alpha is
        // recomputed: alone, weight 1 → alpha 10 > 4 → cwnd + 1.
        let mut d = measured(false, &[], &[100], 105);
        assert_eq!(finish_round(&mut d, 0), 101);
        assert_eq!(wv(&d, 0).alpha(), 10);
        // Next to a subflow with 4× the rate: weight 62·2^16/(62 + 249) = 13065 (0.2) → alpha 2 < 4 → cwnd − 1.
        let mut d = measured(false, &[], &[100, 400], 105);
        finish_round(&mut d, 1);
        d.ack(1, 1);
        assert_eq!(finish_round(&mut d, 0), 99);
        assert_eq!((wv(&d, 0).weight(), wv(&d, 0).alpha()), (13065, 2));
    }

    /// The trap (module comment): on a jitter-free link the mean RTT equals the base RTT, q = 0,
    /// and Linux drains every congestion-avoidance round: cwnd + 1, then × base/(2·rtt) = ½.
    /// Below ssthresh again, the next round slow-starts back to ssthresh and is drained at its
    /// end, so cwnd saws between ssthresh/2 and ssthresh forever. Without the zero-queue drain,
    /// wVegas adds one packet per round (diff 0 < alpha).
    #[test]
    fn with_no_queueing_delay_linux_wvegas_halves_every_congestion_avoidance_round() {
        let mut d = measured(false, &[], &[20], 100);
        d.subs[0].st.ssthresh = 20;
        let mut ends = vec![];
        let mut peak = 0;
        for _ in 0..5 {
            loop {
                d.ack(0, 1);
                peak = peak.max(d.cwnd(0));
                if wv(&d, 0).round_samples() == 0 {
                    break;
                }
            }
            ends.push(d.cwnd(0));
        }
        // 20 + 1 = 21 → 21·32768 >> 16 = 10; ssthresh stays 20 (tcp_current_ssthresh).
        assert_eq!(ends, vec![10; 5]);
        assert_eq!((peak, d.subs[0].st.ssthresh), (20, 20));
        let mut d = measured(false, &[("zero_queue_halving", "false")], &[20], 100);
        let ends: Vec<u32> = (0..5).map(|_| finish_round(&mut d, 0)).collect();
        assert_eq!(ends, vec![21, 22, 23, 24, 25]);
        // In slow start (before any loss) there is no drain: diff = 0 ≤ gamma, cwnd keeps doubling.
        let mut d = CoupledDriver::new("wvegas", &opts(&[]), &[100]);
        let ends: Vec<u32> = (0..3).map(|_| finish_round(&mut d, 0)).collect();
        assert!(ends.windows(2).all(|w| w[1] > w[0]), "{ends:?}");
    }

    #[test]
    fn the_queue_drains_when_the_queueing_delay_doubles() {
        // q = 2 ms sets queue_delay; then q = 5 ms ≥ 2·2 ms: cwnd ·= (100001 << 16)/(2·105001) >> 16,
        // i.e. × 0.476: (100 + 1 + 1)·31207 >> 16 = 48.
        let mut d = measured(false, &[], &[100], 102);
        assert_eq!(finish_round(&mut d, 0), 101); // diff 1 < 2: + 1, no drain (2 ms < 4 ms)
        d.subs[0].rtt = SimTime::from_ms(105);
        assert_eq!(finish_round(&mut d, 0), 48);
        // tcp_current_ssthresh keeps the 75 (101·3/4) of the round before: the next round
        // slow-starts back towards it.
        assert_eq!(d.subs[0].st.ssthresh, 75);
    }

    #[test]
    fn a_plain_tcp_flow_runs_wvegas_too_as_the_linux_module_has_no_mptcp_test() {
        // diff = 100·30000/130001 = 23 > alpha 10 (weight 1): cwnd − 1, where Reno would only grow.
        let mut d = measured(true, &[], &[100], 130);
        assert_eq!(finish_round(&mut d, 0), 99);
        assert_eq!(wv(&d, 0).alpha(), 10);
    }

    #[test]
    fn outside_the_open_state_it_is_reno_and_reopening_starts_afresh() {
        let mut d = measured(false, &[], &[10], 100);
        d.set_state(0, CaState::Disorder);
        assert_eq!(d.subs[0].cc.mode(), "reno");
        d.set(0, 10, 5);
        assert_eq!(d.acks_to_change(0, 100), Some(10)); // tcp_reno_cong_avoid: +1 per cwnd packets
        d.set_state(0, CaState::Open);
        assert_eq!((d.subs[0].cc.mode(), wv(&d, 0).alpha(), wv(&d, 0).weight()), ("wvegas", 2, 1 << 16));
    }

    #[test]
    fn an_rto_forgets_the_rate_the_siblings_see() {
        let mut d = measured(false, &[], &[300, 100], 110);
        finish_round(&mut d, 0);
        d.ack(0, 1);
        assert_eq!(d.subs[0].cc.export(), [178, 1]);
        d.rto(0);
        assert_eq!(d.subs[0].cc.export()[0], 0);
    }
}
