//! BALIA, Balanced Linked Adaptation (Peng, Walid, Hwang, Low, "Multipath TCP: Analysis,
//! Design, and Implementation", IEEE/ACM ToN 24(1), 2016), as the out-of-tree Linux module
//! `net/mptcp/mptcp_balia.c` (v0.95 by default, v0.94 with `kernel = "v0.94"`).
//! Reference `cc-coupled.md` §3.3.
//!
//! Paper (x_r = w_r/rtt_r, α_r = max_k x_k / x_r):
//!   per ACK  `w_r += (x_r/rtt_r)/(Σ_k x_k)² · (1+α_r)/2 · (4+α_r)/5`
//!   per loss `w_r −= (w_r/2) · min(α_r, 1.5)`.
//! Linux keeps per subflow `ai` (ACKs per +1 packet, the inverse of the increase) and `md`
//! (the decrease in packets), recomputed in slow start, after each CA increment and on
//! CA_EVENT_COMPLETE_CWR / CA_EVENT_LOSS.
//!
//! Linux quirk kept: `set_state` raises `forced_update` on the subflow but `cong_avoid`
//! tests the flag on the meta socket, which nothing sets, so the lazy recalculation after
//! a state change never happens.

use super::multipath::{ca_step, can_send, is_mptcp, live_paths, srtt_us, Growth, Kernel};
use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling, Reno, INFINITE_SSTHRESH};
use crate::units::SimTime;

/// mptcp_balia.c constants: rates above 2^25 B/s are scaled down 2^5 at a time; alpha is
/// ×2^10 in the decrease.
const RATE_SCALE_LIMIT: u32 = 25;
const ALPHA_SCALE: u32 = 10;
const SCALE_NUM: u32 = 5;
/// `USEC_PER_SEC << 3`: rates are mss · cwnd / (srtt_us / 8 µs) in bytes per second.
const USEC8_PER_SEC: u64 = 8_000_000;

#[derive(Clone, Copy, Debug)]
pub struct Balia {
    /// ACKs per +1 packet in congestion avoidance (0 until first computed).
    ai: u64,
    /// Packets to take off cwnd on a loss.
    md: u64,
    /// What the last hook with a connection view said: MPTCP, and Linux `cnt_established`.
    /// `ssthresh` gets no view, so it reads these (Reno until a view has been seen).
    mptcp: bool,
    cnt_established: usize,
    pub growth: Growth,
    pub kernel: Kernel,
    /// Linux floors α = max_rate / x_r, so `min(α, 1.5)` is 1 or 1.5; false uses the real ratio.
    pub integer_ratio: bool,
}

impl Default for Balia {
    fn default() -> Self {
        Balia { ai: 0, md: 0, mptcp: false, cnt_established: 1, growth: Growth::PerAck, kernel: Kernel::V095, integer_ratio: true }
    }
}

impl Balia {
    /// ACKs per +1 packet in congestion avoidance, as last computed.
    pub fn ai(&self) -> u64 { self.ai }

    /// Packets a loss takes off cwnd, as last computed.
    pub fn md(&self) -> u64 { self.md }

    fn observe(&mut self, c: &Coupling) {
        // `Coupling::alone()` (no view at all) tells nothing; a view without meta is plain TCP.
        if c.meta.is_some() || !c.subflows().is_empty() {
            self.mptcp = is_mptcp(c);
            self.cnt_established = c.cnt_established();
        }
    }

    /// v0.94 falls back to Reno with at most one established subflow.
    fn reno_fallback(&self) -> bool { self.kernel == Kernel::V094 && self.cnt_established <= 1 }

    /// `mptcp_balia_recalc_ai`.
    fn recalc_ai(&mut self, st: &CcState, c: &Coupling) {
        if !is_mptcp(c) {
            return; // `if (!mpcb) return;`
        }
        let cwnd = st.cwnd as u64;
        // Kept when the subflow itself cannot send (and by v0.94 with one subflow).
        (self.ai, self.md) = (cwnd, cwnd >> 1);
        if self.reno_fallback() {
            return;
        }
        // x_p = mss_r · cwnd_p · 8·10^6 / srtt_us_p (bytes/s; the *current* subflow's mss).
        let mss = st.mss as u64;
        let rate_of = |p: &super::SiblingView| mss.wrapping_mul(p.cwnd as u64).wrapping_mul(USEC8_PER_SEC) / srtt_us(p.srtt);
        let paths = || live_paths(c, st, [0; 2]).filter(|(_, p)| can_send(p));
        let (mut max_rate, mut rate, mut sum_rate) = (0u64, 0u64, 0u64);
        for (is_me, p) in paths() {
            let x = rate_of(&p);
            sum_rate = sum_rate.wrapping_add(x);
            if is_me {
                rate = x;
            }
            max_rate = max_rate.max(x);
        }
        if rate == 0 {
            return;
        }
        // α_r = max_k x_k / x_r, floored (Linux) or ×2^10 for the real ratio.
        let alpha = max_rate / rate;
        let ratio_scaled = ((max_rate as u128) << ALPHA_SCALE) / rate as u128;
        // Precision only: scale rates down while max_rate > 2^25.
        let mut shift = 0;
        while max_rate > 1 << RATE_SCALE_LIMIT {
            max_rate >>= SCALE_NUM;
            shift += SCALE_NUM;
        }
        if shift > 0 {
            sum_rate = paths().fold(0u64, |s, (_, p)| s.wrapping_add(rate_of(&p) >> shift));
            rate >>= shift;
        }
        // ai = (Σx)² · 10 · w_r / ((x_r + max) · (4·x_r + max)), the inverse of the paper's
        // per-ACK increase (x_r/rtt_r)/(Σx)² · (1+α)/2 · (4+α)/5 with α = max/x_r.
        let sq = sum_rate.wrapping_mul(sum_rate);
        let ai = sq.wrapping_mul(10) / rate.wrapping_add(max_rate);
        let ai = ai.wrapping_mul(cwnd) / (rate << 2).wrapping_add(max_rate);
        self.ai = if ai == 0 { cwnd } else { ai };
        // md = (w_r >> 1) · min(α, 1.5), ×2^10.
        let factor = if self.integer_ratio { (alpha as u128) << ALPHA_SCALE } else { ratio_scaled };
        let factor = factor.min((3 << ALPHA_SCALE) >> 1) as u64;
        self.md = ((cwnd >> 1) * factor) >> ALPHA_SCALE;
    }
}

impl CongestionControl for Balia {
    fn name(&self) -> &'static str { "balia" }

    fn needs_coupling(&self) -> bool { true }

    /// `mptcp_balia_cong_avoid`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        self.observe(c);
        if !self.mptcp {
            return Reno.on_ack(st, ack, c); // not MPTCP: tcp_reno_cong_avoid
        }
        if !ack.cwnd_limited {
            return;
        }
        if st.in_slow_start() {
            st.slow_start(ack.acked);
            return self.recalc_ai(st, c);
        }
        // `snd_cwnd = (int)ai`, compared unsigned: the low 32 bits. v0.94 with one subflow: cwnd.
        let thresh = if self.reno_fallback() { st.cwnd } else { self.ai as u32 };
        if ca_step(st, thresh, ack.acked, self.growth) {
            self.recalc_ai(st, c);
        }
    }

    /// `mptcp_balia_ssthresh`: `max(cwnd − md, 1)`; Reno when not MPTCP (and in v0.94 with
    /// one subflow). `cwnd − md` is u32 in Linux and wraps if cwnd fell below md since md was
    /// computed (e.g. an idle restart); the result is then above `TCP_INFINITE_SSTHRESH` and
    /// acts as "no threshold", so it is capped there.
    fn ssthresh(&mut self, st: &CcState) -> u32 {
        if !self.mptcp || self.reno_fallback() {
            return Reno.ssthresh(st);
        }
        ((st.cwnd as u64).wrapping_sub(self.md) as u32).clamp(1, INFINITE_SSTHRESH)
    }

    /// `mptcp_balia_set_state` only raises the flag nobody reads (see the module comment).
    fn on_state(&mut self, _st: &mut CcState, _state: CaState, c: &Coupling) { self.observe(c) }

    /// `mptcp_balia_cwnd_event`: recalculate on CA_EVENT_COMPLETE_CWR and CA_EVENT_LOSS.
    fn on_event(&mut self, _now: SimTime, st: &mut CcState, ev: CaEvent, c: &Coupling) {
        self.observe(c);
        if matches!(ev, CaEvent::CompleteCwr | CaEvent::Loss) {
            self.recalc_ai(st, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled_driver::{opts, CoupledDriver};
    use crate::cc::AnyCc;

    fn balia(d: &CoupledDriver, i: usize) -> &Balia {
        match &d.subs[i].cc {
            AnyCc::Balia(b) => b,
            _ => unreachable!("a BALIA driver"),
        }
    }

    /// Two subflows at cwnd 10 with RTTs `rtts`, ai and md computed (COMPLETE_CWR leaves cwnd alone).
    fn equal_windows(params: &[(&str, &str)], rtts: &[u64]) -> CoupledDriver {
        let mut d = CoupledDriver::new("balia", &opts(params), rtts);
        for i in 0..rtts.len() {
            d.set(i, 10, 5);
        }
        for i in 0..rtts.len() {
            d.event(i, CaEvent::CompleteCwr);
        }
        d
    }

    #[test]
    fn equal_windows_at_100_and_200_ms_grow_as_the_paper_with_ai_floored() {
        // cc-coupled.md §3.3: x = (100, 50) pkt/s, Σ = 150. Path 1: α = 1, per ACK 1000/22500
        // = 0.04444 = 1/22.5; path 2: α = 2, per ACK 250/22500 · 1.5 · 1.2 = 0.02 = 1/50.
        let mut d = equal_windows(&[("growth", "per_packet")], &[100, 200]);
        assert_eq!((balia(&d, 0).ai(), balia(&d, 0).md()), (22, 5));
        assert_eq!((balia(&d, 1).ai(), balia(&d, 1).md()), (50, 7));
        assert_eq!(d.acks_to_change(0, 100), Some(22));
        assert_eq!(d.acks_to_change(1, 100), Some(50));
        // The Linux counter takes ai + 1 ACKs.
        let mut d = equal_windows(&[], &[100, 200]);
        assert_eq!(d.acks_to_change(0, 100), Some(23));
        assert_eq!(d.acks_to_change(1, 100), Some(51));
    }

    #[test]
    fn a_loss_takes_one_and_a_half_halves_off_the_slow_path_and_one_half_off_the_fast_one() {
        // Path 2 (α = 2): md = (10 >> 1)·min(2, 1.5) = (5·1536) >> 10 = 7 → ssthresh 3 (paper 10 − 7.5 = 2.5).
        for params in [&[][..], &[("integer_ratio", "false")][..]] {
            let mut d = equal_windows(params, &[100, 200]);
            d.lose(1);
            assert_eq!((d.subs[1].st.ssthresh, d.cwnd(1)), (3, 3), "{params:?}");
            // Path 1 (α = 1): 10 − 5 = 5.
            d.lose(0);
            assert_eq!((d.subs[0].st.ssthresh, d.cwnd(0)), (5, 5), "{params:?}");
        }
    }

    #[test]
    fn linux_floors_a_rate_ratio_of_1_43_to_1_and_decreases_by_half_where_the_paper_takes_0_71() {
        // w = (10, 10), rtt = (70, 100) ms: x = (206857, 144800) B/s, ratio 1.43.
        let mut d = equal_windows(&[], &[70, 100]);
        assert_eq!(balia(&d, 1).md(), 5);
        d.lose(1);
        assert_eq!(d.subs[1].st.ssthresh, 5);
        // Real ratio: min(1.43, 1.5) = 1462/1024 → md = (5·1462) >> 10 = 7 (paper 5·1.43 = 7.14).
        let mut d = equal_windows(&[("integer_ratio", "false")], &[70, 100]);
        assert_eq!(balia(&d, 1).md(), 7);
        d.lose(1);
        assert_eq!(d.subs[1].st.ssthresh, 3);
    }

    #[test]
    fn a_lone_subflow_loses_at_7_to_4_under_v0_95_and_to_3_under_v0_94_or_plain_tcp() {
        // v0.95: ai = cwnd (Reno increase), md = 7 >> 1 = 3, ssthresh = 7 − 3 = 4 (Reno: 3).
        let mut d = CoupledDriver::new("balia", &opts(&[]), &[100]);
        d.set(0, 6, 7);
        d.ack(0, 1); // slow start to 7, recalculation
        assert_eq!((d.cwnd(0), balia(&d, 0).ai(), balia(&d, 0).md()), (7, 7, 3));
        d.lose(0);
        assert_eq!(d.subs[0].st.ssthresh, 4);
        // The increase is Reno's (+1 per ai + 1 = 8 ACKs with the Linux counter).
        let mut d = CoupledDriver::new("balia", &opts(&[]), &[100]);
        d.set(0, 6, 7);
        d.ack(0, 1);
        assert_eq!(d.acks_to_change(0, 100), Some(8));
        let mut d = CoupledDriver::new("balia", &opts(&[("kernel", "v0.94")]), &[100]);
        d.set(0, 6, 7);
        d.ack(0, 1);
        d.lose(0);
        assert_eq!(d.subs[0].st.ssthresh, 3);
        let mut d = CoupledDriver::plain_tcp("balia", &opts(&[]), 100);
        d.set(0, 6, 7);
        d.ack(0, 1);
        d.lose(0);
        assert_eq!(d.subs[0].st.ssthresh, 3);
    }

    #[test]
    fn a_state_change_does_not_recalculate_because_linux_tests_the_flag_on_the_meta_socket() {
        let mut d = equal_windows(&[("growth", "per_packet")], &[100, 200]);
        d.set(1, 40, 5); // the sibling grew: recalculated, ai_1 would be 50
        d.set_state(0, CaState::Disorder);
        assert_eq!(d.acks_to_change(0, 100), Some(22));
        // After the increment it does recalculate, with x = (159280, 289600).
        assert_ne!(balia(&d, 0).ai(), 22);
    }
}
