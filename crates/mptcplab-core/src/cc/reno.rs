//! Reno/NewReno congestion avoidance, Linux `tcp_reno_cong_avoid` / `tcp_reno_ssthresh`
//! (net/ipv4/tcp_cong.c; RFC 5681 §3.1). Reference `tcp.md` §1.2.

use super::{AckSample, CcState, CongestionControl, Coupling};

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

/// Reno as a scenario's `cc = "reno"`, with the growth of the release it follows
/// (`cc_options.growth`; `tcp.base_kernel = "3.14"` makes "per_ack" the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct RenoCc {
    /// Linux 3.13-3.17 `tcp_reno_cong_avoid` (net/ipv4/tcp_cong.c): slow start while
    /// `cwnd <= ssthresh`, where `tcp_slow_start(tp, acked)` adds the packets acked but
    /// stops at `ssthresh + 1`; then `tcp_cong_avoid_ai(tp, cwnd)`: +1 packet per `cwnd`
    /// ACKs, counting ACKs, not packets. (The per-packet count came in Linux 4.0.)
    pub per_ack: bool,
}

impl CongestionControl for RenoCc {
    fn name(&self) -> &'static str { "reno" }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        if !self.per_ack {
            return Reno.on_ack(st, ack, c);
        }
        if !ack.cwnd_limited {
            return;
        }
        if st.cwnd <= st.ssthresh {
            // tcp_slow_start (3.13-3.17): cwnd + acked, at most ssthresh + 1.
            let grown = st.cwnd.saturating_add(ack.acked).min(st.ssthresh.saturating_add(1));
            st.cwnd = grown.min(st.cwnd_clamp);
        } else if st.cwnd_cnt >= st.cwnd {
            // tcp_cong_avoid_ai(tp, w) of 3.x: one call per ACK.
            if st.cwnd < st.cwnd_clamp {
                st.cwnd += 1;
            }
            st.cwnd_cnt = 0;
        } else {
            st.cwnd_cnt += 1;
        }
    }

    fn ssthresh(&mut self, st: &CcState) -> u32 { Reno.ssthresh(st) }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str { "reno" }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, _c: &Coupling) {
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked;
        if st.in_slow_start() {
            acked = st.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        // Congestion avoidance: +1 packet per cwnd ACKed packets (≈ 1 MSS per RTT).
        let w = st.cwnd;
        st.cong_avoid_ai(w, acked);
    }

    /// `max(cwnd >> 1, 2)`.
    fn ssthresh(&mut self, st: &CcState) -> u32 { (st.cwnd >> 1).max(2) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_driver::Driver;
    use crate::units::SimTime;

    #[test]
    fn reno_ssthresh_halves_with_a_floor_of_two() {
        // tcp.md test vector 3.
        let mut r = Reno;
        for (cwnd, want) in [(1, 2), (7, 3), (100, 50)] {
            let mut st = CcState::new(cwnd, 1448);
            st.cwnd = cwnd;
            assert_eq!(r.ssthresh(&st), want);
        }
    }

    #[test]
    fn reno_doubles_per_round_in_slow_start_then_adds_one() {
        let mut d = Driver::new(Reno, SimTime::from_ms(100));
        d.round();
        assert_eq!(d.st.cwnd, 20);
        d.st.ssthresh = 20;
        d.round();
        assert_eq!(d.st.cwnd, 21);
        d.round();
        assert_eq!(d.st.cwnd, 22);
    }

    #[test]
    fn reno_does_not_grow_when_not_cwnd_limited() {
        let mut st = CcState::new(10, 1448);
        let s = AckSample { cwnd_limited: false, ..AckSample::simple(SimTime::ZERO, 5, 0, 0, None) };
        Reno.on_ack(&mut st, &s, &Coupling::alone());
        assert_eq!(st.cwnd, 10);
    }

    #[test]
    fn per_ack_reno_adds_one_packet_per_cwnd_acks_however_many_packets_each_acks() {
        // Linux 3.x tcp_cong_avoid_ai(tp, cwnd): with delayed ACKs (2 packets each) a
        // window of 20 packets brings 10 ACKs: 20 ACKs (two windows) for +1, where the
        // per-packet form adds 1 per window.
        let mut st = CcState::new(20, 1448);
        st.ssthresh = 10;
        let mut r = RenoCc { per_ack: true };
        let mut p = RenoCc { per_ack: false };
        let mut sp = st;
        let ack = AckSample::simple(SimTime::ZERO, 2, 0, 0, None);
        for _ in 0..10 {
            r.on_ack(&mut st, &ack, &Coupling::alone());
            p.on_ack(&mut sp, &ack, &Coupling::alone());
        }
        assert_eq!((st.cwnd, sp.cwnd), (20, 21));
        for _ in 0..11 {
            r.on_ack(&mut st, &ack, &Coupling::alone());
        }
        assert_eq!(st.cwnd, 21);
        // Slow start runs while cwnd <= ssthresh and stops at ssthresh + 1.
        let mut ss = CcState::new(9, 1448);
        ss.ssthresh = 10;
        r.on_ack(&mut ss, &AckSample::simple(SimTime::ZERO, 5, 0, 0, None), &Coupling::alone());
        assert_eq!(ss.cwnd, 11);
    }
}
