//! Reno/NewReno congestion avoidance, Linux `tcp_reno_cong_avoid` / `tcp_reno_ssthresh`
//! (net/ipv4/tcp_cong.c; RFC 5681 §3.1). Reference `tcp.md` §1.2.

use super::{AckSample, CcState, CongestionControl, Coupling};

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

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
}
