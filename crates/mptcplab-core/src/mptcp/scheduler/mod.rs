//! Packet schedulers. A scheduler sees a read-only `SchedView` and writes actions; it
//! never calls back into the connection (s2n-quic style). The action set admits:
//! - one send per call (minRTT, round-robin, BLEST/ECF);
//! - several sends of the same data on different subflows (redundant);
//! - pre-scheduling into per-subflow queues (`Enqueue`, for AR&P);
//! - waiting for a better subflow (`Wait`, BLEST/ECF);
//! - penalising a subflow (`Penalise`, opportunistic retransmission);
//! and a `Dyn` variant so schedulers can be written outside the crate (Python plug-ins).

use crate::cc::CaState;
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
}

impl SubflowView {
    /// `mptcp_is_temp_unavailable` window checks: Loss state or no cwnd space.
    pub fn has_space(&self) -> bool {
        let queued_pkts = self.queued_bytes.div_ceil(self.mss.max(1) as u64) as u32;
        self.ca_state != CaState::Loss && self.in_flight + queued_pkts < self.cwnd && self.pacing_ok && self.wnd_ok
    }
    pub fn available(&self) -> bool { self.established && self.has_space() }
}

#[derive(Clone, Copy, Debug)]
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
}

pub struct SchedView<'a> {
    pub now: SimTime,
    pub subflows: &'a [SubflowView],
    /// Subflow indices in the order the out-of-tree kernel walks them
    /// (`mptcp_for_each_sk`): newest first, since `mptcp_add_sock` links each new
    /// subflow at the head of the connection's list. Ties go by this order.
    pub order: &'a [usize],
    pub meta: MetaView,
}

pub trait Scheduler {
    fn name(&self) -> &'static str;
    /// Append the next actions to `out`. The connection executes them and calls again
    /// while the last call produced a send; an empty `out` means nothing more to do.
    fn schedule(&mut self, view: &SchedView, out: &mut Vec<Action>);
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
        let (best, force) = Self::selectors(subs, order, path_mask, false);
        if force {
            return best.map(Some).ok_or(());
        }
        let (best_backup, force) = Self::selectors(subs, order, path_mask, true);
        if force {
            return best_backup.map(Some).ok_or(());
        }
        // Nothing unused: the segment was sent everywhere; retry as if it never was.
        if path_mask != 0 {
            if let (Some(b), _) = Self::selectors(subs, order, 0, false) {
                return Ok(Some(b));
            }
        }
        Ok(best.or(best_backup))
    }

    /// `get_subflow_from_selectors` over the active (or backup) subflows: returns the
    /// choice and `force` (an unused subflow was chosen, or none was but an unused one is
    /// only temporarily unavailable).
    fn selectors(subs: &[SubflowView], order: &[usize], path_mask: u64, backup: bool) -> (Option<usize>, bool) {
        let mut best: Option<usize> = None;
        let mut best_unused = false;
        let mut unused_temp_unavail = false;
        for &i in order {
            let s = &subs[i];
            if s.backup != backup || !s.established {
                continue;
            }
            let unused = path_mask & (1 << i) == 0;
            if !s.has_space() {
                unused_temp_unavail |= unused;
                continue;
            }
            if best_unused && !unused {
                continue;
            }
            let better = match best {
                None => true,
                Some(b) => (unused && !best_unused) || s.srtt < subs[b].srtt,
            };
            if better {
                best = Some(i);
                best_unused = unused;
            }
        }
        (best, best_unused || (best.is_none() && unused_temp_unavail))
    }

    /// Opportunistic retransmission and penalisation (`mptcp_rcv_buf_optimization`).
    fn rcv_buf_optimization(&mut self, v: &SchedView, sk: usize, penal: bool, out: &mut Vec<Action>) {
        let Some((dsn, len, mask)) = v.meta.una else { return };
        let me = &v.subflows[sk];
        if self.last_rbuf_opti.len() < v.subflows.len() {
            self.last_rbuf_opti.resize(v.subflows.len(), SimTime::ZERO);
        }
        let may_penalise = self.opts.penalisation && (penal || v.meta.sndbuf_full);
        // Only penalise again after one SRTT of the fast subflow. Only the first other
        // subflow (in list order) that carries the head is considered (`break` in
        // mptcp_sched.c v0.9x), and halved if it is slower and in the Open state.
        if may_penalise && v.now.saturating_sub(self.last_rbuf_opti[sk]) >= me.srtt {
            if let Some((i, s)) = v.order.iter().map(|&i| (i, &v.subflows[i])).find(|&(i, _)| i != sk && mask & (1 << i) != 0) {
                if me.srtt < s.srtt && s.ca_state == CaState::Open {
                    out.push(Action::Penalise { sub: i });
                    self.last_rbuf_opti[sk] = v.now;
                }
            }
        }
        if !self.opts.opportunistic_retransmission || mask & (1 << sk) != 0 {
            return;
        }
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
    }
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
    Dyn(Box<dyn Scheduler + Send>),
}

impl Scheduler for AnyScheduler {
    fn name(&self) -> &'static str {
        match self {
            AnyScheduler::MinRtt(s) => s.name(),
            AnyScheduler::Dyn(s) => s.name(),
        }
    }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        match self {
            AnyScheduler::MinRtt(s) => s.schedule(v, out),
            AnyScheduler::Dyn(s) => s.schedule(v, out),
        }
    }
}

pub struct SchedInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Named options (`scheduler_options` in a scenario).
    pub options: &'static [crate::options::OptionSpec],
}

pub const REGISTRY: &[SchedInfo] = &[SchedInfo {
    name: "minrtt",
    description: "Default out-of-tree Linux MPTCP scheduler: lowest-SRTT subflow with cwnd space; opportunistic retransmission + penalisation",
    options: &[],
}];

/// Check a scheduler name and its options.
pub fn check(name: &str, params: &crate::options::Params) -> Result<&'static SchedInfo, crate::options::OptionError> {
    let info = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| crate::options::unknown("scheduler", name, REGISTRY.iter().map(|s| s.name)))?;
    crate::options::check(name, info.options, params)?;
    Ok(info)
}

/// Build a scheduler by name. `conn` carries the connection-level switches
/// (opportunistic retransmission, penalisation) that the kernel applies to every
/// scheduler.
pub fn make(name: &str, params: &crate::options::Params, conn: MinRttOptions) -> Result<AnyScheduler, crate::options::OptionError> {
    let info = check(name, params)?;
    let _o = crate::options::Opts { component: info.name, options: info.options, given: params };
    Ok(match name {
        "minrtt" => AnyScheduler::MinRtt(MinRtt::new(conn)),
        _ => unreachable!("{name} is in the registry but has no constructor"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sv(srtt_ms: u64, cwnd: u32, in_flight: u32) -> SubflowView {
        SubflowView { established: true, backup: false, srtt: SimTime::from_ms(srtt_ms), rttvar: SimTime::ZERO, cwnd, ssthresh: 100, in_flight, ca_state: CaState::Open, mss: 1448, queued_bytes: 0, pacing_ok: true, wnd_ok: true }
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
        let meta = MetaView { new_data: false, next_dsn: 0, next_len: 0, window_limited: true, reinject: None, una: Some((0, 1448, 0b10)), sndbuf_full: false };
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 1], meta }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 1 }, Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }]);
        // Penalisation again within one SRTT of A: only the retransmission.
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(1) + SimTime::from_ms(5), subflows: &subs, order: &[0, 1], meta }, &mut out);
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }]);
        // B srtt 30: 4*10 >= 30 -> no retransmission; B cwnd 4 -> retransmit.
        let subs = [sv(10, 10, 0), sv(30, 10, 10)];
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(3), subflows: &subs, order: &[0, 1], meta }, &mut out);
        assert!(!out.iter().any(|a| matches!(a, Action::Send { .. })));
        let subs = [sv(10, 10, 0), sv(30, 4, 4)];
        out.clear();
        s.schedule(&SchedView { now: SimTime::from_secs(5), subflows: &subs, order: &[0, 1], meta }, &mut out);
        assert!(out.contains(&Action::Send { sub: 0, seg: Segment::Copy { dsn: 0, len: 1448 } }));
    }

    #[test]
    fn penalisation_halves_only_the_first_subflow_that_carries_the_head() {
        let mut s = MinRtt::new(MinRttOptions { opportunistic_retransmission: false, penalisation: true });
        let subs = [sv(10, 10, 0), sv(50, 10, 10), sv(80, 10, 10)];
        let meta = MetaView { new_data: false, next_dsn: 0, next_len: 0, window_limited: true, reinject: None, una: Some((0, 1448, 0b110)), sndbuf_full: false };
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 1, 2], meta }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 1 }]);
        // The kernel walks newest first: with order [0, 2, 1] subflow 2 is the first.
        let mut s = MinRtt::new(MinRttOptions { opportunistic_retransmission: false, penalisation: true });
        let mut out = vec![];
        s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[0, 2, 1], meta }, &mut out);
        assert_eq!(out, vec![Action::Penalise { sub: 2 }]);
    }

    #[test]
    fn equal_rtts_go_to_the_subflow_the_kernel_walks_first() {
        let (a, b) = (sv(20, 10, 0), sv(20, 10, 0));
        assert_eq!(MinRtt::pick(&[a, b], &[0, 1], 0), Ok(Some(0)));
        assert_eq!(MinRtt::pick(&[a, b], &[1, 0], 0), Ok(Some(1)));
    }
}
