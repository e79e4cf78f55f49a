//! LIA, the Linked Increases Algorithm (RFC 6356), as the out-of-tree Linux MPTCP module
//! `net/mptcp/mptcp_coupled.c` ("lia", v0.94/v0.95). Reference `cc-coupled.md` §3.1.
//!
//! alpha lives in the connection's shared state (Linux: the meta socket's `ca_priv`):
//! `meta[0]` = alpha · 2^12 / cwnd_total (0 = never computed, read as 1), `meta[1]` = the
//! `forced_update` flag that `set_state` raises for the next congestion-avoidance ACK.
//!
//! Linux integer effects kept by default:
//! * the best path is the one maximising `(cwnd << 32) / srtt_us²`, with `srtt_us` in
//!   1/8 µs. The quotient is 0 once `srtt_us² > cwnd · 2^32`, i.e. RTT > 8.2 ms · √cwnd,
//!   and then every subflow ties at 0 and the *last* one wins (`>=`). Option
//!   `best_path = "exact"` compares cwnd/srtt² exactly (the RFC's max).
//! * the counter needs `thresh + 1` ACKs per packet, so even one subflow grows a little
//!   slower than Linux Reno (`multipath::ca_step`).

use std::cell::Cell;

use super::multipath::{ca_step, can_send, is_mptcp, live_paths, srtt_us, Growth, Kernel};
use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling, Reno};
use crate::units::SimTime;

/// `alpha_scale_num`, `alpha_scale_den`, `alpha_scale` of mptcp_coupled.c: alpha is kept
/// scaled by 2^32 / (2^10)² = 2^12.
const ALPHA_SCALE_NUM: u32 = 32;
const ALPHA_SCALE_DEN: u32 = 10;
const ALPHA_SCALE: u32 = 12;

/// How the best path (max cwnd/rtt², RFC 6356 §3) is found. Registry option `best_path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BestPath {
    /// Linux: `(cwnd << 32) / srtt_us²` in integers, ties to the later subflow.
    Linux,
    /// cwnd_i · srtt_j² against cwnd_j · srtt_i² in 128 bits, ties to the later subflow.
    Exact,
}

impl BestPath {
    pub fn from_choice(s: &str) -> BestPath { if s == "exact" { BestPath::Exact } else { BestPath::Linux } }
}

#[derive(Clone, Copy, Debug)]
pub struct Lia {
    pub growth: Growth,
    pub kernel: Kernel,
    pub best_path: BestPath,
}

impl Default for Lia {
    fn default() -> Self { Lia { growth: Growth::PerAck, kernel: Kernel::V095, best_path: BestPath::Linux } }
}

fn set_alpha(meta: &Cell<[u64; 2]>, alpha: u64) { meta.set([alpha, meta.get()[1]]) }
fn set_forced(meta: &Cell<[u64; 2]>, forced: bool) { meta.set([meta.get()[0], forced as u64]) }

impl Lia {
    /// `mptcp_ccc_recalc_alpha`: alpha · 2^12 / cwnd_total
    /// = `(cwnd_best << 32) / (Σ_i (cwnd_i << 10) · srtt_best / srtt_i)²`
    /// (RFC 6356 §3: alpha = cwnd_total · max(cwnd_i/rtt_i²) / (Σ cwnd_i/rtt_i)²).
    fn recalc_alpha(&self, st: &CcState, c: &Coupling) {
        let Some(meta) = c.meta else { return }; // `if (!mpcb) return;`
        // v0.94: `if (mpcb->cnt_established <= 1) goto exit;` (alpha = 1, Reno).
        if self.kernel == Kernel::V094 && c.cnt_established() <= 1 {
            return set_alpha(meta, 1);
        }
        // Only subflows that can send and have an RTT sample (`mptcp_ccc_sk_can_send`).
        let paths = || live_paths(c, st, [0; 2]).map(|(_, p)| p).filter(can_send);
        let (mut best_cwnd, mut best_rtt, mut max_numerator, mut can_send) = (0u64, 0u64, 0u64, 0);
        for p in paths() {
            let (cwnd, rtt) = (p.cwnd as u64, srtt_us(p.srtt));
            can_send += 1;
            let better = match self.best_path {
                // tmp = (cwnd << 32) / srtt_us²; `if (tmp >= max_numerator)`.
                BestPath::Linux => {
                    let tmp = (cwnd << ALPHA_SCALE_NUM) / rtt.wrapping_mul(rtt).max(1);
                    let b = tmp >= max_numerator;
                    if b {
                        max_numerator = tmp;
                    }
                    b
                }
                BestPath::Exact => can_send == 1 || cwnd as u128 * (best_rtt as u128).pow(2) >= best_cwnd as u128 * (rtt as u128).pow(2),
            };
            if better {
                best_cwnd = cwnd;
                best_rtt = rtt;
            }
        }
        if can_send == 0 {
            return set_alpha(meta, 1);
        }
        // sum_denominator = (Σ (cwnd_i << 10) · srtt_best / srtt_i)², u64 as Linux.
        let mut sum: u64 = 0;
        for p in paths() {
            let rtt = srtt_us(p.srtt); // non-zero: can_send
            sum = sum.wrapping_add(((p.cwnd as u64) << ALPHA_SCALE_DEN).wrapping_mul(best_rtt) / rtt);
        }
        let sum = sum.wrapping_mul(sum);
        // Linux divides by zero here if the square wrapped to 0 (it only logs); we keep alpha 1.
        let alpha = (best_cwnd << ALPHA_SCALE_NUM).checked_div(sum).unwrap_or(1);
        set_alpha(meta, alpha.max(1)); // `if (unlikely(!alpha)) alpha = 1;`
    }
}

impl CongestionControl for Lia {
    fn name(&self) -> &'static str { "lia" }

    fn needs_coupling(&self) -> bool { true }

    /// `mptcp_ccc_cong_avoid`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        let Some(meta) = c.meta else {
            return Reno.on_ack(st, ack, c); // not MPTCP: tcp_reno_cong_avoid
        };
        if !ack.cwnd_limited {
            return;
        }
        if st.in_slow_start() {
            // tcp_slow_start(tp, acked); the leftover is dropped.
            st.slow_start(ack.acked);
            return self.recalc_alpha(st, c);
        }
        if meta.get()[1] != 0 {
            self.recalc_alpha(st, c);
            set_forced(meta, false);
        }
        // thresh = max(2^12 / alpha, cwnd): per ACK min(alpha_RFC / cwnd_total, 1 / cwnd_i).
        let thresh = if self.kernel == Kernel::V094 && c.cnt_established() <= 1 {
            st.cwnd
        } else {
            let alpha = meta.get()[0].max(1);
            (((1u64 << ALPHA_SCALE) / alpha) as u32).max(st.cwnd)
        };
        if ca_step(st, thresh, ack.acked, self.growth) {
            self.recalc_alpha(st, c);
        }
    }

    /// `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, st: &CcState) -> u32 { Reno.ssthresh(st) }

    /// `mptcp_ccc_set_state`: any state change forces a recalculation at the next CA ACK.
    fn on_state(&mut self, _st: &mut CcState, _state: CaState, c: &Coupling) {
        if let Some(meta) = c.meta {
            set_forced(meta, true);
        }
    }

    /// `mptcp_ccc_cwnd_event`: recalculate on CA_EVENT_LOSS (RTO).
    fn on_event(&mut self, _now: SimTime, st: &mut CcState, ev: CaEvent, c: &Coupling) {
        if ev == CaEvent::Loss && is_mptcp(c) {
            self.recalc_alpha(st, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled_driver::{opts, CoupledDriver};
    use proptest::prelude::*;

    fn alpha(d: &CoupledDriver) -> u64 { d.meta.get()[0] }

    #[test]
    fn two_paths_at_100_and_200_ms_grow_one_fortieth_per_packet_as_rfc_6356_with_the_exact_best_path() {
        // cc-coupled.md §3.1: cwnd (10, 20), rtt (100, 200) ms: alpha_RFC = 30·(10/100²)/(10/100 + 20/200)²
        // = 0.75; per ACK min(0.75/30, 1/cwnd_i) = 0.025 on both.
        let mut d = CoupledDriver::new("lia", &opts(&[("best_path", "exact"), ("growth", "per_packet")]), &[100, 200]);
        d.set(0, 10, 5);
        d.set(1, 20, 5);
        d.event(0, CaEvent::Loss); // a recalculation point that leaves cwnd alone
        // (10 << 32) / ((10 << 10) + (20 << 10)·800000/1600000)² = 102 ≈ 2^12 · 0.75/30.
        assert_eq!(alpha(&d), 102);
        // thresh = max(4096/102, cwnd) = 40: +1 per 40 packets.
        assert_eq!(d.acks_to_change(0, 200), Some(40));
        // The increment recalculates: (11 << 32)/(11264 + 10240)² = 102 again, thresh 40 = max(40, 20).
        assert_eq!(alpha(&d), 102);
        assert_eq!(d.acks_to_change(1, 200), Some(40));
    }

    #[test]
    fn linux_lia_takes_the_last_subflow_as_best_once_the_integer_numerator_underflows() {
        // (cwnd << 32) / srtt_us² is 0 for both paths at 100 and 200 ms (srtt_us = 8·10^5, 1.6·10^6),
        // so the tie goes to the later subflow: alpha = (20 << 32)/(20480 + 20480)² = 51.
        let mut d = CoupledDriver::new("lia", &opts(&[]), &[100, 200]);
        d.set(0, 10, 5);
        d.set(1, 20, 5);
        d.event(0, CaEvent::Loss);
        assert_eq!(alpha(&d), 51);
        // thresh = 4096/51 = 80, and the Linux counter takes thresh + 1 ACKs: 1/81 per ACK, not 1/40.
        assert_eq!(d.acks_to_change(0, 200), Some(81));
        // Recalculated with cwnd (11, 20): (20 << 32)/(2·11264 + 20480)² = 46 → thresh 89.
        assert_eq!(alpha(&d), 46);
        assert_eq!(d.acks_to_change(1, 200), Some(90));
        // At LAN RTTs (1 and 2 ms) the quotients are 671 and 335, and Linux agrees with the RFC.
        let mut d = CoupledDriver::new("lia", &opts(&[]), &[1, 2]);
        d.set(0, 10, 5);
        d.set(1, 20, 5);
        d.event(0, CaEvent::Loss);
        assert_eq!(alpha(&d), 102);
    }

    #[test]
    fn three_equal_paths_grow_one_ninetieth_per_ack_each_and_a_third_of_a_packet_per_rtt_together() {
        // n = 3, w = 10: alpha_RFC = 1/3, per ACK alpha/cwnd_total = 1/90 = 0.0111. Linux:
        // (10 << 32)/(3·10240)² = 45, thresh 4096/45 = 91 (1/91 = 0.0110 per packet).
        let mut d = CoupledDriver::new("lia", &opts(&[("growth", "per_packet")]), &[100, 100, 100]);
        for i in 0..3 {
            d.set(i, 10, 5);
        }
        d.event(0, CaEvent::Loss);
        assert_eq!(alpha(&d), 45);
        assert_eq!(d.acks_to_change(0, 200), Some(91));
        // The aggregate grows by about 1/n = 1/3 packet per RTT (one Reno flow would add 1).
        let mut d = CoupledDriver::new("lia", &opts(&[("growth", "per_packet")]), &[100, 100, 100]);
        for i in 0..3 {
            d.set(i, 10, 5);
        }
        d.event(0, CaEvent::Loss);
        let rtts = 30;
        for _ in 0..rtts {
            for i in 0..3 {
                d.round(i);
            }
        }
        let growth: u32 = (0..3).map(|i| d.cwnd(i) - 10).sum();
        assert!((8..=10).contains(&growth), "aggregate growth {growth} over {rtts} RTTs");
    }

    #[test]
    fn one_subflow_under_v0_94_counts_like_reno_and_under_v0_95_is_slower_above_64_packets() {
        // v0.94: cnt_established <= 1 → thresh = cwnd, i.e. tcp_cong_avoid_ai(cwnd) per packet.
        let mut d = CoupledDriver::new("lia", &opts(&[("kernel", "v0.94"), ("growth", "per_packet")]), &[100]);
        d.set(0, 100, 50);
        assert_eq!(d.acks_to_change(0, 500), Some(100));
        assert_eq!(alpha(&d), 1);
        // v0.95 computes alpha from the subflow alone: ⌊4096/cwnd⌋, so thresh = ⌊4096/⌊4096/cwnd⌋⌋ ≥ cwnd.
        let mut d = CoupledDriver::new("lia", &opts(&[("growth", "per_packet")]), &[100]);
        d.set(0, 10, 5);
        d.event(0, CaEvent::Loss);
        assert_eq!((alpha(&d), d.acks_to_change(0, 500)), (409, Some(10)));
        d.set(0, 100, 50);
        d.event(0, CaEvent::Loss);
        assert_eq!((alpha(&d), d.acks_to_change(0, 500)), (40, Some(102)));
        // The default per-ACK counter needs one ACK more than its threshold.
        let mut d = CoupledDriver::new("lia", &opts(&[]), &[100]);
        d.set(0, 10, 5);
        d.event(0, CaEvent::Loss);
        assert_eq!(d.acks_to_change(0, 500), Some(11));
    }

    #[test]
    fn a_state_change_forces_a_recalculation_at_the_next_congestion_avoidance_ack() {
        let mut d = CoupledDriver::new("lia", &opts(&[]), &[1, 2]);
        d.set(0, 10, 5);
        d.set(1, 20, 5);
        d.event(0, CaEvent::Loss);
        assert_eq!(alpha(&d), 102);
        d.set(1, 40, 5); // the sibling grew without a recalculation
        d.ack(0, 1);
        assert_eq!(alpha(&d), 102);
        d.set_state(1, CaState::Disorder);
        assert_eq!(d.meta.get()[1], 1);
        d.ack(0, 1);
        // (10 << 32)/(10240 + (40 << 10)·8000/16000)² = 45.
        assert_eq!((alpha(&d), d.meta.get()[1]), (45, 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn the_increase_on_a_subflow_never_exceeds_one_over_its_cwnd(
            cwnds in proptest::collection::vec(2..300u32, 2..=4),
            rtts in proptest::collection::vec(1..400u64, 4),
            exact in any::<bool>(),
        ) {
            let n = cwnds.len();
            let best = if exact { "exact" } else { "linux" };
            let mut d = CoupledDriver::new("lia", &opts(&[("best_path", best), ("growth", "per_packet")]), &rtts[..n]);
            for (i, &w) in cwnds.iter().enumerate() {
                d.set(i, w, 1);
            }
            d.event(0, CaEvent::Loss);
            let acks = d.acks_to_change(0, 5_000).unwrap();
            prop_assert!(acks >= cwnds[0], "cwnd {} grew after {} packets", cwnds[0], acks);
        }
    }
}
