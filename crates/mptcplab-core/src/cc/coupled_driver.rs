//! A scripted driver for coupled controllers (quiche `test_sender.rs` style, one level up
//! from `test_driver::Driver`): it owns virtual time and N subflows of one connection,
//! each with its own controller, `CcState` and jitter-free RTT, and calls the controllers
//! through the `CongestionControl` trait in the order the engine does.
//!
//! Like `mptcp/conn/` (`ack.rs`, `with_coupling`, which builds the same views on first
//! read), every step first snapshots all subflows into `SiblingView`s and passes the
//! connection's shared `Cell` as `meta` (None for a plain TCP flow). Like `tcp/sender/` (`ack.rs`), an ACK gives `on_rtt_sample`, then any state
//! change, then `on_ack`; a fast-retransmit loss asks `ssthresh`, enters Recovery, and
//! (at the ACK that ends it) sets cwnd = ssthresh, sends COMPLETE_CWR and returns to
//! Open; an RTO asks `ssthresh` (first RTO only), sets cwnd = 1, enters Loss and sends
//! CA_EVENT_LOSS. Simplifications: the ACKs inside a recovery are not shown to the
//! controller (the engine runs PRR then), and the first ACK after an RTO ends the Loss
//! state (other states last until `set_state`). After every ACK the sender refills its window: snd_nxt = snd_una + cwnd·mss.

use std::cell::Cell;

use super::{make, AckSample, AnyCc, CaEvent, CaState, CcParams, CcState, CongestionControl, Coupling, OptValue, SiblingView, INFINITE_SSTHRESH, MIN_CWND};
use crate::tcp::seq::after;
use crate::units::SimTime;

pub const MSS: u32 = 1448;

pub struct Sub {
    pub cc: AnyCc,
    pub st: CcState,
    /// What every RTT sample of this subflow measures (the link has no jitter).
    pub rtt: SimTime,
    pub established: bool,
    /// Packets delivered so far (rate samples for controllers with `cong_control`).
    pub delivered: u64,
}

pub struct CoupledDriver {
    pub now: SimTime,
    pub subs: Vec<Sub>,
    /// The connection-level state the controllers share (Linux: the meta socket's CC).
    pub meta: Cell<[u64; 2]>,
    /// An MPTCP connection (meta given to the controllers) or a plain TCP flow.
    pub mptcp: bool,
    siblings: Vec<SiblingView>,
}

/// Controller options from `(name, value)` pairs, e.g. `opts(&[("growth", "per_packet")])`;
/// "true"/"false" become booleans.
pub fn opts(kv: &[(&str, &str)]) -> CcParams {
    kv.iter()
        .map(|&(k, v)| {
            let v = match v {
                "true" => OptValue::Bool(true),
                "false" => OptValue::Bool(false),
                t => OptValue::Text(t.to_string()),
            };
            (k.to_string(), v)
        })
        .collect()
}

impl CoupledDriver {
    /// An MPTCP connection with one subflow per RTT (ms), every controller `name`.
    pub fn new(name: &str, params: &CcParams, rtts_ms: &[u64]) -> Self {
        let rtts: Vec<SimTime> = rtts_ms.iter().map(|&r| SimTime::from_ms(r)).collect();
        Self::build(name, params, &rtts, true)
    }

    /// A plain TCP flow (no meta state) running `name`.
    pub fn plain_tcp(name: &str, params: &CcParams, rtt_ms: u64) -> Self { Self::build(name, params, &[SimTime::from_ms(rtt_ms)], false) }

    pub fn build(name: &str, params: &CcParams, rtts: &[SimTime], mptcp: bool) -> Self {
        let subs = rtts
            .iter()
            .enumerate()
            .map(|(i, &rtt)| {
                let mut cc = make(name, params).unwrap_or_else(|e| panic!("{name}: {}", e.message));
                let mut st = CcState::new(10, MSS);
                // Initial sequence numbers near the wrap, a different one per subflow.
                let iss = 0xfff0_0000u32.wrapping_add(i as u32 * 0x0100_0000);
                (st.snd_una, st.snd_nxt) = (iss, iss);
                cc.init(SimTime::ZERO, &mut st);
                st.snd_nxt = iss.wrapping_add(st.cwnd * MSS);
                Sub { cc, st, rtt, established: true, delivered: 0 }
            })
            .collect();
        CoupledDriver { now: SimTime::ZERO, subs, meta: Cell::new([0; 2]), mptcp, siblings: Vec::new() }
    }

    /// Put subflow `i` at `cwnd` with `ssthresh` (a test vector's starting point), with
    /// its RTT already measured.
    pub fn set(&mut self, i: usize, cwnd: u32, ssthresh: u32) {
        let s = &mut self.subs[i];
        (s.st.cwnd, s.st.ssthresh, s.st.cwnd_cnt) = (cwnd, ssthresh, 0);
        (s.st.srtt, s.st.min_rtt) = (s.rtt, s.rtt);
    }

    pub fn cwnd(&self, i: usize) -> u32 { self.subs[i].st.cwnd }

    /// `mptcp/conn/ack.rs` `sibling_view` for every subflow.
    fn refresh(&mut self) {
        self.siblings.clear();
        for s in &self.subs {
            self.siblings.push(SiblingView {
                cwnd: s.st.cwnd,
                ssthresh: s.st.ssthresh,
                srtt: s.st.srtt,
                min_rtt: s.st.min_rtt,
                in_flight: s.st.in_flight,
                mss: s.st.mss,
                established: s.established,
                in_slow_start: s.st.in_slow_start(),
                ca_state: s.st.ca_state,
                vars: s.cc.export(),
            });
        }
    }

    /// A fresh snapshot, then subflow `i` and the view its controller gets.
    fn split(&mut self, i: usize) -> (&mut Sub, Coupling<'_>) {
        self.refresh();
        let meta = if self.mptcp { Some(&self.meta) } else { None };
        (&mut self.subs[i], Coupling::new(i, &self.siblings, meta))
    }

    pub fn advance(&mut self, d: SimTime) { self.now += d; }

    /// One ACK on subflow `i` delivering `acked` packets, cwnd-limited.
    pub fn ack_with(&mut self, i: usize, acked: u32) {
        let now = self.now;
        let (s, c) = self.split(i);
        let st = &mut s.st;
        st.snd_una = st.snd_una.wrapping_add(acked * MSS);
        if after(st.snd_una, st.snd_nxt) {
            st.snd_nxt = st.snd_una;
        }
        st.srtt = s.rtt;
        st.min_rtt = if st.min_rtt == SimTime::ZERO { s.rtt } else { st.min_rtt.min(s.rtt) };
        s.cc.on_rtt_sample(now, st, Some(s.rtt), acked);
        if st.ca_state == CaState::Loss {
            st.ca_state = CaState::Open;
            s.cc.on_state(st, CaState::Open, &c);
        }
        st.in_flight = st.cwnd;
        let mut sample = AckSample::simple(now, acked, st.snd_una, st.snd_nxt, Some(s.rtt));
        if s.cc.has_cong_control() {
            // A rate sample of one window per RTT, the path carrying at most 1000 packets
            // per RTT (as `test_driver::Driver`).
            s.delivered += acked as u64;
            let w = (st.cwnd.min(1000) as u64).min(s.delivered);
            sample.delivered_total = s.delivered;
            sample.delivered_at = now;
            sample.rs = super::RateSample { prior_delivered: s.delivered - w, delivered: w, interval: Some(s.rtt), acked_sacked: acked, prior_in_flight: st.cwnd, rtt: Some(s.rtt), ..Default::default() };
            s.cc.cong_control(st, &sample, &c);
        } else {
            s.cc.on_ack(st, &sample, &c);
        }
        st.cwnd = st.cwnd.max(MIN_CWND);
        let edge = st.snd_una.wrapping_add(st.cwnd.saturating_mul(MSS));
        if after(edge, st.snd_nxt) {
            st.snd_nxt = edge;
        }
    }

    /// The engine's `set_state`: the hook runs only on a change of state.
    pub fn set_state(&mut self, i: usize, state: CaState) {
        let (s, c) = self.split(i);
        if s.st.ca_state != state {
            s.st.ca_state = state;
            s.cc.on_state(&mut s.st, state, &c);
        }
    }

    /// Deliver `ev` to subflow `i`'s controller (e.g. COMPLETE_CWR, which makes LIA and
    /// BALIA recalculate without touching cwnd).
    pub fn event(&mut self, i: usize, ev: CaEvent) {
        let now = self.now;
        let (s, c) = self.split(i);
        s.cc.on_event(now, &mut s.st, ev, &c);
    }

    /// ACKs of one packet on subflow `i` until cwnd changes; returns how many it took
    /// (None if `limit` ACKs did not change it).
    pub fn acks_to_change(&mut self, i: usize, limit: u32) -> Option<u32> {
        let w = self.cwnd(i);
        (1..=limit).find(|_| {
            self.ack(i, 1);
            self.cwnd(i) != w
        })
    }

    /// `n` ACKs of one packet each on subflow `i`.
    pub fn ack(&mut self, i: usize, n: u32) {
        for _ in 0..n {
            self.ack_with(i, 1);
        }
    }

    /// One RTT of subflow `i`: a window of ACKs spread over its RTT.
    pub fn round(&mut self, i: usize) {
        let w = self.subs[i].st.cwnd.max(1);
        let step = SimTime(self.subs[i].rtt.ns() / w as u64);
        for _ in 0..w {
            self.ack(i, 1);
            self.advance(step);
        }
    }

    /// A fast-retransmit loss on subflow `i`, from entering Recovery to leaving it.
    pub fn lose(&mut self, i: usize) {
        let now = self.now;
        let (s, c) = self.split(i);
        let st = &mut s.st;
        st.prior_cwnd = st.cwnd;
        st.ssthresh = s.cc.ssthresh(st).max(2);
        let high_seq = st.snd_nxt;
        st.ca_state = CaState::Recovery;
        s.cc.on_state(st, CaState::Recovery, &c);
        // The ACK that covers high_seq ends the recovery (tcp_end_cwnd_reduction).
        let (s, c) = self.split(i);
        let st = &mut s.st;
        st.snd_una = high_seq;
        if st.ssthresh < INFINITE_SSTHRESH && !s.cc.has_cong_control() {
            st.cwnd = st.ssthresh.max(1);
        }
        s.cc.on_event(now, st, CaEvent::CompleteCwr, &c);
        st.ca_state = CaState::Open;
        s.cc.on_state(st, CaState::Open, &c);
        st.snd_nxt = st.snd_una.wrapping_add(st.cwnd * MSS);
    }

    /// A retransmission timeout on subflow `i`.
    pub fn rto(&mut self, i: usize) {
        let now = self.now;
        let (s, c) = self.split(i);
        let st = &mut s.st;
        if st.ca_state != CaState::Loss {
            st.prior_cwnd = st.cwnd;
            st.ssthresh = s.cc.ssthresh(st).max(2);
        }
        st.cwnd = 1;
        st.cwnd_cnt = 0;
        if st.ca_state != CaState::Loss {
            st.ca_state = CaState::Loss;
            s.cc.on_state(st, CaState::Loss, &c);
        }
        s.cc.on_event(now, st, CaEvent::Loss, &c);
    }
}

/// Model-based fuzzing (s2n-quic style): random steps over 1–4 subflows for every coupled
/// controller and option set; after every step every cwnd is at least 1 and sane.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{Kind, OptKind, REGISTRY};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Ack { sub: usize, n: u32, per_ack: u32 },
        Round { sub: usize },
        Lose { sub: usize },
        Rto { sub: usize },
        Advance { ms: u64 },
        SetRtt { sub: usize, ms: u64 },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0..4usize, 1..60u32, 1..4u32).prop_map(|(sub, n, per_ack)| Step::Ack { sub, n, per_ack }),
            2 => (0..4usize).prop_map(|sub| Step::Round { sub }),
            1 => (0..4usize).prop_map(|sub| Step::Lose { sub }),
            1 => (0..4usize).prop_map(|sub| Step::Rto { sub }),
            1 => (0..2_000u64).prop_map(|ms| Step::Advance { ms }),
            1 => (0..4usize, 1..1_000u64).prop_map(|(sub, ms)| Step::SetRtt { sub, ms }),
        ]
    }

    /// Every non-default value of every option of `name`, one at a time, plus the defaults.
    fn option_sets(name: &str) -> Vec<CcParams> {
        let info = REGISTRY.iter().find(|c| c.name == name).unwrap();
        let mut sets = vec![CcParams::new()];
        for o in info.options {
            let values: Vec<OptValue> = match o.kind {
                OptKind::Bool => vec![OptValue::Bool(o.default != "true")],
                OptKind::Choice(cs) => cs.iter().filter(|c| **c != o.default).map(|c| OptValue::Text(c.to_string())).collect(),
                OptKind::Int { min, max } => vec![OptValue::Int(min), OptValue::Int(max)],
                OptKind::Paths => vec![],
            };
            for v in values {
                let mut p = CcParams::new();
                p.insert(o.name.to_string(), v);
                sets.push(p);
            }
        }
        sets
    }

    fn coupled_names() -> Vec<&'static str> { REGISTRY.iter().filter(|c| c.kind == Kind::Coupled).map(|c| c.name).collect() }

    /// The same script on `d` and on a plain Reno flow; cwnd and ssthresh must agree at every step.
    fn assert_same_as_reno(mut d: CoupledDriver, what: &str) {
        let mut reno = CoupledDriver::plain_tcp("reno", &CcParams::new(), 100);
        let script: Vec<fn(&mut CoupledDriver)> = vec![
            |d| d.round(0),
            |d| d.round(0),
            |d| d.lose(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.ack(0, 7),
            |d| d.rto(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.round(0),
            |d| d.lose(0),
            |d| d.round(0),
            |d| d.round(0),
        ];
        let mut in_ca = 0;
        for (k, step) in script.iter().enumerate() {
            step(&mut d);
            step(&mut reno);
            let (a, b) = (&d.subs[0].st, &reno.subs[0].st);
            assert_eq!((a.cwnd, a.ssthresh), (b.cwnd, b.ssthresh), "{what}, step {k}");
            in_ca += !a.in_slow_start() as u32;
        }
        assert!(in_ca >= 8, "{what}: the script spends most steps in congestion avoidance");
    }

    #[test]
    fn lia_olia_and_balia_on_a_plain_tcp_flow_are_reno() {
        for name in ["lia", "olia", "balia"] {
            assert_same_as_reno(CoupledDriver::plain_tcp(name, &CcParams::new(), 100), name);
        }
    }

    #[test]
    fn lia_and_balia_of_v0_94_counting_per_packet_on_a_lone_subflow_are_reno() {
        for name in ["lia", "balia"] {
            let p = opts(&[("kernel", "v0.94"), ("growth", "per_packet")]);
            assert_same_as_reno(CoupledDriver::new(name, &p, &[100]), name);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn coupled_controllers_keep_every_cwnd_finite_and_at_least_one_under_random_steps(
            n_subs in 1..=4usize,
            rtts in proptest::collection::vec(1..800u64, 4),
            plain in proptest::bool::weighted(0.15),
            steps in proptest::collection::vec(step(), 1..150),
        ) {
            let names = coupled_names();
            prop_assert_eq!(names.len(), 5);
            for name in names {
                for params in option_sets(name) {
                    let n = if plain { 1 } else { n_subs };
                    let rtts: Vec<SimTime> = rtts[..n].iter().map(|&r| SimTime::from_ms(r)).collect();
                    let mut d = CoupledDriver::build(name, &params, &rtts, !plain);
                    for s in &steps {
                        match *s {
                            Step::Ack { sub, n: k, per_ack } => for _ in 0..k { d.ack_with(sub % n, per_ack) },
                            Step::Round { sub } => if d.cwnd(sub % n) <= 400 { d.round(sub % n) },
                            Step::Lose { sub } => d.lose(sub % n),
                            Step::Rto { sub } => d.rto(sub % n),
                            Step::Advance { ms } => d.advance(SimTime::from_ms(ms)),
                            Step::SetRtt { sub, ms } => d.subs[sub % n].rtt = SimTime::from_ms(ms),
                        }
                        for (j, sub) in d.subs.iter().enumerate() {
                            let st = &sub.st;
                            prop_assert!(st.cwnd >= 1 && st.cwnd < 100_000, "{} {:?} subflow {}: cwnd {} after {:?}", name, params, j, st.cwnd, s);
                            prop_assert!(st.ssthresh >= 1, "{} {:?} subflow {}: ssthresh {}", name, params, j, st.ssthresh);
                        }
                    }
                }
            }
        }
    }
}
