//! Packet schedulers. A scheduler sees a read-only `SchedView` and writes actions; it
//! never calls back into the connection (s2n-quic style). The action set admits:
//! - one send per call (minRTT, round-robin, BLEST/ECF);
//! - several sends of the same data on different subflows (redundant);
//! - pre-scheduling into per-subflow queues (`Enqueue`, for AR&P);
//! - waiting for a better subflow (`Wait`, BLEST/ECF);
//! - penalising a subflow (`Penalise`, opportunistic retransmission);
//! - pushing bursts into subflow send queues (`Push`, the upstream Linux scheduler);
//! and a `Dyn` variant so schedulers can be written outside the crate (Python plug-ins).
//!
//! One file per algorithm: minRTT here (the default, and the subflow choice the others
//! build on), `round_robin`, `redundant`, `blest`, `ecf`, `arp`, `upstream`.

pub mod rbpm;

mod arp;
mod blest;
mod ecf;
mod redundant;
mod round_robin;
mod upstream;

pub use arp::{ar_partition, objective, predicted_arrival, Arp, PathEstimate};
pub use blest::{Blest, BlestOptions};
pub use ecf::{Ecf, EcfArithmetic};
pub use redundant::{Redundant, RedundantKernel};
pub use round_robin::RoundRobin;
pub use upstream::{linger_time, sk_pacing_rate, Upstream};

use super::meta::MetaSeg;
use crate::cc::CaState;
use crate::options::{OptKind, OptionSpec};
use crate::units::SimTime;

/// What the scheduler may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// The next new data (the connection picks its size: MSS, data and window).
    New,
    /// The head of the reinjection queue.
    Reinject,
    /// Data already sent elsewhere (opportunistic retransmission, redundant copies).
    Copy { dsn: u64, len: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Transmit now on `sub`.
    Send { sub: usize, seg: Segment },
    /// Assign new data to `sub`'s queue; it goes out when `sub` has cwnd space.
    Enqueue { sub: usize, bytes: u32 },
    /// Halve `sub`'s cwnd (RFC-less Linux penalisation, Raiciu et al. NSDI 2012 §4.2).
    Penalise { sub: usize },
    /// Send nothing now although a subflow has space.
    Wait,
    /// Hand `sub` the send head: up to `bytes` (in whole segments) of data rewound for
    /// retransmission, then new data, into its send queue, which it transmits as its cwnd
    /// allows (upstream Linux `__subflow_push_pending`).
    Push { sub: usize, bytes: u64 },
}

#[derive(Clone, Copy, Debug)]
pub struct SubflowView {
    /// Established, not pre-established (MP_JOIN 4th ACK received) and not potentially
    /// failed (no RTO since the last segment received): `!mptcp_is_def_unavailable`.
    pub established: bool,
    pub backup: bool,
    pub srtt: SimTime,
    pub rttvar: SimTime,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub in_flight: u32,
    pub ca_state: CaState,
    pub mss: u32,
    /// Bytes assigned to this subflow and not yet sent.
    pub queued_bytes: u64,
    /// The pacer lets a packet leave now.
    pub pacing_ok: bool,
    /// The next segment fits the subflow's own window (`snd_una + snd_wnd`).
    pub wnd_ok: bool,
    /// Segments sent and not cumulatively ACKed (Linux `packets_out`).
    pub packets_out: u32,
    /// Bytes sent and not cumulatively ACKed, `snd_nxt - snd_una`; with `queued_bytes`
    /// this is Linux `write_seq - snd_una`, the data the subflow holds.
    pub outstanding_bytes: u64,
    /// The sender's pacing rate in bit/s (BBR's own; otherwise Linux's default
    /// `ratio · cwnd · mss / srtt` when pacing is on), 0 when it does not pace.
    pub pacing_rate_bps: f64,
    /// Linux `sk_pacing_rate` in bytes/s as the subflow last stored it
    /// (`SubflowTx::sk_pacing_rate`: per ACK, not from the cwnd now), 0 before the first.
    pub sk_pacing_rate: u64,
    /// BBR's bottleneck-bandwidth estimate in bit/s (payload of `bw_pps` packets of one
    /// MSS), 0 for other congestion controls.
    pub bw_bps: f64,
    /// The subflow's last recorded delivery rate in bit/s of payload (Linux 4.9+
    /// `tcp_rate_gen` / `tcpi_delivery_rate`), 0 before the first sample.
    pub delivery_rate_bps: f64,
    /// Minimum RTT seen on the subflow (0 before the first sample).
    pub min_rtt: SimTime,
    /// The congestion control's mode (`CongestionControl::mode`: "probe_bw" etc. for
    /// BBR, "" for most others).
    pub cc_mode: &'static str,
}

impl Default for SubflowView {
    /// A subflow that is not established, with nothing sent.
    fn default() -> Self {
        SubflowView {
            established: false,
            backup: false,
            srtt: SimTime::ZERO,
            rttvar: SimTime::ZERO,
            cwnd: 0,
            ssthresh: crate::cc::INFINITE_SSTHRESH,
            in_flight: 0,
            ca_state: CaState::Open,
            mss: 1448,
            queued_bytes: 0,
            pacing_ok: true,
            wnd_ok: true,
            packets_out: 0,
            outstanding_bytes: 0,
            pacing_rate_bps: 0.0,
            sk_pacing_rate: 0,
            bw_bps: 0.0,
            delivery_rate_bps: 0.0,
            min_rtt: SimTime::ZERO,
            cc_mode: "",
        }
    }
}

/// `mptcp_is_temp_unavailable` window checks: Loss state or no cwnd space (queued bytes
/// count as packets, rounded up), and the pacer and the subflow's window allow a send.
#[inline]
pub fn has_space(ca_state: CaState, in_flight: u32, queued_bytes: u64, mss: u32, cwnd: u32, pacing_ok: bool, wnd_ok: bool) -> bool {
    // (The division only when something is queued: mostly nothing is.)
    let queued_pkts = if queued_bytes == 0 { 0 } else { queued_bytes.div_ceil(mss.max(1) as u64) as u32 };
    ca_state != CaState::Loss && in_flight + queued_pkts < cwnd && pacing_ok && wnd_ok
}

/// What minRTT's selectors read of a subflow: from its `SubflowView`, or read straight
/// from the subflow by the connection's fast path for new data (`Connection::push_written`),
/// which skips building the views.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub established: bool,
    pub backup: bool,
    pub has_space: bool,
    pub srtt: SimTime,
}

impl SubflowView {
    /// `mptcp_is_temp_unavailable` window checks: Loss state or no cwnd space.
    pub fn has_space(&self) -> bool {
        has_space(self.ca_state, self.in_flight, self.queued_bytes, self.mss, self.cwnd, self.pacing_ok, self.wnd_ok)
    }
    /// What minRTT's selectors read of it.
    #[inline]
    pub fn candidate(&self) -> Candidate { Candidate { established: self.established, backup: self.backup, has_space: self.has_space(), srtt: self.srtt } }
    pub fn available(&self) -> bool { self.established && self.has_space() }
    /// A segment handed to this subflow now leaves now: neither the pacer nor the
    /// subflow's window holds it. (The simulator has no subflow send queue for `Send`,
    /// so a scheduler whose kernel version would queue the segment on the subflow waits.)
    pub fn can_transmit_now(&self) -> bool { self.pacing_ok && self.wnd_ok }
    /// Linux `srtt_us`: 8 × SRTT in µs (the sub-µs bits are lost).
    pub fn srtt_us8(&self) -> u64 { self.srtt.us() * 8 }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct MetaView {
    /// New data ready to go (written, never sent, and allowed by the peer's window).
    pub new_data: bool,
    /// Data sequence number and length `Segment::New` would send now (so a redundant
    /// scheduler can name the same bytes in a `Segment::Copy` on another subflow).
    pub next_dsn: u64,
    pub next_len: u32,
    /// New data waits only because the peer's receive window is closed.
    pub window_limited: bool,
    /// Head of the reinjection queue and the subflows it was sent on.
    pub reinject: Option<(u64, u32, u64)>,
    /// The oldest data not DATA_ACKed and the subflows it was sent on.
    pub una: Option<(u64, u32, u64)>,
    /// The application is blocked on a full send buffer.
    pub sndbuf_full: bool,
    /// Bytes the peer's connection-level window still allows beyond what is in flight
    /// (what the sender can see of the receive buffer's free space).
    pub window_free: u64,
    /// DATA_ACK: the oldest data not acknowledged at connection level.
    pub data_una: u64,
    /// The peer's connection-level receive window (Linux meta `snd_wnd`), from DATA_ACK.
    pub snd_wnd: u64,
    /// Bytes written by the application and never handed to a subflow (the meta send
    /// queue).
    pub unsent: u64,
    /// Bytes written and not DATA_ACKed (Linux meta `sk_wmem_queued`, in payload bytes).
    pub queued_bytes: u64,
    /// Segments handed to subflows and not DATA_ACKed (Linux meta `packets_out`).
    pub packets_out: u32,
}

/// The segments handed to subflows and not yet DATA_ACKed, in data-sequence order (the
/// meta retransmission queue), as the two halves of a ring buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetaSegs<'a> {
    pub front: &'a [MetaSeg],
    pub back: &'a [MetaSeg],
}

impl<'a> MetaSegs<'a> {
    pub fn len(&self) -> usize { self.front.len() + self.back.len() }
    pub fn is_empty(&self) -> bool { self.len() == 0 }
    pub fn iter(&self) -> impl Iterator<Item = &'a MetaSeg> + 'a { self.front.iter().chain(self.back.iter()) }
    /// The first segment that starts after `dsn` (Linux `skb_rb_next` from the segment
    /// at `dsn`).
    pub fn next_after(&self, dsn: u64) -> Option<&'a MetaSeg> {
        let i = self.front.partition_point(|s| s.dsn <= dsn);
        if i < self.front.len() {
            return Some(&self.front[i]);
        }
        let j = self.back.partition_point(|s| s.dsn <= dsn);
        self.back.get(j)
    }
}

/// A subflow's send-buffer state, for schedulers that fill subflow send queues
/// (`Scheduler::queues_data`; the connection leaves `SchedView::mem` empty for the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubflowMem {
    /// Linux `sk_wmem_queued`: truesize of the data the subflow holds (sent and not
    /// acknowledged, plus queued), `upstream::wmem_queued`.
    pub wmem_queued: u64,
    /// Linux `sk_sndbuf` (truesize bytes).
    pub sndbuf: u64,
}

impl Default for SubflowMem {
    /// Nothing held, no limit.
    fn default() -> Self { SubflowMem { wmem_queued: 0, sndbuf: u64::MAX } }
}

pub struct SchedView<'a> {
    pub now: SimTime,
    pub subflows: &'a [SubflowView],
    /// Subflow indices in the order the out-of-tree kernel walks them
    /// (`mptcp_for_each_sk`): newest first, since `mptcp_add_sock` links each new
    /// subflow at the head of the connection's list. Ties go by this order.
    pub order: &'a [usize],
    pub meta: MetaView,
    /// Sent, not DATA_ACKed segments (what a redundant scheduler copies).
    pub segs: MetaSegs<'a>,
    /// Per subflow send-buffer state, filled for schedulers that queue data (else empty).
    pub mem: &'a [SubflowMem],
}

impl SchedView<'_> {
    /// Subflow `i`'s send-buffer state (`SubflowMem::default` when not filled in).
    pub fn mem(&self, i: usize) -> SubflowMem { self.mem.get(i).copied().unwrap_or_default() }
}

/// Per-subflow counts of what the scheduler had sent on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedCounters {
    /// `Segment::New`: new data.
    pub new_segs: u64,
    /// `Segment::Reinject`: data from the reinjection queue.
    pub reinjected_segs: u64,
    /// `Segment::Copy`: data already sent elsewhere (redundant copies, opportunistic
    /// retransmissions).
    pub copied_segs: u64,
    /// Times this subflow's cwnd was halved by a `Penalise`.
    pub penalised: u64,
}

/// A scheduler's own qualification of a subflow (RBPM's "inactive", AR&P's "redundant"),
/// which the connection reports in its status event log on top of its own status. The
/// scheduler records notes in `schedule`; the connection drains them after each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusNote {
    pub at: SimTime,
    pub subflow: usize,
    /// The scheduler's status for the subflow from now on; `None` hands it back to the
    /// connection's own status. It shows only while the subflow is otherwise "active"
    /// (a failed or backup subflow reports that instead).
    pub status: Option<&'static str>,
    /// The event log's reason (the scheduler's name, e.g. "rbpm").
    pub reason: &'static str,
}

pub trait Scheduler {
    fn name(&self) -> &'static str;
    /// Append the next actions to `out`. The connection executes them and calls again
    /// while the last call produced a send; an empty `out` means nothing more to do.
    fn schedule(&mut self, view: &SchedView, out: &mut Vec<Action>);
    /// Move the status notes recorded since the last call into `out`, oldest first.
    /// Schedulers without a status of their own keep the default (none).
    fn drain_status_notes(&mut self, _out: &mut Vec<StatusNote>) {}
    /// Whether the scheduler reads the congestion controller's rates and mode
    /// (`SubflowView::{pacing_rate_bps, bw_bps, delivery_rate_bps, cc_mode}`); the connection fills them only
    /// then, since computing them costs time on every decision.
    fn needs_rates(&self) -> bool { false }
    /// Whether the scheduler hands data to subflows whose cwnd is full (`Action::Push`
    /// into their send queues); the connection then asks it even when no subflow can
    /// transmit now.
    fn queues_data(&self) -> bool { false }
}

/// Options of the default scheduler.
#[derive(Clone, Copy, Debug)]
pub struct MinRttOptions {
    pub opportunistic_retransmission: bool,
    pub penalisation: bool,
}

/// Default minRTT scheduler of the out-of-tree Linux MPTCP (`mptcp_sched.c`),
/// reference `schedulers.md` §4.1.
pub struct MinRtt {
    pub opts: MinRttOptions,
    /// Per subflow: time of the last penalisation it caused (`last_rbuf_opti`).
    last_rbuf_opti: Vec<SimTime>,
}

impl MinRtt {
    pub fn new(opts: MinRttOptions) -> Self { MinRtt { opts, last_rbuf_opti: Vec::new() } }

    /// `get_available_subflow` for a segment sent on `path_mask`: pass 1 over active
    /// subflows, pass 2 over backups. Unused subflows are preferred; min SRTT wins (strict
    /// `<`, first wins ties). `Err(())` means "wait": an unused active subflow exists but
    /// is only temporarily unavailable.
    pub fn pick(subs: &[SubflowView], order: &[usize], path_mask: u64) -> Result<Option<usize>, ()> {
        Self::pick_by(order, path_mask, |i| subs[i].candidate())
    }

    /// `pick` over what `cand(i)` says of subflow i.
    #[inline]
    pub fn pick_by(order: &[usize], path_mask: u64, cand: impl Fn(usize) -> Candidate) -> Result<Option<usize>, ()> {
        let (best, force) = Self::selectors(order, path_mask, false, &cand);
        if force {
            return best.map(Some).ok_or(());
        }
        let (best_backup, force) = Self::selectors(order, path_mask, true, &cand);
        if force {
            return best_backup.map(Some).ok_or(());
        }
        // Nothing unused: the segment was sent everywhere; retry as if it never was.
        if path_mask != 0 {
            if let (Some(b), _) = Self::selectors(order, 0, false, &cand) {
                return Ok(Some(b));
            }
        }
        Ok(best.or(best_backup))
    }

    /// `pick_by` for new data (`path_mask` 0: every subflow is unused), reading a
    /// subflow's window (`space(i)`, `Candidate::has_space`) only where it matters: when
    /// its SRTT would beat the best so far. `head(i)`: `Candidate`'s `(established,
    /// backup, srtt)`. The same choice as `pick_by` (a test compares them): with
    /// everything unused, a subflow that is not faster than the best cannot change the
    /// choice, and whether it had space counts only when no subflow is chosen.
    /// (issue 16: each ACK of a k = 8 FatTree's 8-subflow connections picks about three
    /// times, and evaluating all 8 candidates each time was a tenth of the run.)
    #[inline]
    pub fn pick_new_by(order: &[usize], head: impl Fn(usize) -> (bool, bool, SimTime), space: impl Fn(usize) -> bool) -> Result<Option<usize>, ()> {
        let (best, force) = Self::new_data_selectors(order, false, &head, &space);
        if force {
            return best.map(Some).ok_or(());
        }
        let (best_backup, force) = Self::new_data_selectors(order, true, &head, &space);
        if force {
            return best_backup.map(Some).ok_or(());
        }
        Ok(best.or(best_backup))
    }

    /// `selectors` with `path_mask` 0, evaluating `space` lazily (`pick_new_by`).
    #[inline]
    fn new_data_selectors(order: &[usize], backup: bool, head: &impl Fn(usize) -> (bool, bool, SimTime), space: &impl Fn(usize) -> bool) -> (Option<usize>, bool) {
        let mut best: Option<(usize, SimTime)> = None;
        let mut temp_unavail = false;
        for &i in order {
            let (established, is_backup, srtt) = head(i);
            if is_backup != backup || !established {
                continue;
            }
            if best.is_some_and(|(_, b)| srtt >= b) {
                continue;
            }
            if space(i) {
                best = Some((i, srtt));
            } else {
                temp_unavail = true;
            }
        }
        let best = best.map(|(i, _)| i);
        (best, best.is_some() || temp_unavail)
    }

    /// `get_subflow_from_selectors` over the active (or backup) subflows: returns the
    /// choice and `force` (an unused subflow was chosen, or none was but an unused one is
    /// only temporarily unavailable).
    #[inline]
    fn selectors(order: &[usize], path_mask: u64, backup: bool, cand: &impl Fn(usize) -> Candidate) -> (Option<usize>, bool) {
        let mut best: Option<(usize, SimTime)> = None;
        let mut best_unused = false;
        let mut unused_temp_unavail = false;
        for &i in order {
            let s = cand(i);
            if s.backup != backup || !s.established {
                continue;
            }
            let unused = path_mask & (1 << i) == 0;
            if !s.has_space {
                unused_temp_unavail |= unused;
                continue;
            }
            if best_unused && !unused {
                continue;
            }
            let better = match best {
                None => true,
                Some((_, b_srtt)) => (unused && !best_unused) || s.srtt < b_srtt,
            };
            if better {
                best = Some((i, s.srtt));
                best_unused = unused;
            }
        }
        let best = best.map(|(i, _)| i);
        (best, best_unused || (best.is_none() && unused_temp_unavail))
    }

    /// Opportunistic retransmission and penalisation (`mptcp_rcv_buf_optimization`).
    fn rcv_buf_optimization(&mut self, v: &SchedView, sk: usize, penal: bool, out: &mut Vec<Action>) {
        rcv_buf_optimization(v, sk, penal, self.opts, PenaliseScope::First, &mut self.last_rbuf_opti, out);
    }
}

/// Which subflows `rcv_buf_optimization` halves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PenaliseScope {
    /// Only the first other subflow (in list order) that carries the head: `break` in
    /// `mptcp_sched.c` of the v0.94/v0.95 releases.
    First,
    /// Every slower subflow that carries the head: `mptcp_blest.c`, and `mptcp_sched.c`
    /// of the later v0.95 branch that ECF ships with (the loop has no `break`).
    All,
}

/// Opportunistic retransmission and penalisation (Linux `mptcp_rcv_buf_optimization`,
/// reference schedulers.md §4.1) for the chosen subflow `sk`: halve the cwnd of slower
/// subflows that hold the oldest un-DATA_ACKed segment, at most once per SRTT of `sk`,
/// and retransmit that segment on `sk`. `last_rbuf_opti[i]` is when subflow i last
/// penalised (0 at first: the kernel stamps the subflow's creation time instead, which
/// only forbids penalising during its first SRTT). Returns whether the penalisation
/// branch was reached (`penal`, or the sender is send-buffer limited), which BLEST
/// records as a retransmission event.
pub(crate) fn rcv_buf_optimization(v: &SchedView, sk: usize, penal: bool, opts: MinRttOptions, scope: PenaliseScope, last_rbuf_opti: &mut Vec<SimTime>, out: &mut Vec<Action>) -> bool {
    let Some((dsn, len, mask)) = v.meta.una else { return false };
    let me = &v.subflows[sk];
    if last_rbuf_opti.len() < v.subflows.len() {
        last_rbuf_opti.resize(v.subflows.len(), SimTime::ZERO);
    }
    // `if (!penal && sk_stream_memory_free(meta_sk)) goto retrans;`
    let reached = penal || v.meta.sndbuf_full;
    // Only penalise again after one SRTT of the fast subflow; halve a subflow that
    // carries the head, is slower and is in the Open state.
    if opts.penalisation && reached && v.now.saturating_sub(last_rbuf_opti[sk]) >= me.srtt {
        for &i in v.order {
            if i == sk || mask & (1 << i) == 0 {
                continue;
            }
            let s = &v.subflows[i];
            if me.srtt < s.srtt && s.ca_state == CaState::Open {
                out.push(Action::Penalise { sub: i });
                last_rbuf_opti[sk] = v.now;
            }
            if scope == PenaliseScope::First {
                break;
            }
        }
    }
    if !opts.opportunistic_retransmission || mask & (1 << sk) != 0 {
        return reached;
    }
    // Retransmit unless the first other holder (list order) is within 4x our SRTT;
    // a holder with cwnd <= 4 always allows it.
    let mut do_retrans = false;
    for &i in v.order {
        let s = &v.subflows[i];
        if i == sk || mask & (1 << i) == 0 {
            continue;
        }
        if s.cwnd <= 4 {
            do_retrans = true;
            break;
        }
        if 4 * me.srtt.ns() >= s.srtt.ns() {
            do_retrans = false;
            break;
        }
        do_retrans = true;
    }
    if do_retrans && me.available() {
        out.push(Action::Send { sub: sk, seg: Segment::Copy { dsn, len } });
    }
    reached
}

impl Scheduler for MinRtt {
    fn name(&self) -> &'static str { "minrtt" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        // Reinjections first.
        if let Some((_, _, mask)) = v.meta.reinject {
            if let Ok(Some(sub)) = Self::pick(v.subflows, v.order, mask) {
                out.push(Action::Send { sub, seg: Segment::Reinject });
                return;
            }
        }
        if v.meta.new_data {
            if let Ok(Some(sub)) = Self::pick(v.subflows, v.order, 0) {
                out.push(Action::Send { sub, seg: Segment::New });
            }
            return;
        }
        if v.meta.window_limited {
            // New data does not fit the peer's window: retransmit the blocking segment on
            // the fast subflow and penalise the slow one (penal = 1).
            if let Ok(Some(sub)) = Self::pick(v.subflows, v.order, 0) {
                self.rcv_buf_optimization(v, sub, true, out);
            }
            return;
        }
        if v.meta.sndbuf_full {
            if let Ok(Some(sub)) = Self::pick(v.subflows, v.order, 0) {
                self.rcv_buf_optimization(v, sub, false, out);
            }
        }
    }
}

/// Built-in schedulers plus one dynamic variant.
pub enum AnyScheduler {
    MinRtt(MinRtt),
    Rbpm(rbpm::Rbpm),
    RoundRobin(RoundRobin),
    Redundant(Redundant),
    Blest(Blest),
    Ecf(Ecf),
    Arp(Arp),
    Upstream(Upstream),
    Dyn(Box<dyn Scheduler + Send>),
}

macro_rules! dispatch {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyScheduler::MinRtt($s) => $e,
            AnyScheduler::RoundRobin($s) => $e,
            AnyScheduler::Redundant($s) => $e,
            AnyScheduler::Blest($s) => $e,
            AnyScheduler::Ecf($s) => $e,
            AnyScheduler::Arp($s) => $e,
            AnyScheduler::Rbpm($s) => $e,
            AnyScheduler::Upstream($s) => $e,
            AnyScheduler::Dyn($s) => $e,
        }
    };
}

impl Scheduler for AnyScheduler {
    fn name(&self) -> &'static str { dispatch!(self, s => s.name()) }
    // Called once or more per push: inlined, so the common no-op cases cost no call.
    #[inline]
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) { dispatch!(self, s => s.schedule(v, out)) }
    #[inline]
    fn drain_status_notes(&mut self, out: &mut Vec<StatusNote>) { dispatch!(self, s => s.drain_status_notes(out)) }
    #[inline]
    fn needs_rates(&self) -> bool { dispatch!(self, s => s.needs_rates()) }
    #[inline]
    fn queues_data(&self) -> bool { dispatch!(self, s => s.queues_data()) }
}

pub struct SchedInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Named options (`scheduler_options` in a scenario).
    pub options: &'static [OptionSpec],
}

/// A byte-sized Linux module parameter (`unsigned char`).
const fn byte_param(name: &'static str, default: &'static str, description: &'static str) -> OptionSpec {
    OptionSpec { name, kind: OptKind::Int { min: 0, max: 255 }, default, description }
}

pub const REGISTRY: &[SchedInfo] = &[
    SchedInfo {
        name: "minrtt",
        description: "Default out-of-tree Linux MPTCP scheduler: lowest-SRTT subflow with cwnd space; opportunistic retransmission + penalisation",
        options: &[],
    },
    SchedInfo {
        name: "upstream",
        description: "Upstream Linux 6.x default scheduler (protocol.c mptcp_subflow_get_send): the active subflow with the shortest linger time, sk_wmem_queued / pacing rate, takes a burst of ~64 KB into its send queue; backups only when no non-backup subflow is active; no cwnd test, no opportunistic retransmission, no penalisation",
        options: &[],
    },
    SchedInfo {
        name: "roundrobin",
        description: "Linux mptcp_rr.c: subflows take turns in the kernel's list order, num_segments at a time; no opportunistic retransmission",
        options: &[
            OptionSpec { name: "num_segments", kind: OptKind::Int { min: 1, max: 255 }, default: "1", description: "consecutive segments a subflow sends before the next one's turn (Linux module parameter num_segments)" },
            OptionSpec { name: "cwnd_limited", kind: OptKind::Bool, default: "true", description: "skip subflows whose cwnd is full; false keeps the strict rotation and waits for the next subflow's cwnd (Linux cwnd_limited)" },
        ],
    },
    SchedInfo {
        name: "redundant",
        description: "Linux mptcp_redundant.c: every segment on every available active subflow, each subflow at its own pace; the first copy to arrive counts",
        options: &[OptionSpec {
            name: "kernel",
            kind: OptKind::Choice(&["v0.95", "v0.94"]),
            default: "v0.95",
            description: "v0.95 (Linux 4.19): a subflow with nothing to resume starts at the send head and copying stops once all data is sent; v0.94 (Linux 4.14): it starts at the oldest un-DATA_ACKed segment and copies until all is DATA_ACKed",
        }],
    },
    SchedInfo {
        name: "blest",
        description: "BLEST (Ferlin et al., IFIP Networking 2016; Linux mptcp_blest.c): minRTT, but waits for the fast subflow when sending on a slower one would block the connection-level window",
        options: &[
            byte_param("lambda", "12", "initial scaling factor x10 of the fast subflow's estimated send volume (1.2)"),
            byte_param("min_lambda", "10", "lower bound of lambda x10"),
            byte_param("max_lambda", "13", "upper bound of lambda x10"),
            byte_param("dyn_lambda_good", "10", "decrease of lambda x1000 per slow-subflow RTT without a retransmission event"),
            byte_param("dyn_lambda_bad", "40", "increase of lambda x1000 per slow-subflow RTT with a retransmission event"),
        ],
    },
    SchedInfo {
        name: "ecf",
        description: "ECF (Lim et al., CoNEXT 2017; Linux mptcp_ecf.c): minRTT, but waits for the fastest subflow when it would finish the queued data sooner than a slower one",
        options: &[
            OptionSpec { name: "r_beta", kind: OptKind::Int { min: 1, max: 1_000_000 }, default: "4", description: "hysteresis beta = 1/r_beta once waiting (Linux mptcp_ecf_r_beta)" },
            OptionSpec {
                name: "arithmetic",
                kind: OptKind::Choice(&["linux", "exact"]),
                default: "linux",
                description: "evaluate the inequalities as the kernel does, with 32-bit products that wrap for large windows and RTTs, or exactly",
            },
        ],
    },
    SchedInfo {
        name: "rbpm",
        description: "RBPM (seed 001 Algorithm 1), a scheduler-side path filter: sends on the best-scored path, stops the worst paths while the estimated out-of-order buffer exceeds what the receive window leaves, restarts them in a later decision when the window left is over twice that",
        options: &[
            OptionSpec { name: "required", kind: OptKind::Choice(&["pairwise", "slowest"]), default: "pairwise", description: "Eq. 3 as every faster/slower pair of active paths (reference reconstruction) or each active path against the slowest" },
            OptionSpec {
                name: "reactivation",
                kind: OptKind::Choice(&["later", "literal", "all_paths"]),
                default: "later",
                description: "when stopped paths restart, and what Eq. 3's o_i is: later = Eq. 3 with each path's packets out (a drained stopped path counts 0), restart when available > 2·B_req of the active and undrained stopped paths, only in a decision that stopped none (seed 001 Fig. 4's account); literal = Algorithm 1 as printed with o_i = cwnd (available > 2·B_req of the reduced set, also right after stopping: paths flap); all_paths = o_i = cwnd, available > 2·B_req of all paths, never in a decision that stopped one",
            },
            OptionSpec {
                name: "bandwidth",
                kind: OptKind::Choice(&["delivery_rate", "cwnd_srtt"]),
                default: "delivery_rate",
                description: "BW_i of Eq. 5 (the seed's \"available bandwidth of path i\"): the subflow's delivery-rate estimate (Linux tcp_rate_gen), or cwnd x MSS / SRTT, the rate the window allows (it rewards a subflow whose cwnd has grown into a deep queue)",
            },
        ],
    },
    SchedInfo {
        name: "arp",
        description: "AR&P (seed 004 §V, Han et al. TWC 2021): every min RTT, AR-Scheduling splits the subflows into non-redundant ones (new data) and redundant ones (copies of un-DATA_ACKed data only) by the greedy Eq. 3 test and inflight >= 4; P-Scheduling pre-schedules each new packet on the non-redundant subflow with the earliest predicted arrival (Eq. 4), within max RTT x sum BW, in PROBE_BW, else round-robin. x_i = pacing rate, r_i = min RTT; with a congestion control other than (coupled) BBR it runs with the stand-in x_i = cwnd x mss / SRTT, and congestion avoidance in place of PROBE_BW",
        options: &[],
    },
];

/// Check a scheduler name and its options.
pub fn check(name: &str, params: &crate::options::Params) -> Result<&'static SchedInfo, crate::options::OptionError> {
    let info = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| crate::options::unknown("scheduler", name, REGISTRY.iter().map(|s| s.name)))?;
    crate::options::check(name, info.options, params)?;
    Ok(info)
}

/// Build a scheduler by name. `conn` carries the connection-level switches
/// (opportunistic retransmission, penalisation) that the kernel applies to every
/// scheduler that calls `mptcp_rcv_buf_optimization` (minRTT, BLEST, ECF).
pub fn make(name: &str, params: &crate::options::Params, conn: MinRttOptions) -> Result<AnyScheduler, crate::options::OptionError> {
    let info = check(name, params)?;
    let o = crate::options::Opts { component: info.name, options: info.options, given: params };
    // Ranges are checked against the registry above, so the casts cannot truncate.
    Ok(match name {
        "minrtt" => AnyScheduler::MinRtt(MinRtt::new(conn)),
        "rbpm" => {
            let form = if o.choice("required") == "slowest" { rbpm::Required::Slowest } else { rbpm::Required::Pairwise };
            let reactivation = match o.choice("reactivation").as_str() {
                "literal" => rbpm::Reactivation::Literal,
                "all_paths" => rbpm::Reactivation::AllPaths,
                _ => rbpm::Reactivation::Later,
            };
            let bandwidth = if o.choice("bandwidth") == "cwnd_srtt" { rbpm::Bandwidth::CwndSrtt } else { rbpm::Bandwidth::DeliveryRate };
            AnyScheduler::Rbpm(rbpm::Rbpm::new(form, reactivation, bandwidth))
        }
        "roundrobin" => AnyScheduler::RoundRobin(RoundRobin::new(o.int("num_segments") as u32, o.bool("cwnd_limited"))),
        "redundant" => AnyScheduler::Redundant(Redundant::new(if o.choice("kernel") == "v0.94" { RedundantKernel::V094 } else { RedundantKernel::V095 })),
        "blest" => AnyScheduler::Blest(Blest::new(
            conn,
            BlestOptions {
                lambda: o.int("lambda") as u8,
                min_lambda: o.int("min_lambda") as u8,
                max_lambda: o.int("max_lambda") as u8,
                dyn_lambda_good: o.int("dyn_lambda_good") as u8,
                dyn_lambda_bad: o.int("dyn_lambda_bad") as u8,
            },
        )),
        "arp" => AnyScheduler::Arp(Arp::new()),
        "upstream" => AnyScheduler::Upstream(Upstream::new()),
        "ecf" => AnyScheduler::Ecf(Ecf::new(conn, o.int("r_beta") as u32, if o.choice("arithmetic") == "exact" { EcfArithmetic::Exact } else { EcfArithmetic::Linux })),
        _ => unreachable!("{name} is in the registry but has no constructor"),
    })
}

/// Hand-built views for the schedulers' unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// An established subflow: SRTT, cwnd and packets in flight; mss 1448.
    pub fn sub(srtt_ms: u64, cwnd: u32, in_flight: u32) -> SubflowView {
        SubflowView { established: true, srtt: SimTime::from_ms(srtt_ms), cwnd, ssthresh: 100, in_flight, packets_out: in_flight, outstanding_bytes: in_flight as u64 * 1448, ..SubflowView::default() }
    }

    /// New data of `len` bytes at `dsn` is ready and fits the peer's window.
    pub fn new_data(dsn: u64, len: u32) -> MetaView {
        MetaView { new_data: len > 0, next_dsn: dsn, next_len: len, data_una: dsn, snd_wnd: 1 << 30, unsent: 1 << 20, queued_bytes: 1 << 20, ..MetaView::default() }
    }

    pub fn view<'a>(subs: &'a [SubflowView], order: &'a [usize], meta: MetaView) -> SchedView<'a> { SchedView { now: SimTime::from_secs(1), subflows: subs, order, meta, segs: MetaSegs::default(), mem: &[] } }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sv(srtt_ms: u64, cwnd: u32, in_flight: u32) -> SubflowView {
        SubflowView { established: true, srtt: SimTime::from_ms(srtt_ms), cwnd, ssthresh: 100, in_flight, ..SubflowView::default() }
    }

    #[test]
    fn minrtt_prefers_the_fastest_subflow_with_space() {
        // schedulers.md §4.1 test vectors.
        let a = sv(10, 10, 0);
        let b = sv(50, 10, 0);
        assert_eq!(MinRtt::pick(&[a, b], &[0, 1], 0), Ok(Some(0)));
        let a_full = sv(10, 10, 10);
        assert_eq!(MinRtt::pick(&[a_full, b], &[0, 1], 0), Ok(Some(1)));
        let a_rec = SubflowView { ca_state: CaState::Recovery, ..a };
        assert_eq!(MinRtt::pick(&[a_rec, b], &[0, 1], 0), Ok(Some(0)));
        let a_loss = SubflowView { ca_state: CaState::Loss, ..a };
        assert_eq!(MinRtt::pick(&[a_loss, b], &[0, 1], 0), Ok(Some(1)));
    }

    #[test]
    fn backups_are_used_only_when_no_active_subflow_is_usable() {
        let a = sv(10, 10, 0);
        let c = SubflowView { backup: true, ..sv(5, 10, 0) };
        assert_eq!(MinRtt::pick(&[a, c], &[0, 1], 0), Ok(Some(0)));
        let a_down = SubflowView { established: false, ..a };
        assert_eq!(MinRtt::pick(&[a_down, c], &[0, 1], 0), Ok(Some(1)));
    }

    #[test]
    fn opportunistic_retransmission_follows_the_rtt_ratio_rule() {
        // Head held by B (srtt 50, cwnd 10), fast A (srtt 10): 4*10 < 50 -> retransmit.
        let mut s = MinRtt::new(MinRttOptions { opportunistic_retransmission: true, penalisation: true });
        let subs = [sv(10, 10, 0), sv(50, 10, 10)];
        let meta = MetaView { new_data: false, next_dsn: 0, next_len: 0, window_limited: true, reinject: None, una: Some((0, 1448, 0b10)), sndbuf_full: false, ..MetaView::default() };
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 1], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 1 }, Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }]);
        // Penalisation again within one SRTT of A: only the retransmission.
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(1) + SimTime::from_ms(5), subflows: &subs, order: &[0, 1], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }]);
        // B srtt 30: 4*10 >= 30 -> no retransmission; B cwnd 4 -> retransmit.
        let subs = [sv(10, 10, 0), sv(30, 10, 10)];
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(3), subflows: &subs, order: &[0, 1], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert!(!out.iter().any(|a| matches!(a, Action::Send { .. })));
        let subs = [sv(10, 10, 0), sv(30, 4, 4)];
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(5), subflows: &subs, order: &[0, 1], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert!(out.contains(&Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }));
    }

    #[test]
    fn penalisation_halves_only_the_first_subflow_that_carries_the_head() {
        let mut s = MinRtt::new(MinRttOptions { opportunistic_retransmission: false, penalisation: true });
        let subs = [sv(10, 10, 0), sv(50, 10, 10), sv(80, 10, 10)];
        let meta = MetaView { new_data: false, next_dsn: 0, next_len: 0, window_limited: true, reinject: None, una: Some((0, 1448, 0b110)), sndbuf_full: false, ..MetaView::default() };
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 1, 2], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 1 }]);
        // The kernel walks newest first: with order [0, 2, 1] subflow 2 is the first.
        let mut s = MinRtt::new(MinRttOptions { opportunistic_retransmission: false, penalisation: true });
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 2, 1], meta, segs: MetaSegs::default(), mem: &[] }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 2 }]);
    }

    #[test]
    fn equal_rtts_go_to_the_subflow_the_kernel_walks_first() {
        let (a, b) = (sv(20, 10, 0), sv(20, 10, 0));
        assert_eq!(MinRtt::pick(&[a, b], &[0, 1], 0), Ok(Some(0)));
        assert_eq!(MinRtt::pick(&[a, b], &[1, 0], 0), Ok(Some(1)));
    }

    #[test]
    fn the_lazy_new_data_pick_chooses_as_the_full_one() {
        // Random subflows (established or not, backup or not, SRTTs with ties, full or
        // not, in Loss or not) in a random walk order, against `pick` with nothing sent.
        let mut rng = crate::rng::Rng::stream(7, "pick");
        for _ in 0..20_000 {
            let n = 1 + (rng.next_u64() % 8) as usize;
            let subs: Vec<SubflowView> = (0..n)
                .map(|_| {
                    let r = rng.next_u64();
                    SubflowView {
                        established: r & 3 != 0,
                        backup: r >> 2 & 7 == 0,
                        ca_state: if r >> 5 & 7 == 0 { CaState::Loss } else { CaState::Open },
                        wnd_ok: r >> 8 & 7 != 0,
                        pacing_ok: true,
                        ..sv(1 + (r >> 11) % 4, 10, ((r >> 20) % 12) as u32)
                    }
                })
                .collect();
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            let lazy = MinRtt::pick_new_by(&order, |i| (subs[i].established, subs[i].backup, subs[i].srtt), |i| subs[i].has_space());
            assert_eq!(lazy, MinRtt::pick(&subs, &order, 0), "{subs:?} {order:?}");
        }
    }
}
