//! Congestion control: a small trait with no-op defaults (quinn `congestion.rs`,
//! smoltcp `congestion.rs`), Linux's packet-based arithmetic (reference `tcp.md` §1.2).
//!
//! A subflow owns its controller. The controller changes the subflow's congestion
//! variables through `CcState` (Linux: the `tcp_sock` fields a `tcp_congestion_ops`
//! module writes). Coupled algorithms get a read-only `Coupling` view of their siblings.

pub mod cubic;
pub mod reno;

use crate::units::{Bandwidth, SimTime};

pub use cubic::Cubic;
pub use reno::Reno;

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// The floor the engine keeps cwnd at (Linux never goes below 1 packet).
pub const MIN_CWND: u32 = 1;

/// Linux `icsk_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// Linux `tcp_ca_event` values the engine emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing was in flight (after idle).
    TxStart,
    /// cwnd restarted after idle (RFC 2861).
    CwndRestart,
    /// Loss recovery or cwnd reduction completed.
    CompleteCwr,
    /// Retransmission timeout.
    Loss,
}

/// The congestion variables of one subflow, in packets (Linux units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcState {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Linux `snd_cwnd_cnt`: fractional growth counter for `cong_avoid_ai`.
    pub cwnd_cnt: u32,
    pub cwnd_clamp: u32,
    /// cwnd at the start of the current reduction (for undo and PRR).
    pub prior_cwnd: u32,
    pub mss: u32,
    pub srtt: SimTime,
    pub min_rtt: SimTime,
    pub in_flight: u32,
    pub ca_state: CaState,
}

impl CcState {
    pub fn new(initial_cwnd: u32, mss: u32) -> Self {
        CcState {
            cwnd: initial_cwnd,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX / 2,
            prior_cwnd: initial_cwnd,
            mss,
            srtt: SimTime::ZERO,
            min_rtt: SimTime::ZERO,
            in_flight: 0,
            ca_state: CaState::Open,
        }
    }

    /// Linux `tcp_in_slow_start`: strict `cwnd < ssthresh`.
    pub fn in_slow_start(&self) -> bool { self.cwnd < self.ssthresh }

    /// Linux `tcp_slow_start` (tcp_cong.c): grow by `acked` up to ssthresh and return
    /// the ACKed packets left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let new = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let used = new.saturating_sub(self.cwnd);
        self.cwnd = new.min(self.cwnd_clamp);
        acked - used.min(acked)
    }

    /// Linux `tcp_cong_avoid_ai`: +1 packet per `w` ACKed packets.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd = self.cwnd.saturating_add(1);
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd = self.cwnd.saturating_add(d);
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }

    /// Linux `tcp_current_ssthresh`.
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
}

/// What one ACK tells the controller.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: SimTime,
    /// Packets newly delivered (cumulatively ACKed or SACKed) by this ACK.
    pub acked: u32,
    /// Cumulative ACK after processing, and the next sequence to send.
    pub ack_seq: u32,
    pub snd_nxt: u32,
    /// RTT sample from this ACK, if any (Karn: never from a retransmitted segment).
    pub rtt: Option<SimTime>,
    /// Linux `tcp_is_cwnd_limited`: growth only when the window was the limit.
    pub cwnd_limited: bool,
    /// Whether pacing is active on this subflow (HyStart uses it).
    pub paced: bool,
}

/// Read-only view of one sibling subflow, for coupled algorithms.
#[derive(Clone, Copy, Debug, Default)]
pub struct SiblingView {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt: SimTime,
    pub min_rtt: SimTime,
    pub in_flight: u32,
    pub mss: u32,
    pub established: bool,
    pub in_slow_start: bool,
}

/// The siblings of the subflow being updated (`me` indexes into `subflows`).
#[derive(Clone, Copy, Debug)]
pub struct Coupling<'a> {
    pub me: usize,
    pub subflows: &'a [SiblingView],
}

impl Coupling<'_> {
    pub fn alone() -> Coupling<'static> { Coupling { me: 0, subflows: &[] } }
}

pub trait CongestionControl {
    fn name(&self) -> &'static str;
    /// Linux `init`.
    fn init(&mut self, _now: SimTime, _st: &mut CcState) {}
    /// Linux `pkts_acked`: called for every ACK that delivers data, before `on_ack`.
    fn on_rtt_sample(&mut self, _now: SimTime, _st: &mut CcState, _rtt: Option<SimTime>, _acked: u32) {}
    /// Linux `cong_avoid`: grow cwnd (not called during a cwnd reduction).
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling);
    /// Linux `ssthresh`: the new ssthresh on entering recovery or loss.
    fn ssthresh(&mut self, st: &CcState) -> u32;
    /// Linux `set_state`.
    fn on_state(&mut self, _st: &mut CcState, _state: CaState) {}
    /// Linux `cwnd_event`.
    fn on_event(&mut self, _now: SimTime, _st: &mut CcState, _ev: CaEvent) {}
    /// Linux `undo_cwnd` (default `tcp_reno_undo_cwnd`).
    fn undo_cwnd(&mut self, st: &CcState) -> u32 { st.cwnd.max(st.prior_cwnd) }
    /// Pacing rate when the algorithm paces (BBR); `None` = not paced by the CC.
    fn pacing_rate(&self, _st: &CcState) -> Option<Bandwidth> { None }
    /// Coupled algorithms read their siblings; the engine builds the view only for them.
    fn needs_coupling(&self) -> bool { false }
}

/// Built-in controllers in one enum (static dispatch on the hot path, like smoltcp's
/// `AnyController`), with one dynamic variant for plug-ins.
pub enum AnyCc {
    Reno(Reno),
    Cubic(Cubic),
    Dyn(Box<dyn CongestionControl + Send>),
}

macro_rules! dispatch {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            AnyCc::Reno($c) => $e,
            AnyCc::Cubic($c) => $e,
            AnyCc::Dyn($c) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    fn name(&self) -> &'static str { dispatch!(self, c => c.name()) }
    fn init(&mut self, now: SimTime, st: &mut CcState) { dispatch!(self, c => c.init(now, st)) }
    fn on_rtt_sample(&mut self, now: SimTime, st: &mut CcState, rtt: Option<SimTime>, acked: u32) {
        dispatch!(self, c => c.on_rtt_sample(now, st, rtt, acked))
    }
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling) { dispatch!(self, c => c.on_ack(st, ack, coupling)) }
    fn ssthresh(&mut self, st: &CcState) -> u32 { dispatch!(self, c => c.ssthresh(st)) }
    fn on_state(&mut self, st: &mut CcState, state: CaState) { dispatch!(self, c => c.on_state(st, state)) }
    fn on_event(&mut self, now: SimTime, st: &mut CcState, ev: CaEvent) { dispatch!(self, c => c.on_event(now, st, ev)) }
    fn undo_cwnd(&mut self, st: &CcState) -> u32 { dispatch!(self, c => c.undo_cwnd(st)) }
    fn pacing_rate(&self, st: &CcState) -> Option<Bandwidth> { dispatch!(self, c => c.pacing_rate(st)) }
    fn needs_coupling(&self) -> bool { dispatch!(self, c => c.needs_coupling()) }
}

/// Registry entry: what `mptcplab list` prints and what a scenario may name.
pub struct CcInfo {
    pub name: &'static str,
    pub description: &'static str,
}

pub const REGISTRY: &[CcInfo] = &[
    CcInfo { name: "reno", description: "NewReno AIMD as Linux tcp_cong.c (uncoupled per subflow)" },
    CcInfo { name: "cubic", description: "CUBIC with HyStart, as Linux tcp_cubic.c (RFC 9438; uncoupled per subflow)" },
];

pub fn make(name: &str) -> Option<AnyCc> {
    match name {
        "reno" => Some(AnyCc::Reno(Reno)),
        "cubic" => Some(AnyCc::Cubic(Cubic::new())),
        _ => None,
    }
}

/// A scripted driver that owns virtual time, for unit tests of any controller
/// (quiche `test_sender.rs` style): `ack_n`, `lose`, `advance`.
#[cfg(test)]
pub mod test_driver {
    use super::*;

    pub struct Driver<C: CongestionControl> {
        pub cc: C,
        pub st: CcState,
        pub now: SimTime,
        pub rtt: SimTime,
        seq: u32,
    }

    impl<C: CongestionControl> Driver<C> {
        pub fn new(mut cc: C, rtt: SimTime) -> Self {
            let mut st = CcState::new(10, 1448);
            st.srtt = rtt;
            st.min_rtt = rtt;
            cc.init(SimTime::ZERO, &mut st);
            Driver { cc, st, now: SimTime::ZERO, rtt, seq: 0 }
        }
        pub fn advance(&mut self, d: SimTime) { self.now += d; }
        /// Deliver `n` packets in one ACK each, all while cwnd-limited.
        pub fn ack_n(&mut self, n: u32) {
            for _ in 0..n {
                self.seq = self.seq.wrapping_add(1448);
                let s = AckSample { now: self.now, acked: 1, ack_seq: self.seq, snd_nxt: self.seq.wrapping_add(self.st.cwnd * 1448), rtt: Some(self.rtt), cwnd_limited: true, paced: false };
                self.cc.on_rtt_sample(self.now, &mut self.st, Some(self.rtt), 1);
                self.cc.on_ack(&mut self.st, &s, &Coupling::alone());
            }
        }
        /// One round trip of ACKs for a full window, then advance one RTT.
        pub fn round(&mut self) {
            let w = self.st.cwnd;
            let step = SimTime(self.rtt.ns() / w.max(1) as u64);
            for _ in 0..w {
                self.ack_n(1);
                self.advance(step);
            }
        }
        /// Fast-retransmit style loss: ssthresh from the CC, cwnd to ssthresh.
        pub fn lose(&mut self) {
            self.st.prior_cwnd = self.st.cwnd;
            self.st.ssthresh = self.cc.ssthresh(&self.st);
            self.st.ca_state = CaState::Recovery;
            self.cc.on_state(&mut self.st, CaState::Recovery);
            self.st.cwnd = self.st.ssthresh;
            self.st.ca_state = CaState::Open;
            self.cc.on_state(&mut self.st, CaState::Open);
        }
        pub fn rto(&mut self) {
            self.st.prior_cwnd = self.st.cwnd;
            self.st.ssthresh = self.cc.ssthresh(&self.st);
            self.st.ca_state = CaState::Loss;
            self.cc.on_state(&mut self.st, CaState::Loss);
            self.cc.on_event(self.now, &mut self.st, CaEvent::Loss);
            self.st.cwnd = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_slow_start_feeds_leftover_to_congestion_avoidance() {
        // tcp.md test vector 1.
        let mut st = CcState::new(10, 1448);
        st.ssthresh = 12;
        let left = st.slow_start(5);
        assert_eq!((st.cwnd, left), (12, 3));
        st.cong_avoid_ai(12, left);
        assert_eq!((st.cwnd, st.cwnd_cnt), (12, 3));
    }

    #[test]
    fn cong_avoid_ai_adds_one_packet_per_window() {
        // tcp.md test vector 2.
        let mut st = CcState::new(10, 1448);
        st.ssthresh = 5;
        for _ in 0..9 {
            st.cong_avoid_ai(10, 1);
        }
        assert_eq!(st.cwnd, 10);
        st.cong_avoid_ai(10, 1);
        assert_eq!((st.cwnd, st.cwnd_cnt), (11, 0));
    }

    #[test]
    fn every_controller_keeps_cwnd_finite_and_above_the_floor_under_scripted_abuse() {
        use test_driver::Driver;
        for name in REGISTRY.iter().map(|c| c.name) {
            let mut d = Driver::new(make(name).unwrap(), SimTime::from_ms(50));
            for i in 0..200u32 {
                d.round();
                if i % 7 == 3 { d.lose(); }
                if i % 31 == 5 { d.rto(); }
                assert!(d.st.cwnd >= MIN_CWND && d.st.cwnd < 1_000_000, "{name}: cwnd {}", d.st.cwnd);
                assert!(d.st.ssthresh >= 2, "{name}");
            }
        }
    }
}
