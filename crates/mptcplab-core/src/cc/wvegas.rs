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
