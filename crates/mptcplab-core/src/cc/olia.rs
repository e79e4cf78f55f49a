//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! CoNEXT 2012 / ToN 2013; draft-khalili-mptcp-congestion-control), as the out-of-tree
//! Linux module `net/mptcp/mptcp_olia.c` (v0.94/v0.95). Reference `cc-coupled.md` §3.2.
//!
//! Per ACK on path r: `w_r += (w_r/rtt_r²) / (Σ_p w_p/rtt_p)² + ε_r / w_r` (the OLIA
//! increase of the paper and the draft; ε_r is their α_r). Linux accumulates the change ×2^10 in a signed counter and
//! moves cwnd by one packet when the counter reaches ±1023.
//!
//! Linux computes ε for every subflow in `mptcp_get_epsilon` but each subflow only reads
//! its own, right after computing it in its own `cong_avoid`; so this controller computes
//! only its own ε, from its siblings' exported inter-loss distances.
//!
//! Linux integer effects kept by default (`best_path = "linux"`): the best-path test
//! `l_p · rtt_best² >= l_best · rtt_p²` multiplies bytes by srtt_us² (srtt_us in 1/8 µs)
//! in u64 and wraps once l_p · srtt_us² ≥ 2^64 (l_p ≳ 29 MB at 100 ms); B is then arbitrary.

use super::multipath::{can_send, live_paths, srtt_us, Growth};
use super::{AckSample, CaState, CcState, CongestionControl, Coupling, Reno, SiblingView};

/// `scale` of mptcp_olia.c: the counter and the increase are kept ×2^10.
const SCALE: u32 = 10;

/// Which subflows count in |P| for ε = ±1/(|P|·|B\M|) and ±1/(|P|·|M|). Option `paths`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paths {
    /// v0.94: `mpcb->cnt_established`, all established subflows.
    Established,
    /// v0.95: `established_cnt`, the subflows that can send and have an RTT sample.
    Considered,
}

/// How the best paths B (argmax l_p / rtt_p²) are found. Option `best_path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OliaBest {
    /// Linux: u64 products that wrap.
    Linux,
    /// 128-bit products.
    Exact,
}

#[derive(Clone, Copy, Debug)]
pub struct Olia {
    /// snd_una at the last two losses and now (`mptcp_loss1..3`).
    loss1: u32,
    loss2: u32,
    loss3: u32,
    /// ε = epsilon_num / epsilon_den, epsilon_num ∈ {-1, 0, 1}.
    epsilon_num: i32,
    epsilon_den: u32,
    /// `mptcp_snd_cwnd_cnt`, ×2^10.
    cnt: i32,
    pub growth: Growth,
    pub paths: Paths,
    pub best_path: OliaBest,
}

impl Default for Olia {
    fn default() -> Self {
        Olia { loss1: 0, loss2: 0, loss3: 0, epsilon_num: 0, epsilon_den: 1, cnt: 0, growth: Growth::PerAck, paths: Paths::Considered, best_path: OliaBest::Linux }
    }
}

/// `mptcp_get_crt_cwnd`: ssthresh while in Recovery (cwnd is being reduced), else cwnd.
fn crt_cwnd(p: &SiblingView) -> u32 { if p.ca_state == CaState::Recovery { p.ssthresh } else { p.cwnd } }

impl Olia {
    /// The estimate of the inter-loss distance in bytes, `max(loss3 − loss2, loss2 − loss1)`
    /// (u32 differences as Linux). Siblings read it through `export`.
    pub fn inter_loss_bytes(&self) -> u32 { self.loss3.wrapping_sub(self.loss2).max(self.loss2.wrapping_sub(self.loss1)) }

    /// This subflow's ε as (numerator, denominator), as last computed.
    pub fn epsilon(&self) -> (i32, u32) { (self.epsilon_num, self.epsilon_den) }

    /// The signed growth counter, ×2^10 (`mptcp_snd_cwnd_cnt`).
    pub fn counter(&self) -> i32 { self.cnt }

    /// Zero the growth counter (a test vector's starting point, like `CcState::cwnd_cnt = 0`).
    #[cfg(test)]
    pub fn clear_counter(&mut self) { self.cnt = 0 }

    /// `l_a · rtt_b²` against `l_b · rtt_a²`, as u64 that wraps (Linux) or exactly.
    fn cross(&self, l: u64, rtt2: u64) -> u128 {
        match self.best_path {
            OliaBest::Linux => l.wrapping_mul(rtt2) as u128,
            OliaBest::Exact => l as u128 * rtt2 as u128,
        }
    }

    /// `mptcp_get_epsilon`, for this subflow only.
    fn update_epsilon(&mut self, st: &CcState, c: &Coupling) {
        let own = [self.inter_loss_bytes() as u64, 0];
        let paths = || live_paths(c, st, own).filter(|(_, p)| can_send(p));
        let rtt2 = |p: &SiblingView| {
            let r = srtt_us(p.srtt);
            r * r
        };
        let max_cwnd = paths().map(|(_, p)| crt_cwnd(&p)).max().unwrap_or(0);
        // Best path: keep p when l_p · best_rtt² >= best_l · rtt_p² (last one wins ties).
        let (mut best_l, mut best_rtt2, mut n_paths) = (0u64, 1u64, 0u32);
        for (_, p) in paths() {
            n_paths += 1;
            let (l, r2) = (p.vars[0], rtt2(&p));
            if self.cross(l, best_rtt2) >= self.cross(best_l, r2) {
                best_l = l;
                best_rtt2 = r2;
            }
        }
        let is_best = |p: &SiblingView| self.cross(p.vars[0], best_rtt2) == self.cross(best_l, rtt2(p));
        // |M| = paths with the largest window; |B\M| = best paths not in M. (u8 in Linux.)
        let m = paths().filter(|(_, p)| crt_cwnd(p) == max_cwnd).count() as u8 as u32;
        let b_not_m = paths().filter(|(_, p)| crt_cwnd(p) != max_cwnd && is_best(p)).count() as u8 as u32;
        let Some((_, me)) = paths().find(|(is_me, _)| *is_me) else {
            return; // Linux skips a subflow that cannot send: its ε stays as it was.
        };
        let n_paths = match self.paths {
            Paths::Established => c.cnt_established() as u32,
            Paths::Considered => n_paths,
        };
        let mine = crt_cwnd(&me);
        (self.epsilon_num, self.epsilon_den) = if b_not_m == 0 {
            (0, 1)
        } else if mine < max_cwnd && is_best(&me) {
            (1, n_paths.wrapping_mul(b_not_m)) // ε = 1/(|P|·|B\M|)
        } else if mine == max_cwnd {
            (-1, n_paths.wrapping_mul(m)) // ε = −1/(|P|·|M|)
        } else {
            (0, 1)
        };
    }

    /// `mptcp_get_rate`: (1 + Σ_p (crt_cwnd_p << 10) · srtt_r / srtt_p)², the +1 avoiding 0.
    fn rate(&self, st: &CcState, c: &Coupling) -> u64 {
        let own_rtt = srtt_us(st.srtt);
        let mut rate: u64 = 1;
        for (_, p) in live_paths(c, st, [0; 2]).filter(|(_, p)| can_send(p)) {
            let scaled = ((crt_cwnd(&p) as u64) << SCALE).wrapping_mul(own_rtt);
            rate = rate.wrapping_add(scaled / srtt_us(p.srtt)); // non-zero: can_send
        }
        rate.wrapping_mul(rate)
    }
}

impl CongestionControl for Olia {
    fn name(&self) -> &'static str { "olia" }

    fn needs_coupling(&self) -> bool { true }

    /// `mptcp_olia_init`: the loss marks start at snd_una.
    fn init(&mut self, _now: crate::units::SimTime, st: &mut CcState) {
        (self.loss1, self.loss2, self.loss3) = (st.snd_una, st.snd_una, st.snd_una);
        (self.cnt, self.epsilon_num, self.epsilon_den) = (0, 0, 1);
    }

    /// `mptcp_olia_cong_avoid`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        if c.meta.is_none() {
            return Reno.on_ack(st, ack, c); // not MPTCP: tcp_reno_cong_avoid
        }
        self.loss3 = st.snd_una; // on every ACK, cwnd-limited or not
        if !ack.cwnd_limited {
            return;
        }
        if st.in_slow_start() {
            st.slow_start(ack.acked);
            return;
        }
        self.update_epsilon(st, c);
        let rate = self.rate(st, c);
        let cwnd_scaled = (st.cwnd as u64) << SCALE;
        // The increase ×2^10: ((ε_num·rate + ε_den·cwnd_scaled²) << 10) / (ε_den·cwnd·rate)
        // = 2^10 · ((w_r/rtt_r²)/(Σ w_p/rtt_p)² + ε_r/w_r). `ε_den * cwnd` is u32 in Linux.
        let inc_den = match (self.epsilon_den.wrapping_mul(st.cwnd) as u64).wrapping_mul(rate) {
            0 => 1,
            d => d,
        };
        let coupled = (self.epsilon_den as u64).wrapping_mul(cwnd_scaled).wrapping_mul(cwnd_scaled);
        let steps = match self.growth {
            Growth::PerAck => 1,
            Growth::PerPacket => ack.acked as u64,
        };
        let delta = |num: u64| ((num << SCALE) / inc_den).wrapping_mul(steps) as u32 as i32;
        // Linux stores the u64 quotient into an int: truncation, as `as u32 as i32` does.
        if self.epsilon_num == -1 {
            if coupled < rate {
                self.cnt = self.cnt.wrapping_sub(delta(rate - coupled));
            } else {
                self.cnt = self.cnt.wrapping_add(delta(coupled - rate));
            }
        } else {
            let num = (self.epsilon_num as u64).wrapping_mul(rate).wrapping_add(coupled);
            self.cnt = self.cnt.wrapping_add(delta(num));
        }
        if self.cnt >= (1 << SCALE) - 1 {
            if st.cwnd < st.cwnd_clamp {
                st.cwnd += 1;
            }
            self.cnt = 0;
        } else if self.cnt <= 1 - (1 << SCALE) {
            st.cwnd = (st.cwnd as i32).wrapping_sub(1).max(1) as u32;
            self.cnt = 0;
        }
    }

    /// `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, st: &CcState) -> u32 { Reno.ssthresh(st) }

    /// `mptcp_olia_set_state`: entering Loss, Recovery or CWR closes an inter-loss interval
    /// (`if loss3 != loss2 && !icsk_retransmits`). The engine calls this hook only on a
    /// change of state, and a change into these states never happens between an RTO and
    /// the next ACK that advances snd_una (the only time `icsk_retransmits` is non-zero:
    /// the state is Loss then), so that condition always holds here.
    fn on_state(&mut self, _st: &mut CcState, state: CaState, c: &Coupling) {
        if c.meta.is_none() {
            return;
        }
        if matches!(state, CaState::Loss | CaState::Recovery | CaState::Cwr) && self.loss3 != self.loss2 {
            self.loss1 = self.loss2;
            self.loss2 = self.loss3;
        }
    }

    /// `[l_p, 0]`: the inter-loss distance the siblings' best-path test reads.
    fn export(&self) -> [u64; 2] { [self.inter_loss_bytes() as u64, 0] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::coupled_driver::{opts, CoupledDriver};
    use crate::cc::{AnyCc, CcParams};

    fn olia(d: &CoupledDriver, i: usize) -> &Olia {
        match &d.subs[i].cc {
            AnyCc::Olia(o) => o,
            _ => unreachable!("an OLIA driver"),
        }
    }

    fn olia_mut(d: &mut CoupledDriver, i: usize) -> &mut Olia {
        match &mut d.subs[i].cc {
            AnyCc::Olia(o) => o,
            _ => unreachable!("an OLIA driver"),
        }
    }

    /// Subflow `i` at (cwnd, ssthresh) with its growth counter at 0.
    fn start(d: &mut CoupledDriver, i: usize, cwnd: u32, ssthresh: u32) {
        d.set(i, cwnd, ssthresh);
        olia_mut(d, i).clear_counter();
    }

    /// A connection whose subflow i last saw `l[i]` packets between two losses (0: no
    /// setup at all, so no RTT sample either), all at `rtt_ms`.
    fn with_inter_loss(params: &CcParams, l: &[u32], rtt_ms: u64) -> CoupledDriver {
        let mut d = CoupledDriver::new("olia", params, &vec![rtt_ms; l.len()]);
        for (i, &pkts) in l.iter().enumerate() {
            if pkts > 0 {
                d.set(i, 10, 10);
                d.ack(i, pkts);
                d.lose(i);
            }
        }
        for (i, &pkts) in l.iter().enumerate() {
            if pkts > 0 {
                assert_eq!(olia(&d, i).inter_loss_bytes(), pkts * 1448);
            }
        }
        d
    }

    #[test]
    fn the_best_path_gains_and_the_max_window_path_loses_as_the_reference_vector_says() {
        // cc-coupled.md §3.2: rtt 100 ms both, w = (10, 20), l_1 > l_2: ε = (+1/2, −1/2);
        // per ACK 1000/90000 + 0.05 = 0.06111 on path 1 and 2000/90000 − 0.025 = −0.00278 on path 2.
        let mut d = with_inter_loss(&opts(&[]), &[3000, 100], 100);
        start(&mut d, 0, 10, 5);
        start(&mut d, 1, 20, 5);
        // Path 2: counter −= ((rate − 2·20480²) << 10) / (2·20·rate), rate = (1 + 10240 + 20480)²,
        // = 2 (2.85 real), so −1 packet after 512 ACKs (−0.00195 per ACK).
        d.ack(1, 1);
        assert_eq!((olia(&d, 1).epsilon(), olia(&d, 1).counter()), ((-1, 2), -2));
        assert_eq!(d.acks_to_change(1, 1000), Some(511));
        assert_eq!(d.cwnd(1), 19);
        d.set(1, 20, 5);
        // Path 1: counter += ((rate + 2·10240²) << 10) / (2·10·rate) = 62 (62.6 = 1024·0.06111),
        // so +1 packet after 17 ACKs (1054 ≥ 1023).
        d.ack(0, 1);
        assert_eq!((olia(&d, 0).epsilon(), olia(&d, 0).counter()), ((1, 2), 62));
        assert_eq!(d.acks_to_change(0, 100), Some(16));
        assert_eq!(d.cwnd(0), 11);
    }

    #[test]
    fn when_the_best_path_has_the_largest_window_only_the_coupled_term_remains() {
        // B\M = ∅: ε = 0 on both; per ACK (w_r/rtt²)/(Σ w_p/rtt)² = 10/900 and 20/900.
        let mut d = with_inter_loss(&opts(&[]), &[100, 3000], 100);
        start(&mut d, 0, 10, 5);
        start(&mut d, 1, 20, 5);
        // (10240² << 10)/(10·30721²) = 11 per ACK (11.4 = 1024·0.0111): 93 ACKs reach 1023.
        assert_eq!(d.acks_to_change(0, 200), Some(93));
        assert_eq!(olia(&d, 0).epsilon(), (0, 1));
        start(&mut d, 0, 10, 5);
        // (20480² << 10)/(20·30721²) = 22 per ACK: 47 ACKs.
        assert_eq!(d.acks_to_change(1, 200), Some(47));
        assert_eq!(olia(&d, 1).epsilon(), (0, 1));
    }

    #[test]
    fn the_epsilons_of_all_paths_sum_to_zero_when_some_best_path_is_not_a_max_window_path() {
        // w = (10, 20, 20), l = (3000, 100, 100): B\M = {0}, M = {1, 2}: ε = (1/3, −1/6, −1/6).
        let mut d = with_inter_loss(&opts(&[]), &[3000, 100, 100], 100);
        for (i, w) in [10, 20, 20].into_iter().enumerate() {
            start(&mut d, i, w, 5);
        }
        for i in 0..3 {
            d.ack(i, 1);
        }
        let eps: Vec<(i32, u32)> = (0..3).map(|i| olia(&d, i).epsilon()).collect();
        assert_eq!(eps, vec![(1, 3), (-1, 6), (-1, 6)]);
        // Σ num/den = 0 over the common denominator 6.
        assert_eq!(eps.iter().map(|&(n, den)| n * (6 / den as i32)).sum::<i32>(), 0);
    }

    #[test]
    fn the_paths_option_counts_a_subflow_without_rtt_sample_only_as_established() {
        // Subflow 2 is established but has no RTT sample: v0.95 leaves it out of |P|, v0.94 counts it.
        for (paths, den) in [("considered", 2), ("established", 3)] {
            let mut d = with_inter_loss(&opts(&[("paths", paths)]), &[3000, 100, 0], 100);
            start(&mut d, 0, 10, 5);
            start(&mut d, 1, 20, 5);
            d.ack(0, 1);
            assert_eq!(olia(&d, 0).epsilon(), (1, den), "{paths}");
        }
    }

    #[test]
    fn linux_olia_picks_the_wrong_best_path_once_l_times_srtt_squared_wraps() {
        // srtt_us = 8·10^5, srtt_us² = 6.4·10^11: l_1 = 19906 packets = 28823888 bytes makes
        // l_1 · srtt_us² wrap to 5.4·10^14 < l_2 · srtt_us² = 9.3·10^16, so path 2 (the max
        // window) looks best and B\M = ∅; exactly, path 1 is best and gets ε = +1/2.
        for (best, eps) in [("linux", (0, 1)), ("exact", (1, 2))] {
            let mut d = with_inter_loss(&opts(&[("best_path", best)]), &[19906, 100], 100);
            start(&mut d, 0, 10, 5);
            start(&mut d, 1, 20, 5);
            d.ack(0, 1);
            assert_eq!(olia(&d, 0).epsilon(), eps, "{best}");
        }
    }

    #[test]
    fn a_lone_subflow_grows_about_one_packet_per_window() {
        // Single path: ε = 0 and the coupled term is 1/w (Reno), but the ×2^10 counter
        // floors 1024/w·(1 − 2/(1024w)) = 102.4 to 102: 11 ACKs per packet at cwnd 10, not 10.
        let mut d = CoupledDriver::new("olia", &opts(&[]), &[100]);
        start(&mut d, 0, 10, 5);
        d.ack(0, 1);
        assert_eq!(olia(&d, 0).counter(), 102);
        assert_eq!(d.acks_to_change(0, 100), Some(10));
        // Per acked packet (`growth = per_packet`) an ACK covering 2 packets counts twice.
        let mut d = CoupledDriver::new("olia", &opts(&[("growth", "per_packet")]), &[100]);
        start(&mut d, 0, 10, 5);
        d.ack_with(0, 2);
        assert_eq!(olia(&d, 0).counter(), 204);
    }

    #[test]
    fn each_loss_closes_an_inter_loss_interval_unless_nothing_was_acked_since_the_last() {
        let mut d = CoupledDriver::new("olia", &opts(&[]), &[100, 100]);
        let una = |d: &CoupledDriver| d.subs[0].st.snd_una;
        d.set(0, 10, 10);
        d.ack(0, 500);
        let m1 = una(&d);
        d.lose(0);
        d.ack(0, 50);
        let m2 = una(&d);
        d.lose(0);
        // l = max(loss3 − loss2, loss2 − loss1) = the interval just closed (the 500 is forgotten).
        assert_eq!(olia(&d, 0).inter_loss_bytes(), m2.wrapping_sub(m1));
        // An RTO with no ACK since the loss: loss3 == loss2, no shift.
        d.rto(0);
        assert_eq!(olia(&d, 0).inter_loss_bytes(), m2.wrapping_sub(m1));
        // After 30 ACKs (the first one ends the Loss state) an RTO closes the next interval.
        d.ack(0, 30);
        let m3 = una(&d);
        d.rto(0);
        assert_eq!(olia(&d, 0).inter_loss_bytes(), m3.wrapping_sub(m2));
    }
}
