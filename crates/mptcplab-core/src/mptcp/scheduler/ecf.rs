//! ECF, "Earliest Completion First" (Lim, Nahum, Towsley, Gibbens, CoNEXT 2017), as the
//! out-of-tree Linux MPTCP implements it in `net/mptcp/mptcp_ecf.c` (v0.95 branch,
//! module version 0.95); reference schedulers.md §4.5.
//!
//! ECF takes minRTT's subflow s. When that is not the fastest subflow f, it compares
//! how long f would take to send the queued data (waiting for its cwnd to open) with
//! how long s would, and waits for f when f would finish first. With `k` the bytes
//! queued at the connection level and `δ = max(rttvar_f, rttvar_s)`:
//!
//! ```text
//! x_f = max(k, cwnd_f·mss);  n = 1 + x_f/(cwnd_f·mss)
//! if n·rtt_f < (1 + waiting·β)(rtt_s + δ):                     // f finishes first
//!     x_s = max(k, cwnd_s·mss)
//!     if (x_s/(cwnd_s·mss))·rtt_s >= 2·rtt_f + δ: waiting = 1; wait for f
//!     else: use s
//! else: waiting = 0; use s
//! ```
//!
//! Linux evaluates both inequalities cross-multiplied (`mptcp_ecf.c`):
//! `r_beta·srtt_f·(x_f + cwnd_f·mss) < r_beta·cwnd_f·mss·(srtt_s + δ) + waiting·cwnd_f·mss·(srtt_s + δ)`
//! and `srtt_s·x_s >= cwnd_s·mss·(2·srtt_f + δ)`, with SRTTs in µs (`srtt_us >> 3`) and
//! `δ` from `rttvar_us >> 1`. Every product of the kernel is a 32-bit product that the
//! code then widens to 64 bits, so for large windows and RTTs it wraps (for example
//! 40 ms · 110 KB > 2^32); `arithmetic = "linux"` (the default) keeps that, "exact"
//! does not. Linux's `rttvar_us` is floored at `tcp_rto_min` (200 ms), so `δ` is never
//! below 100 ms there and here.
//!
//! Departures: `k` is counted in payload bytes (Linux: `sk_wmem_queued`, skb truesize);
//! `δ` is 2·RTTVAR of the simulator's estimator, within 1 µs of `rttvar_us >> 1`;
//! `last_rbuf_opti` starts at 0 (the kernel stamps the subflow's creation).

use super::{rcv_buf_optimization, Action, MinRtt, MinRttOptions, PenaliseScope, SchedView, Scheduler, Segment};
use crate::units::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcfArithmetic {
    /// The kernel's: 32-bit products (wrapping), compared in 64 bits.
    Linux,
    /// Exact integer products.
    Exact,
}

pub struct Ecf {
    pub opts: MinRttOptions,
    /// β = 1/r_beta (`mptcp_ecf_r_beta`).
    r_beta: u32,
    arithmetic: EcfArithmetic,
    /// `ecfsched_cb.switching_margin`: the "waiting" state of the paper.
    waiting: bool,
    last_rbuf_opti: Vec<SimTime>,
}

impl Ecf {
    pub fn new(opts: MinRttOptions, r_beta: u32, arithmetic: EcfArithmetic) -> Self { Ecf { opts, r_beta, arithmetic, waiting: false, last_rbuf_opti: Vec::new() } }

    pub fn waiting(&self) -> bool { self.waiting }

    /// A product of `u32` factors as the kernel computes it: in 32 bits (wrapping), or
    /// exactly.
    fn mul(&self, factors: &[u32]) -> u64 {
        match self.arithmetic {
            EcfArithmetic::Linux => factors.iter().fold(1u32, |p, &x| p.wrapping_mul(x)) as u64,
            EcfArithmetic::Exact => factors.iter().fold(1u64, |p, &x| p.saturating_mul(x as u64)),
        }
    }

    /// A sum of `u32` terms, wrapping in 32 bits as the kernel's, or exact.
    fn add(&self, a: u32, b: u32) -> u32 {
        match self.arithmetic {
            EcfArithmetic::Linux => a.wrapping_add(b),
            EcfArithmetic::Exact => a.saturating_add(b),
        }
    }

    /// `ecf_get_available_subflow` for a segment sent on `path_mask`. `Ok(None)`: no
    /// subflow can send; `Err(())`: wait (for f, or as minRTT for an unused subflow).
    fn get_subflow(&mut self, v: &SchedView, path_mask: u64) -> Result<Option<usize>, ()> {
        // The fastest subflow that may send (cwnd not considered), and the data the
        // subflows hold.
        let (mut minsk, mut min_srtt) = (None, u64::MAX);
        let (mut sub_sndbuf, mut sub_packets_out) = (0u64, 0u64);
        for &i in v.order {
            let s = &v.subflows[i];
            if !s.established {
                continue;
            }
            sub_sndbuf += s.outstanding_bytes + s.queued_bytes;
            sub_packets_out += s.packets_out as u64;
            if s.srtt_us8() < min_srtt {
                min_srtt = s.srtt_us8();
                minsk = Some(i);
            }
        }
        // minRTT's choice; its `Err` is a forced wait for an unused subflow.
        let Some(best) = MinRtt::pick(v.subflows, v.order, path_mask)? else { return Ok(None) };
        let Some(f) = minsk else { return Ok(Some(best)) };
        if best == f {
            return Ok(Some(best));
        }
        let (fs, ss) = (&v.subflows[f], &v.subflows[best]);
        let mss = ss.mss; // "assuming equal MSS"
        // k: meta queued bytes − subflow-held bytes − segments acked on a subflow but not
        // DATA_ACKed (`(meta packets_out − Σ packets_out)·mss`), floored at 0.
        let minus = sub_sndbuf + (v.meta.packets_out as u64).saturating_sub(sub_packets_out) * mss as u64;
        let k = v.meta.queued_bytes.saturating_sub(minus).min(u32::MAX as u64) as u32;
        let us = |t: SimTime| t.us().min(u32::MAX as u64) as u32;
        let (cwnd_f, srtt_f) = (fs.cwnd, us(fs.srtt));
        let (cwnd_s, srtt_s) = (ss.cwnd, us(ss.srtt));
        // `rttvar_us >> 1` = 2 · RTTVAR.
        let delta = us(fs.rttvar).saturating_mul(2).max(us(ss.rttvar).saturating_mul(2));
        let win_f = self.mul(&[cwnd_f, mss]) as u32;
        let x_f = if k > win_f { k } else { win_f };
        let lhs = self.mul(&[srtt_f, self.add(x_f, win_f)]);
        let rhs = self.mul(&[cwnd_f, mss, self.add(srtt_s, delta)]);
        let r_beta = self.r_beta as u64;
        if r_beta.saturating_mul(lhs) < r_beta.saturating_mul(rhs).saturating_add(self.waiting as u64 * rhs) {
            let win_s = self.mul(&[cwnd_s, mss]) as u32;
            let x_s = if k > win_s { k } else { win_s };
            let lhs_s = self.mul(&[srtt_s, x_s]);
            let rhs_s = self.mul(&[cwnd_s, mss, self.add(self.add(srtt_f, srtt_f), delta)]);
            if lhs_s >= rhs_s {
                // s is too slow compared with f.
                self.waiting = true;
                return Err(());
            }
        } else {
            self.waiting = false;
        }
        Ok(Some(best))
    }
}

impl Scheduler for Ecf {
    fn name(&self) -> &'static str { "ecf" }

    /// `mptcp_next_segment` of the v0.95 branch, which asks the scheduler's own
    /// `get_subflow` (ECF's) for every segment.
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        let m = &v.meta;
        if let Some((_, _, mask)) = m.reinject {
            match self.get_subflow(v, mask) {
                Ok(Some(sub)) => out.push(Action::Send { sub, seg: Segment::Reinject }),
                Ok(None) => {}
                Err(()) => out.push(Action::Wait),
            }
            return;
        }
        if m.unsent > 0 {
            let sub = match self.get_subflow(v, 0) {
                Ok(Some(sub)) => sub,
                Ok(None) => return,
                Err(()) => {
                    out.push(Action::Wait);
                    return;
                }
            };
            if m.new_data {
                out.push(Action::Send { sub, seg: Segment::New });
            } else {
                // Receive-window limited: opportunistic retransmission, penal = 1.
                rcv_buf_optimization(v, sub, true, self.opts, PenaliseScope::All, &mut self.last_rbuf_opti, out);
            }
            return;
        }
        if m.sndbuf_full {
            if let Ok(Some(sub)) = self.get_subflow(v, 0) {
                rcv_buf_optimization(v, sub, false, self.opts, PenaliseScope::All, &mut self.last_rbuf_opti, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{MetaView, SubflowView};
    use super::*;

    fn ecf(arithmetic: EcfArithmetic) -> Ecf { Ecf::new(MinRttOptions { opportunistic_retransmission: true, penalisation: true }, 4, arithmetic) }

    /// f (cwnd 10, srtt 10 ms) has a full cwnd, so minRTT picks s (cwnd 10, srtt `s_ms`).
    fn pair(s_ms: u64) -> [SubflowView; 2] { [SubflowView { mss: 1000, ..sub(10, 10, 10) }, SubflowView { mss: 1000, ..sub(s_ms, 10, 0) }] }

    /// k bytes queued at the connection level, none held by the subflows or DATA_ACK.
    fn queued(k: u64, subs: &[SubflowView]) -> MetaView {
        let held: u64 = subs.iter().map(|s| s.outstanding_bytes).sum();
        let pkts: u32 = subs.iter().map(|s| s.packets_out).sum();
        MetaView { queued_bytes: k + held, packets_out: pkts, ..new_data(0, 1000) }
    }

    #[test]
    fn the_reference_vector_waits_for_the_fast_subflow() {
        // schedulers.md §4.5: δ 0, k = 5000: n = 2 => 20 ms < 100 ms; x_s/(cwnd_s·mss) = 1
        // => 100 ms >= 20 ms => wait.
        for a in [EcfArithmetic::Linux, EcfArithmetic::Exact] {
            let subs = pair(100);
            let mut e = ecf(a);
            let mut out = vec![];
            e.schedule(&view(&subs, &[0, 1], queued(5000, &subs)), &mut out);
            assert_eq!(out, vec![Action::Wait], "{a:?}");
            assert!(e.waiting());
        }
    }

    #[test]
    fn a_slow_subflow_close_to_the_fast_one_is_used() {
        // s at 15 ms: n·rtt_f = 20 ms >= 15 ms, so f would not finish first: use s.
        let subs = pair(15);
        let mut e = ecf(EcfArithmetic::Exact);
        let mut out = vec![];
        e.schedule(&view(&subs, &[0, 1], queued(5000, &subs)), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 1, seg: Segment::New }]);
        assert!(!e.waiting());
    }

    #[test]
    fn once_waiting_the_hysteresis_keeps_waiting_a_little_longer() {
        // k = 30 000: x_f = 30 000, n = 4, n·rtt_f = 40 ms. With s at 38 ms, 40 < 38 is
        // false: use s. Once waiting, 40 < 1.25·38 = 47.5 holds; then
        // x_s/(cwnd_s·mss)·rtt_s = 3·38 = 114 >= 20: wait.
        let subs = pair(38);
        let mut e = ecf(EcfArithmetic::Exact);
        let mut out = vec![];
        e.schedule(&view(&subs, &[0, 1], queued(30_000, &subs)), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 1, seg: Segment::New }]);
        e.waiting = true;
        out.clear();
        e.schedule(&view(&subs, &[0, 1], queued(30_000, &subs)), &mut out);
        assert_eq!(out, vec![Action::Wait]);
    }

    #[test]
    fn linux_arithmetic_wraps_where_exact_does_not() {
        // srtt_f 40 ms, cwnd_f 50, mss 1448: srtt_f·(x_f + cwnd_f·mss) = 40 000 · 144 800
        // = 5.79e9 wraps to 1.50e9 in 32 bits. s at 100 ms with δ = 100 ms (the Linux
        // floor): exactly, n·rtt_f = 80 ms < 200 ms and 100 ms < 2·40 + 100 ms: use s. The
        // wrapped products compare 4·1.50e9 < 4·rhs' and lhs_s' >= rhs_s' (both wrapped):
        // Linux waits.
        let f = SubflowView { rttvar: SimTime::from_ms(50), ..sub(40, 50, 50) };
        let s = SubflowView { rttvar: SimTime::from_ms(50), ..sub(100, 50, 0) };
        let subs = [f, s];
        let meta = queued(0, &subs);
        let mut exact = ecf(EcfArithmetic::Exact);
        let mut out = vec![];
        exact.schedule(&view(&subs, &[0, 1], meta), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 1, seg: Segment::New }]);
        let mut linux = ecf(EcfArithmetic::Linux);
        out.clear();
        linux.schedule(&view(&subs, &[0, 1], meta), &mut out);
        let lhs = 40_000u32.wrapping_mul(144_800) as u64;
        let rhs = 50u32.wrapping_mul(1448).wrapping_mul(200_000) as u64;
        let lhs_s = 100_000u32.wrapping_mul(72_400) as u64;
        let rhs_s = 50u32.wrapping_mul(1448).wrapping_mul(180_000) as u64;
        let expect_wait = 4 * lhs < 4 * rhs && lhs_s >= rhs_s;
        assert_eq!(out == vec![Action::Wait], expect_wait, "lhs {lhs} rhs {rhs} lhs_s {lhs_s} rhs_s {rhs_s}");
        assert!(expect_wait, "the example must show the wrap changing the decision");
    }

    #[test]
    fn the_fast_subflow_is_used_without_any_test() {
        let subs = [SubflowView { mss: 1000, ..sub(10, 10, 0) }, SubflowView { mss: 1000, ..sub(100, 10, 0) }];
        let mut e = ecf(EcfArithmetic::Linux);
        let mut out = vec![];
        e.schedule(&view(&subs, &[0, 1], queued(5000, &subs)), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::New }]);
    }
}
