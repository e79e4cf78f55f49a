//! Congestion control: a small trait with no-op defaults (quinn `congestion.rs`,
//! smoltcp `congestion.rs`), Linux's packet-based arithmetic (reference `tcp.md` §1.2).
//!
//! A subflow owns its controller. The controller changes the subflow's congestion
//! variables through `CcState` (Linux: the `tcp_sock` fields a `tcp_congestion_ops`
//! module writes). Coupled algorithms get a read-only `Coupling` view of their siblings.

pub mod balia;
pub mod bbr;
pub mod cubic;
pub mod hybla;
pub mod lia;
pub mod multipath;
pub mod olia;
pub mod registry;
pub mod reno;
pub mod scalable;
pub mod vegas;
pub mod wvegas;
#[cfg(test)]
pub mod coupled_driver;

use std::cell::Cell;

use crate::units::{Bandwidth, SimTime};

pub use balia::Balia;
pub use bbr::Bbr;
pub use cubic::Cubic;
pub use hybla::Hybla;
pub use lia::Lia;
pub use olia::Olia;
pub use registry::{make, make_default, CcError, CcInfo, CcOption, CcParams, Kind, OptKind, OptValue, REGISTRY};
pub use reno::{Reno, RenoCc};
pub use scalable::Scalable;
pub use vegas::Vegas;
pub use wvegas::WVegas;

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
    /// Seed for a controller's own randomness (BBR's PROBE_BW start phase); derived from
    /// the scenario seed, so runs stay deterministic.
    pub seed: u64,
    /// Set by a controller that wants the sender to mark its samples app-limited
    /// (Linux BBR writes `tp->app_limited` in PROBE_RTT); the sender clears it.
    pub request_app_limited: bool,
    /// Linux `snd_una` and `snd_nxt` (subflow sequence space), for controllers that mark
    /// positions in the stream when no ACK is at hand (OLIA's loss marks at `init`,
    /// wVegas' RTT round on `set_state(Open)`).
    pub snd_una: u32,
    pub snd_nxt: u32,
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
            seed: 0,
            request_app_limited: false,
            snd_una: 0,
            snd_nxt: 0,
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

/// Linux `struct rate_sample` (`tcp_rate.c`, draft-cheng-iccrg-delivery-rate-estimation):
/// the delivery rate measured by one ACK.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// `tp->delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over `interval`.
    pub delivered: u64,
    /// `max(send_elapsed, ack_elapsed)`; None when the sample is invalid (no packet
    /// sampled, or the interval is shorter than min_rtt).
    pub interval: Option<SimTime>,
    /// Packets newly delivered (acked or SACKed) by this ACK.
    pub acked_sacked: u32,
    /// Packets newly marked lost while processing this ACK.
    pub losses: u32,
    /// Packets in flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// RTT of the most recently sent packet this ACK delivered (Linux `ca_rtt_us`).
    pub rtt: Option<SimTime>,
    /// The sampled packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
}

impl RateSample {
    /// Delivery rate in packets per second, when the sample is valid.
    pub fn rate_pps(&self) -> Option<f64> {
        let iv = self.interval?;
        if iv == SimTime::ZERO {
            return None;
        }
        Some(self.delivered as f64 / iv.secs_f64())
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
    /// Linux `tp->delivered`: packets delivered over the subflow's life.
    pub delivered_total: u64,
    /// Linux `tp->delivered_mstamp`: when the latest delivery was seen.
    pub delivered_at: SimTime,
    /// Linux `tp->lost`: packets ever marked lost.
    pub lost_total: u64,
    /// Delivery-rate sample (BBR).
    pub rs: RateSample,
}

impl AckSample {
    /// A sample for scripted tests: `acked` packets, cwnd-limited, no rate sample.
    pub fn simple(now: SimTime, acked: u32, ack_seq: u32, snd_nxt: u32, rtt: Option<SimTime>) -> Self {
        AckSample { now, acked, ack_seq, snd_nxt, rtt, cwnd_limited: true, paced: false, delivered_total: 0, delivered_at: now, lost_total: 0, rs: RateSample::default() }
    }
}

/// Read-only view of one sibling subflow, for coupled algorithms.
#[derive(Clone, Copy, Debug)]
pub struct SiblingView {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt: SimTime,
    pub min_rtt: SimTime,
    pub in_flight: u32,
    pub mss: u32,
    /// TCP state ESTABLISHED (Linux `mptcp_sk_can_send`).
    pub established: bool,
    pub in_slow_start: bool,
    pub ca_state: CaState,
    /// Words the sibling's controller exports (`CongestionControl::export`), e.g. OLIA's
    /// inter-loss distance or wVegas' instantaneous rate.
    pub vars: [u64; 2],
}

impl Default for SiblingView {
    fn default() -> Self {
        SiblingView {
            cwnd: 0,
            ssthresh: INFINITE_SSTHRESH,
            srtt: SimTime::ZERO,
            min_rtt: SimTime::ZERO,
            in_flight: 0,
            mss: 1448,
            established: false,
            in_slow_start: true,
            ca_state: CaState::Open,
            vars: [0; 2],
        }
    }
}

impl SiblingView {
    /// Linux coupled modules consider a subflow when it can send and has an RTT sample.
    pub fn considered(&self) -> bool { self.established && self.srtt > SimTime::ZERO }
}

/// The siblings of the subflow being updated (`me` indexes into `subflows()`).
///
/// `subflows()` is in the order the out-of-tree kernel walks a connection's subflows
/// (`mptcp_for_each_sk`): newest first. Linux modules break ties by that order (LIA's and
/// OLIA's best path with `>=`: the last visited, i.e. the oldest, wins).
///
/// The entry at `me` is a snapshot taken before this call; a controller reads its own
/// live values from `CcState`. `meta` is connection-level state shared by the
/// controllers of one connection (Linux: the meta socket's `icsk_ca_priv`, e.g. LIA's
/// alpha); it is None for a plain TCP flow.
///
/// The engine builds the siblings' entries on first use (`Siblings::Lazy`): LIA reads
/// them only in slow start and when its cwnd grows, once per cwnd of ACKs in
/// congestion avoidance, and a k = 8 FatTree's 8 subflows cost a snapshot of 8
/// subflows' lines on every ACK (issue 16). The siblings cannot change during the call
/// (only the subflow being updated is borrowed mutably), so a late snapshot is the one
/// an early snapshot would have been.
#[derive(Clone, Copy)]
pub struct Coupling<'a> {
    pub me: usize,
    views: Siblings<'a>,
    pub meta: Option<&'a Cell<[u64; 2]>>,
}

/// Where a `Coupling`'s sibling views come from.
#[derive(Clone, Copy)]
enum Siblings<'a> {
    Ready(&'a [SiblingView]),
    Lazy(&'a LazySiblings<'a>),
}

/// Sibling views built when a controller first asks for them.
pub struct LazySiblings<'a> {
    views: std::cell::OnceCell<Vec<SiblingView>>,
    build: &'a dyn Fn() -> Vec<SiblingView>,
}

impl<'a> LazySiblings<'a> {
    pub fn new(build: &'a dyn Fn() -> Vec<SiblingView>) -> LazySiblings<'a> { LazySiblings { views: std::cell::OnceCell::new(), build } }

    /// The views, if a controller asked for them (their buffer, to reuse).
    pub fn into_views(self) -> Option<Vec<SiblingView>> { self.views.into_inner() }
}

impl<'a> Coupling<'a> {
    pub fn alone() -> Coupling<'static> { Coupling { me: 0, views: Siblings::Ready(&[]), meta: None } }

    /// A view over ready snapshots.
    pub fn new(me: usize, subflows: &'a [SiblingView], meta: Option<&'a Cell<[u64; 2]>>) -> Coupling<'a> { Coupling { me, views: Siblings::Ready(subflows), meta } }

    /// A view whose snapshots are built on first use.
    pub fn lazy(me: usize, subflows: &'a LazySiblings<'a>, meta: Option<&'a Cell<[u64; 2]>>) -> Coupling<'a> { Coupling { me, views: Siblings::Lazy(subflows), meta } }

    /// The connection's subflows in walk order (the entry at `me` predates this call).
    pub fn subflows(&self) -> &'a [SiblingView] {
        match self.views {
            Siblings::Ready(v) => v,
            Siblings::Lazy(l) => l.views.get_or_init(|| (l.build)()),
        }
    }

    /// Linux `cnt_established`: established subflows of the connection (1 when alone).
    pub fn cnt_established(&self) -> usize { self.subflows().iter().filter(|s| s.established).count().max(1) }

    /// Whether this controller runs inside a multipath connection with siblings.
    pub fn is_multipath(&self) -> bool { self.subflows().len() > 1 }
}

impl std::fmt::Debug for Coupling<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coupling").field("me", &self.me).field("subflows", &self.subflows()).field("meta", &self.meta).finish()
    }
}

/// The hooks of Linux's `tcp_congestion_ops`. Defaults are no-ops, so a controller
/// implements only what it changes. Every hook that may recompute a coupled quantity
/// gets the `Coupling` view.
pub trait CongestionControl {
    fn name(&self) -> &'static str;
    /// Linux `init`.
    fn init(&mut self, _now: SimTime, _st: &mut CcState) {}
    /// Linux `pkts_acked`: called for every ACK that delivers data, before `on_ack`.
    fn on_rtt_sample(&mut self, _now: SimTime, _st: &mut CcState, _rtt: Option<SimTime>, _acked: u32) {}
    /// Linux `cong_avoid`: grow cwnd (not called during a cwnd reduction).
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling);
    /// Linux `cong_control`: when `has_cong_control`, called on every ACK instead of the
    /// engine's PRR reduction and `on_ack` (BBR sets cwnd and pacing itself).
    fn cong_control(&mut self, _st: &mut CcState, _ack: &AckSample, _coupling: &Coupling) {}
    fn has_cong_control(&self) -> bool { false }
    /// Linux `ssthresh`: the new ssthresh on entering recovery or loss.
    fn ssthresh(&mut self, st: &CcState) -> u32;
    /// Linux `set_state`.
    fn on_state(&mut self, _st: &mut CcState, _state: CaState, _coupling: &Coupling) {}
    /// Linux `cwnd_event`.
    fn on_event(&mut self, _now: SimTime, _st: &mut CcState, _ev: CaEvent, _coupling: &Coupling) {}
    /// Linux `undo_cwnd` (default `tcp_reno_undo_cwnd`).
    fn undo_cwnd(&mut self, st: &CcState) -> u32 { st.cwnd.max(st.prior_cwnd) }
    /// Pacing rate when the algorithm paces (BBR); `None` = not paced by the CC.
    fn pacing_rate(&self, _st: &CcState) -> Option<Bandwidth> { None }
    /// Coupled algorithms read their siblings; the engine builds the view only for them.
    fn needs_coupling(&self) -> bool { false }
    /// Words this controller shows its siblings (`SiblingView::vars`).
    fn export(&self) -> [u64; 2] { [0; 2] }
    /// A short name of the controller's internal state for the CC trace (BBR mode).
    fn mode(&self) -> &'static str { "" }
}

/// Built-in controllers in one enum (static dispatch on the hot path, like smoltcp's
/// `AnyController`), with one dynamic variant for plug-ins.
pub enum AnyCc {
    Reno(RenoCc),
    Cubic(Cubic),
    Hybla(Hybla),
    Scalable(Scalable),
    Vegas(Vegas),
    Bbr(Box<Bbr>),
    Lia(Lia),
    Olia(Olia),
    Balia(Balia),
    WVegas(WVegas),
    Dyn(Box<dyn CongestionControl + Send>),
}

macro_rules! dispatch {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            AnyCc::Reno($c) => $e,
            AnyCc::Cubic($c) => $e,
            AnyCc::Hybla($c) => $e,
            AnyCc::Scalable($c) => $e,
            AnyCc::Vegas($c) => $e,
            AnyCc::Bbr($c) => $e,
            AnyCc::Lia($c) => $e,
            AnyCc::Olia($c) => $e,
            AnyCc::Balia($c) => $e,
            AnyCc::WVegas($c) => $e,
            AnyCc::Dyn($c) => $e,
        }
    };
}

impl CongestionControl for AnyCc {
    #[inline]
    fn name(&self) -> &'static str { dispatch!(self, c => c.name()) }
    #[inline]
    fn init(&mut self, now: SimTime, st: &mut CcState) { dispatch!(self, c => c.init(now, st)) }
    #[inline]
    fn on_rtt_sample(&mut self, now: SimTime, st: &mut CcState, rtt: Option<SimTime>, acked: u32) {
        dispatch!(self, c => c.on_rtt_sample(now, st, rtt, acked))
    }
    #[inline]
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling) { dispatch!(self, c => c.on_ack(st, ack, coupling)) }
    #[inline]
    fn cong_control(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling) { dispatch!(self, c => c.cong_control(st, ack, coupling)) }
    #[inline]
    fn has_cong_control(&self) -> bool { dispatch!(self, c => c.has_cong_control()) }
    #[inline]
    fn ssthresh(&mut self, st: &CcState) -> u32 { dispatch!(self, c => c.ssthresh(st)) }
    #[inline]
    fn on_state(&mut self, st: &mut CcState, state: CaState, coupling: &Coupling) { dispatch!(self, c => c.on_state(st, state, coupling)) }
    #[inline]
    fn on_event(&mut self, now: SimTime, st: &mut CcState, ev: CaEvent, coupling: &Coupling) { dispatch!(self, c => c.on_event(now, st, ev, coupling)) }
    #[inline]
    fn undo_cwnd(&mut self, st: &CcState) -> u32 { dispatch!(self, c => c.undo_cwnd(st)) }
    #[inline]
    fn pacing_rate(&self, st: &CcState) -> Option<Bandwidth> { dispatch!(self, c => c.pacing_rate(st)) }
    #[inline]
    fn needs_coupling(&self) -> bool { dispatch!(self, c => c.needs_coupling()) }
    #[inline]
    fn export(&self) -> [u64; 2] { dispatch!(self, c => c.export()) }
    #[inline]
    fn mode(&self) -> &'static str { dispatch!(self, c => c.mode()) }
}

#[cfg(test)]
mod coupling_tests {
    use super::*;

    #[test]
    fn lazy_siblings_are_built_once_and_only_when_read() {
        let calls = Cell::new(0);
        let build = || {
            calls.set(calls.get() + 1);
            vec![SiblingView { cwnd: 3, established: true, ..Default::default() }, SiblingView { cwnd: 9, ..Default::default() }]
        };
        let lazy = LazySiblings::new(&build);
        let c = Coupling::lazy(1, &lazy, None);
        let _ = (c.me, c.meta);
        assert_eq!(calls.get(), 0, "nothing read: nothing built");
        assert_eq!(c.cnt_established(), 1);
        assert!(c.is_multipath());
        assert_eq!(c.subflows()[1].cwnd, 9);
        assert_eq!(calls.get(), 1, "built once for every read");
        assert_eq!(lazy.into_views().map(|v| v.len()), Some(2), "the buffer comes back for reuse");
        let unread = LazySiblings::new(&build);
        assert!(unread.into_views().is_none());
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
        delivered: u64,
        /// Packets per RTT the scripted path delivers (bounds rate samples).
        pub pipe: u32,
    }

    impl<C: CongestionControl> Driver<C> {
        pub fn new(mut cc: C, rtt: SimTime) -> Self {
            let mut st = CcState::new(10, 1448);
            st.srtt = rtt;
            st.min_rtt = rtt;
            cc.init(SimTime::ZERO, &mut st);
            Driver { cc, st, now: SimTime::ZERO, rtt, seq: 0, delivered: 0, pipe: 1000 }
        }
        pub fn advance(&mut self, d: SimTime) { self.now += d; }
        /// Deliver `n` packets in one ACK each, all while cwnd-limited. A controller with
        /// its own `cong_control` gets a rate sample of one window per RTT, as the sender
        /// would measure it.
        pub fn ack_n(&mut self, n: u32) {
            for _ in 0..n {
                self.seq = self.seq.wrapping_add(1448);
                self.delivered += 1;
                let mut s = AckSample::simple(self.now, 1, self.seq, self.seq.wrapping_add(self.st.cwnd * 1448), Some(self.rtt));
                s.delivered_total = self.delivered;
                // The path carries at most `pipe` packets per RTT.
                let w = (self.st.cwnd.min(self.pipe) as u64).min(self.delivered);
                s.rs = RateSample {
                    prior_delivered: self.delivered - w,
                    delivered: w,
                    interval: Some(self.rtt),
                    acked_sacked: 1,
                    prior_in_flight: self.st.cwnd,
                    rtt: Some(self.rtt),
                    ..Default::default()
                };
                self.st.in_flight = self.st.cwnd.saturating_sub(1);
                self.cc.on_rtt_sample(self.now, &mut self.st, Some(self.rtt), 1);
                if self.cc.has_cong_control() {
                    self.cc.cong_control(&mut self.st, &s, &Coupling::alone());
                } else {
                    self.cc.on_ack(&mut self.st, &s, &Coupling::alone());
                }
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
            self.cc.on_state(&mut self.st, CaState::Recovery, &Coupling::alone());
            if !self.cc.has_cong_control() {
                // (The engine leaves cwnd to a controller with its own cong_control.)
                self.st.cwnd = self.st.ssthresh;
            }
            self.st.ca_state = CaState::Open;
            self.cc.on_state(&mut self.st, CaState::Open, &Coupling::alone());
        }
        pub fn rto(&mut self) {
            self.st.prior_cwnd = self.st.cwnd;
            self.st.ssthresh = self.cc.ssthresh(&self.st);
            self.st.ca_state = CaState::Loss;
            self.cc.on_state(&mut self.st, CaState::Loss, &Coupling::alone());
            self.cc.on_event(self.now, &mut self.st, CaEvent::Loss, &Coupling::alone());
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
            let mut d = Driver::new(make_default(name).unwrap(), SimTime::from_ms(50));
            for i in 0..200u32 {
                d.round();
                if i % 7 == 3 { d.lose(); }
                if i % 31 == 5 { d.rto(); }
                assert!(d.st.cwnd >= MIN_CWND && d.st.cwnd < 1_000_000, "{name}: cwnd {}", d.st.cwnd);
                assert!(d.st.ssthresh >= 2, "{name}");
            }
        }
    }

    /// Any controller of the registry, any sequence of ACK bursts, losses, RTOs and idle
    /// gaps: cwnd stays finite and >= 1, ssthresh >= 2, a pacing rate is positive and
    /// finite, and nothing panics.
    mod properties {
        use super::super::*;
        use proptest::prelude::*;
        use test_driver::Driver;

        #[derive(Clone, Debug)]
        enum Step {
            Acks(u32),
            Round,
            Lose,
            Rto,
            Idle(u64),
        }

        fn step() -> impl Strategy<Value = Step> {
            prop_oneof![
                (1..200u32).prop_map(Step::Acks),
                Just(Step::Round),
                Just(Step::Lose),
                Just(Step::Rto),
                (1..5_000u64).prop_map(Step::Idle),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
            #[test]
            fn every_controller_survives_any_event_sequence(
                rtt_ms in 1..1_000u64,
                pipe in 1..5_000u32,
                steps in proptest::collection::vec(step(), 1..80),
            ) {
                for info in REGISTRY {
                    let mut d = Driver::new(make_default(info.name).unwrap(), SimTime::from_ms(rtt_ms));
                    d.pipe = pipe;
                    for s in &steps {
                        match *s {
                            Step::Acks(n) => d.ack_n(n),
                            Step::Round => d.round(),
                            Step::Lose => d.lose(),
                            Step::Rto => d.rto(),
                            Step::Idle(ms) => d.advance(SimTime::from_ms(ms)),
                        }
                        prop_assert!(d.st.cwnd >= MIN_CWND && d.st.cwnd < 1 << 30, "{}: cwnd {}", info.name, d.st.cwnd);
                        prop_assert!(d.st.ssthresh >= 2, "{}: ssthresh {}", info.name, d.st.ssthresh);
                        if let Some(r) = d.cc.pacing_rate(&d.st) {
                            prop_assert!(r.0.is_finite() && r.0 > 0.0, "{}: pacing rate {}", info.name, r.0);
                        }
                    }
                }
            }
        }
    }
}
