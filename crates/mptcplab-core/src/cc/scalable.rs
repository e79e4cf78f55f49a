//! Scalable TCP (Kelly, CCR 2003), as Linux `net/ipv4/tcp_scalable.c`. Reference
//! `cc-uncoupled.md` §2.4.
//!
//! The paper adds a = 0.01 packet per ACKed packet and cuts cwnd by b = 1/8 on loss, so
//! the time to recover from a loss does not depend on the rate. Linux adds one packet
//! per `min(cwnd, AI_CNT)` counted units, which is Reno below `AI_CNT`.
//!
//! Linux changed the counting in 5.7 ("tcp: fix stretch ACK bugs in Scalable"):
//! * before (the seed kernels 4.x, incl. 4.19 / MPTCP v0.95): `AI_CNT = 50` and
//!   `tcp_cong_avoid_ai(tp, min(cwnd, 50), 1)` counts ACKs, not packets (50 "to account
//!   for delayed ack"); an ACK in slow start only slow-starts, so packets ACKed beyond
//!   ssthresh are dropped;
//! * from 5.7: `AI_CNT = 100`, counts ACKed packets, and feeds the slow-start leftover
//!   to congestion avoidance.
//!
//! `ai_cnt` picks both: below 100 the 4.x counting, 100 and above the 5.7 counting.

use super::{AckSample, CcState, CongestionControl, Coupling};

/// `TCP_SCALABLE_MD_SCALE`: b = 1/2^3.
const MD_SCALE: u32 = 3;
/// The `TCP_SCALABLE_AI_CNT` from which Linux (≥ 5.7) counts packets.
const UPSTREAM_AI_CNT: u32 = 100;

#[derive(Clone, Copy, Debug)]
pub struct Scalable {
    /// Linux `TCP_SCALABLE_AI_CNT`: +1 packet per `min(cwnd, ai_cnt)` counted units.
    pub ai_cnt: u32,
}

impl Scalable {
    pub fn new(ai_cnt: u32) -> Self { Scalable { ai_cnt: ai_cnt.max(1) } }

    /// Linux ≥ 5.7 counting (per ACKed packet, slow-start leftover to CA).
    fn counts_packets(&self) -> bool { self.ai_cnt >= UPSTREAM_AI_CNT }
}

impl Default for Scalable {
    fn default() -> Self { Scalable::new(50) }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str { "scalable" }

    /// `tcp_scalable_cong_avoid`.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, _c: &Coupling) {
        if !ack.cwnd_limited {
            return;
        }
        if self.counts_packets() {
            // Linux ≥ 5.7: acked = tcp_slow_start(acked); the rest goes to CA.
            let mut acked = ack.acked;
            if st.in_slow_start() {
                acked = st.slow_start(acked);
                if acked == 0 {
                    return;
                }
            }
            // +1 per min(cwnd, 100) ACKed packets: 0.01 per packet (Kelly's a).
            let w = st.cwnd.min(self.ai_cnt);
            st.cong_avoid_ai(w, acked);
        } else if st.in_slow_start() {
            // Linux 4.x: slow start only; packets beyond ssthresh are not carried over.
            st.slow_start(ack.acked);
        } else {
            // Linux 4.x: tcp_cong_avoid_ai(tp, min(cwnd, 50), 1), +1 per 50 ACKs.
            let w = st.cwnd.min(self.ai_cnt);
            st.cong_avoid_ai(w, 1);
        }
    }

    /// `tcp_scalable_ssthresh`: max(cwnd − cwnd/8, 2).
    fn ssthresh(&mut self, st: &CcState) -> u32 { (st.cwnd - (st.cwnd >> MD_SCALE)).max(2) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_driver::Driver;
    use crate::units::SimTime;

    fn ca_driver(ai_cnt: u32, cwnd: u32) -> Driver<Scalable> {
        let mut d = Driver::new(Scalable::new(ai_cnt), SimTime::from_ms(50));
        d.st.cwnd = cwnd;
        d.st.ssthresh = cwnd;
        d
    }

    #[test]
    fn scalable_adds_four_per_rtt_at_cwnd_200_with_ai_cnt_50_and_two_with_100() {
        // §2.4: 200 ACKs / 50 = +4; 200 / 100 = +2.
        let mut d = ca_driver(50, 200);
        d.round();
        assert_eq!(d.st.cwnd, 204);
        let mut d = ca_driver(100, 200);
        d.round();
        assert_eq!(d.st.cwnd, 202);
    }

    #[test]
    fn scalable_is_reno_below_ai_cnt() {
        let mut d = ca_driver(50, 20);
        d.round();
        assert_eq!(d.st.cwnd, 21);
    }

    #[test]
    fn scalable_ssthresh_is_seven_eighths_with_a_floor_of_two() {
        let mut s = Scalable::default();
        for (cwnd, want) in [(200, 175), (8, 7), (2, 2), (1, 2)] {
            let st = CcState::new(cwnd, 1448);
            assert_eq!(s.ssthresh(&st), want, "cwnd {cwnd}");
        }
        let mut d = ca_driver(50, 200);
        d.lose();
        assert_eq!(d.st.cwnd, 175);
    }

    #[test]
    fn linux_4x_counting_ignores_stretch_acks_and_drops_the_slow_start_leftover() {
        let stretch = |acked: u32| AckSample::simple(SimTime::ZERO, acked, 0, 0, None);
        // Slow start: cwnd 9, ssthresh 10, 3 packets ACKed. 4.x: cwnd 10, leftover lost.
        let mut st = CcState::new(9, 1448);
        st.ssthresh = 10;
        Scalable::new(50).on_ack(&mut st, &stretch(3), &Coupling::alone());
        assert_eq!((st.cwnd, st.cwnd_cnt), (10, 0));
        // 5.7+: the 2 left over count towards CA.
        let mut st = CcState::new(9, 1448);
        st.ssthresh = 10;
        Scalable::new(100).on_ack(&mut st, &stretch(3), &Coupling::alone());
        assert_eq!((st.cwnd, st.cwnd_cnt), (10, 2));
        // CA with delayed ACKs (2 packets per ACK) at cwnd 200: 100 ACKs per RTT.
        // 4.x: +1 per 50 ACKs = +2; 5.7+: +1 per 100 packets = +2. Same by design.
        for ai in [50, 100] {
            let mut st = CcState::new(200, 1448);
            st.ssthresh = 200;
            let mut s = Scalable::new(ai);
            for _ in 0..100 {
                s.on_ack(&mut st, &stretch(2), &Coupling::alone());
            }
            assert_eq!(st.cwnd, 202, "ai_cnt {ai}");
        }
    }

    #[test]
    fn scalable_recovers_from_a_loss_in_the_same_number_of_rtts_at_any_rate() {
        // Kelly's point: +2 %/RTT and −12.5 % per loss ⇒ ≈ ln(8/7)/ln(1.02) ≈ 7 RTTs to
        // regain the window, whether it is 200 or 4000 packets (Reno: cwnd/2 RTTs).
        let rtts_to_recover = |w: u32| {
            let mut d = ca_driver(50, w);
            d.lose();
            let mut n = 0;
            while d.st.cwnd < w {
                d.round();
                n += 1;
            }
            n
        };
        assert_eq!(rtts_to_recover(200), 7);
        assert_eq!(rtts_to_recover(4000), 7);
    }
}
