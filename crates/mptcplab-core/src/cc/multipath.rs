//! Pieces the coupled controllers share: how the out-of-tree Linux MPTCP modules
//! (multipath-tcp.org v0.94/v0.95, `net/mptcp/`) read a connection's subflows, their
//! fixed-point RTT, and their congestion-avoidance counter. Reference `cc-coupled.md` §3.

use super::{CcState, Coupling, SiblingView};
use crate::units::SimTime;

/// Linux `tp->srtt_us`: 8 × the smoothed RTT in µs, a u32 (`include/linux/tcp.h`).
pub fn srtt_us(srtt: SimTime) -> u64 { (srtt.ns() / 125) as u32 as u64 }

/// `mptcp_sk_can_send(sk) && tp->srtt_us` (the `*_sk_can_send` helper of each module):
/// established with a non-zero RTT estimate.
pub fn can_send(p: &SiblingView) -> bool { p.established && srtt_us(p.srtt) != 0 }

/// Whether the controller runs on an MPTCP subflow (Linux `mptcp(tp)`): the engine gives
/// connection state only to MPTCP connections.
pub fn is_mptcp(c: &Coupling) -> bool { c.meta.is_some() }

/// The connection's subflows as a Linux module sees them while it runs for subflow
/// `c.me`: siblings from the snapshot, the subflow itself from its live `CcState` (its
/// snapshot entry predates this call). The flag marks the subflow itself.
///
/// With no snapshot (a driver that passes `Coupling::alone()`), the subflow is alone.
pub fn live_paths<'a>(c: &'a Coupling, st: &'a CcState, vars: [u64; 2]) -> impl Iterator<Item = (bool, SiblingView)> + 'a {
    let own = move |established: bool| SiblingView {
        cwnd: st.cwnd,
        ssthresh: st.ssthresh,
        srtt: st.srtt,
        min_rtt: st.min_rtt,
        in_flight: st.in_flight,
        mss: st.mss,
        established,
        in_slow_start: st.in_slow_start(),
        ca_state: st.ca_state,
        vars,
    };
    let alone = c.subflows().get(c.me).is_none().then(|| (true, own(true)));
    c.subflows().iter().enumerate().map(move |(j, s)| if j == c.me { (true, own(s.established)) } else { (false, *s) }).chain(alone)
}

/// Congestion-avoidance growth: once per ACK (Linux, which ignores `acked`) or per
/// acknowledged packet (the papers). Registry option `growth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    PerAck,
    PerPacket,
}

impl Growth {
    pub fn from_choice(s: &str) -> Growth { if s == "per_packet" { Growth::PerPacket } else { Growth::PerAck } }
}

/// Which out-of-tree release to follow where v0.94 (Linux 4.14) and v0.95 (4.19) differ.
/// v0.95 removed `mpcb->cnt_established`, and with it the single-subflow Reno fallbacks
/// of LIA and BALIA. Registry option `kernel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    V094,
    V095,
}

impl Kernel {
    pub fn from_choice(s: &str) -> Kernel { if s == "v0.94" { Kernel::V094 } else { Kernel::V095 } }
}

/// One congestion-avoidance step against `thresh`; returns whether cwnd grew (LIA and
/// BALIA recalculate their coupling then).
///
/// `PerAck` is the counter of `mptcp_ccc_cong_avoid` / `mptcp_balia_cong_avoid`:
/// `if cnt >= thresh { cwnd++ (≤ clamp); cnt = 0 } else { cnt++ }`, i.e. +1 per
/// `thresh + 1` ACKs whatever each ACK covers. `PerPacket` is `tcp_cong_avoid_ai(thresh,
/// acked)`: +1 per `thresh` acknowledged packets.
pub fn ca_step(st: &mut CcState, thresh: u32, acked: u32, growth: Growth) -> bool {
    match growth {
        Growth::PerAck => {
            if st.cwnd_cnt >= thresh {
                let grew = st.cwnd < st.cwnd_clamp;
                if grew {
                    st.cwnd += 1;
                }
                st.cwnd_cnt = 0;
                grew
            } else {
                st.cwnd_cnt = st.cwnd_cnt.wrapping_add(1);
                false
            }
        }
        Growth::PerPacket => {
            let before = st.cwnd;
            st.cong_avoid_ai(thresh, acked);
            st.cwnd > before
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CaState;

    #[test]
    fn srtt_us_is_eight_times_the_microseconds() {
        assert_eq!(srtt_us(SimTime::from_ms(100)), 800_000);
        assert_eq!(srtt_us(SimTime::from_us(1)), 8);
    }

    #[test]
    fn the_live_view_replaces_the_stale_snapshot_of_the_subflow_itself() {
        let snap = [SiblingView { cwnd: 5, established: true, ..Default::default() }, SiblingView { cwnd: 7, established: true, ..Default::default() }];
        let mut st = CcState::new(40, 1448);
        st.ca_state = CaState::Recovery;
        let c = Coupling::new(1, &snap, None);
        let v: Vec<_> = live_paths(&c, &st, [3, 4]).collect();
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].0, v[0].1.cwnd), (false, 5));
        assert_eq!((v[1].0, v[1].1.cwnd, v[1].1.vars, v[1].1.ca_state), (true, 40, [3, 4], CaState::Recovery));
        // Without a snapshot the subflow is alone.
        let v: Vec<_> = live_paths(&Coupling::alone(), &st, [0; 2]).collect();
        assert_eq!(v.len(), 1);
        assert!(v[0].0 && v[0].1.established);
    }

    #[test]
    fn the_linux_counter_needs_one_ack_more_than_the_threshold() {
        let mut st = CcState::new(10, 1448);
        let mut acks = 0;
        while !ca_step(&mut st, 10, 1, Growth::PerAck) {
            acks += 1;
        }
        assert_eq!((acks + 1, st.cwnd, st.cwnd_cnt), (11, 11, 0));
        let mut st = CcState::new(10, 1448);
        let mut acks = 0;
        while !ca_step(&mut st, 10, 1, Growth::PerPacket) {
            acks += 1;
        }
        assert_eq!((acks + 1, st.cwnd), (10, 11));
    }
}
