//! RBPM, receive-buffer-based path management (seed `001_4f2025a8a121b930.txt`, Sec. II,
//! Eq. 2–5 and Algorithm 1; reference `path-managers.md` §5.6).
//!
//! RBPM decides per transmission which paths may carry data, so it lives on the
//! scheduler side of the `Scheduler` trait: a scheduler with an active set on top of
//! whatever subflows the path manager opened. Inactive subflows stay established and
//! carry no new data (reinjections may still use them when nothing active can).
//!
//! - Out-of-order estimate (Eq. 2): `k_{i,j} = floor(RTT_j/RTT_i) − 1` if
//!   `RTT_j/RTT_i ≥ 2`, else 0, for a faster subflow i and a slower j.
//! - Required buffer (Eq. 3, whose symbols the seed's text lost):
//!   `B_req = Σ_{i∈A} Σ_{j∈A, RTT_j>RTT_i} k_{i,j}·o_i(t)·MSS_i` (option
//!   `required = "pairwise"`, the reference's reconstruction), or
//!   `Σ_{i∈A} k_{i,s}·o_i(t)·MSS_i` with s the slowest active subflow (`"slowest"`).
//!   The seed names o_i(t) "the outstanding packets in subflow i" and adds that, since it
//!   estimates on every transmission, they "become equal to" cwnd; the reference (and the
//!   `literal` and `all_paths` readings below) therefore take `o_i = cwnd_i`. The
//!   `later` reading takes the subflow's packets out (sent, not acknowledged, Linux
//!   `packets_out`), what the symbol names: a path that has stopped sending and drained
//!   contributes 0, and a path that restarts contributes as its data goes out.
//! - Score (Eq. 5, max-min normalised, higher is better):
//!   `(BW_i − BW_min)/(BW_max − BW_min) − (RTT_i − RTT_min)/(RTT_max − RTT_min)`, a term
//!   being 0 when its max equals its min; RTT_i is the SRTT. How BW_i is measured
//!   (option `bandwidth`): the seed calls it "the available bandwidth of path i" (Sec. II,
//!   under Eq. 1) and never says how it is obtained.
//!   * `"delivery_rate"` (default): the subflow's delivery-rate estimate (Linux 4.9+
//!     `tcp_rate_gen`, `tcpi_delivery_rate`: packets delivered over the longer of the
//!     send and ACK intervals of the packet sampled), a measure of what the path
//!     delivers, which is what "available bandwidth" names. A subflow gains nothing by
//!     building a queue: its deliveries stay at the bottleneck's rate. The seed's
//!     v0.89 kernel (Linux 3.14) had no such estimator; its code is not published.
//!   * `"cwnd_srtt"`: `cwnd_i·MSS_i/SRTT_i`, the rate the window allows (the earlier
//!     default). It is the delivery rate only while the subflow is cwnd-limited and its
//!     SRTT has caught up with its queue: it rewards a subflow whose cwnd has grown into
//!     a deep queue faster than its smoothed RTT (slow start, 100-packet buffers as in
//!     the seed) and a stopped or window-limited subflow whose cwnd no longer paces
//!     anything.
//! - Available buffer: what the sender sees, the connection-level window the peer
//!   advertised minus the data in flight (`MetaView::window_free`).
//! - Algorithm 1: send on the best-score active subflow if it has room; otherwise
//!   while `B_req > available` make the worst-score active subflow inactive (never the
//!   last one) and recompute; if `available > 2·B_req` reactivate every stopped subflow;
//!   send on the best active subflow with room. When the stopped subflows restart is
//!   read three ways (option `reactivation`):
//!   * `"later"` (default), the reading of Eq. 3 and the account of Fig. 4 ("when the
//!     amount of data packets to path of Subflow 4 is increased, the buffer blocking
//!     occurs. Then, MPTCP with RBPM stops transferring over the path of Subflow 4 and
//!     only Subflow 2 transfers packets. The transmission of only one subflow makes the
//!     available receive buffer size large enough and MPTCP with RBPM starts to send
//!     data packets through the other three stopped paths"): B_req from o_i(t) = packets
//!     out. The stop loop counts the active paths (a path it stops sends nothing more).
//!     The restart test, `available > 2·B_req`, is made only in a decision that stopped
//!     nothing, with B_req over all paths: a stopped path adds what it still has out
//!     (0 once drained) and is a slower path j for the faster ones. That B_req is at
//!     least the stop loop's after the restart, so a restart holds until the paths'
//!     outstanding data grows or the window shrinks (a hysteresis of factor 2); and
//!     since a decision stops only when B_req of the active set exceeds the available
//!     buffer, its own restart test could not pass either.
//!   * `"literal"`, the pseudo-code as printed with `o_i = cwnd_i`: the test compares
//!     the available buffer with twice the B_req of the *current* (reduced) active set,
//!     and is reached even right after a deactivation (`goto recalculate` ends in the
//!     same `else` branch). The reduced set's B_req is small (0 with one path left), so
//!     every stop is undone in the decision that made it and the paths flap.
//!   * `"all_paths"`, the prose ("if the available buffer size is large enough"):
//!     restart only when the available buffer exceeds twice the B_req of *all* paths
//!     (`o_i = cwnd_i`), never in a decision that stopped one.
//! - Observability: every change of the active set is kept in `Rbpm::events` (with the
//!   number of the decision that made it) and also handed to the connection as a
//!   `StatusNote` ("inactive", reason "rbpm"), so the run's subflow event log shows
//!   active -> inactive -> active. The connection logs the net change of each decision:
//!   a stop the same decision undoes (the literal reading's flapping) is in
//!   `Rbpm::events` but not in the log.

use super::{Action, SchedView, Scheduler, Segment, StatusNote, SubflowView};
use crate::units::SimTime;

/// How Eq. 3 is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Required {
    /// Every faster/slower pair of active subflows (the reference's reconstruction).
    Pairwise,
    /// Each active subflow against the slowest active one.
    Slowest,
}

/// When stopped paths restart, and what o_i(t) of Eq. 3 is (see the module notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reactivation {
    /// o_i = packets out; restart only in a later decision than a stop, when the window
    /// left exceeds twice B_req of all paths (a drained stopped path adds 0 as a sender).
    Later,
    /// o_i = cwnd; Algorithm 1 as printed (the reduced set's B_req, same decision).
    Literal,
    /// o_i = cwnd; twice B_req of all paths, never in a decision that stopped one.
    AllPaths,
}

/// How BW_i of Eq. 5 is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bandwidth {
    /// The subflow's delivery-rate estimate (Linux `tcp_rate_gen`).
    DeliveryRate,
    /// `cwnd·MSS/SRTT`.
    CwndSrtt,
}

/// What o_i(t) of Eq. 3 counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Packets sent and not acknowledged (Linux `packets_out`).
    Outstanding,
    /// The congestion window.
    Cwnd,
}

impl Reactivation {
    pub fn window(self) -> Window { if self == Reactivation::Later { Window::Outstanding } else { Window::Cwnd } }
}

/// Eq. 2: whole windows subflow i (RTT `ri`) sends while one packet of j (RTT `rj`)
/// is in flight.
pub fn k(ri: SimTime, rj: SimTime) -> u64 {
    if ri == SimTime::ZERO || rj < ri.mul(2) {
        return 0;
    }
    rj.ns() / ri.ns() - 1
}

/// What RBPM reads of one subflow.
#[derive(Clone, Copy, Debug)]
pub struct PathState {
    pub rtt: SimTime,
    pub cwnd: u32,
    /// Packets sent and not acknowledged.
    pub outstanding: u32,
    pub mss: u32,
    /// BW_i of Eq. 5 in bytes per second, as the `bandwidth` option measures it.
    pub bw: f64,
}

impl PathState {
    /// A path whose BW_i is `cwnd·mss/rtt` (0 without an RTT).
    pub fn with_cwnd_rate(rtt: SimTime, cwnd: u32, outstanding: u32, mss: u32) -> Self {
        let bw = if rtt == SimTime::ZERO { 0.0 } else { cwnd as f64 * mss as f64 / rtt.secs_f64() };
        PathState { rtt, cwnd, outstanding, mss, bw }
    }

    fn o(&self, w: Window) -> u64 {
        match w {
            Window::Outstanding => self.outstanding as u64,
            Window::Cwnd => self.cwnd as u64,
        }
    }
}

/// Eq. 3 over the subflows marked in `set`, with o_i read as `window` says.
pub fn required(paths: &[PathState], set: &[bool], form: Required, window: Window) -> u64 {
    let act: Vec<usize> = (0..paths.len()).filter(|&i| set[i]).collect();
    let slowest = act.iter().copied().max_by_key(|&i| paths[i].rtt);
    let mut b = 0u64;
    for &i in &act {
        let per_window = paths[i].o(window) * paths[i].mss as u64;
        match form {
            Required::Pairwise => {
                for &j in &act {
                    if paths[j].rtt > paths[i].rtt {
                        b += k(paths[i].rtt, paths[j].rtt) * per_window;
                    }
                }
            }
            Required::Slowest => {
                if let Some(s) = slowest {
                    if paths[s].rtt > paths[i].rtt {
                        b += k(paths[i].rtt, paths[s].rtt) * per_window;
                    }
                }
            }
        }
    }
    b
}

/// Eq. 5 for every subflow (normalised over all of them).
pub fn scores(paths: &[PathState]) -> Vec<f64> {
    let bw: Vec<f64> = paths.iter().map(|p| p.bw).collect();
    let rtt: Vec<f64> = paths.iter().map(|p| p.rtt.secs_f64()).collect();
    let (bmin, bmax) = bw.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let (rmin, rmax) = rtt.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let norm = |x: f64, lo: f64, hi: f64| if hi > lo { (x - lo) / (hi - lo) } else { 0.0 };
    (0..paths.len()).map(|i| norm(bw[i], bmin, bmax) - norm(rtt[i], rmin, rmax)).collect()
}

/// One pass of Algorithm 1's "recalculate" loop: deactivate the worst active subflow
/// while the required buffer exceeds the available one (keeping at least one), then
/// reactivate every stopped subflow if the available buffer is over twice the required
/// one, as `reactivation` reads it. Returns the subflows whose state changed, with their
/// new state (true = active), in order.
pub fn update_active(paths: &[PathState], active: &mut [bool], available: u64, form: Required, reactivation: Reactivation) -> Vec<(usize, bool)> {
    let sc = scores(paths);
    let window = reactivation.window();
    let mut changes = vec![];
    loop {
        let breq = required(paths, active, form, window);
        let act: Vec<usize> = (0..paths.len()).filter(|&i| active[i]).collect();
        if breq <= available || act.len() <= 1 {
            break;
        }
        // Worst score; ties go to the slower subflow.
        let worst = act.iter().copied().min_by(|&a, &b| sc[a].total_cmp(&sc[b]).then(paths[b].rtt.cmp(&paths[a].rtt))).unwrap_or(act[0]);
        active[worst] = false;
        changes.push((worst, false));
    }
    if active.iter().all(|&a| a) {
        return changes;
    }
    let breq = match reactivation {
        Reactivation::Literal => required(paths, active, form, window),
        _ if !changes.is_empty() => return changes,
        // Over all paths: with o_i = packets out a stopped path counts what it still has
        // out as a sender (0 once drained) and its RTT as a slower path. This B_req is at
        // least the restarted set's, so a restart is not undone by the next decision's
        // stop test until the paths' data or the window change.
        Reactivation::AllPaths | Reactivation::Later => required(paths, &vec![true; paths.len()], form, window),
    };
    if available > 2 * breq {
        for (i, a) in active.iter_mut().enumerate() {
            if !*a {
                *a = true;
                changes.push((i, true));
            }
        }
    }
    changes
}

/// One change of the active set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveChange {
    pub at: SimTime,
    pub subflow: usize,
    /// The subflow's state from now on (true = active).
    pub active: bool,
    /// The recalculation that made it (1 for the first; several changes share one).
    pub decision: u64,
}

pub struct Rbpm {
    pub form: Required,
    pub reactivation: Reactivation,
    pub bandwidth: Bandwidth,
    active: Vec<bool>,
    /// Recalculations of the active set so far (Algorithm 1's `else` branch).
    pub decisions: u64,
    /// Every change of the active set, oldest first.
    pub events: Vec<ActiveChange>,
    /// The same changes, not yet drained by the connection.
    notes: Vec<StatusNote>,
}

impl Rbpm {
    pub fn new(form: Required, reactivation: Reactivation, bandwidth: Bandwidth) -> Self {
        Rbpm { form, reactivation, bandwidth, active: vec![], decisions: 0, events: vec![], notes: vec![] }
    }

    pub fn is_active(&self, i: usize) -> bool { self.active.get(i).copied().unwrap_or(true) }

    fn paths(&self, subs: &[SubflowView]) -> Vec<PathState> {
        subs.iter()
            .map(|s| {
                let p = PathState::with_cwnd_rate(s.srtt, s.cwnd, s.packets_out, s.mss);
                match self.bandwidth {
                    Bandwidth::CwndSrtt => p,
                    Bandwidth::DeliveryRate => PathState { bw: s.delivery_rate_bps / 8.0, ..p },
                }
            })
            .collect()
    }

    /// The best-score subflow among `cands` that can send now.
    fn best_with_room(v: &SchedView, sc: &[f64], cands: &[usize]) -> Option<usize> {
        cands.iter().copied().filter(|&i| v.subflows[i].available()).max_by(|&a, &b| sc[a].total_cmp(&sc[b]))
    }
}

impl Scheduler for Rbpm {
    fn name(&self) -> &'static str { "rbpm" }

    fn needs_rates(&self) -> bool { self.bandwidth == Bandwidth::DeliveryRate }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        let n = v.subflows.len();
        if self.active.len() < n {
            self.active.resize(n, true);
        }
        // Only established subflows with an RTT estimate take part (a fresh subflow is
        // active until measured).
        let ready: Vec<usize> = v.order.iter().copied().filter(|&i| v.subflows[i].established && v.subflows[i].srtt > SimTime::ZERO).collect();
        let paths = self.paths(v.subflows);
        let sc = scores(&paths);
        let seg = if v.meta.reinject.is_some() {
            Segment::Reinject
        } else if v.meta.new_data {
            Segment::New
        } else {
            return;
        };
        let active: Vec<usize> = ready.iter().copied().filter(|&i| self.active[i]).collect();
        let best = active.iter().copied().max_by(|&a, &b| sc[a].total_cmp(&sc[b]));
        if let Some(b) = best.filter(|&b| v.subflows[b].available()) {
            out.push(Action::Send { sub: b, seg });
            return;
        }
        // Recalculate the active set over the measured subflows.
        self.decisions += 1;
        let sub_paths: Vec<PathState> = ready.iter().map(|&i| paths[i]).collect();
        let mut sub_active: Vec<bool> = ready.iter().map(|&i| self.active[i]).collect();
        for (j, now_active) in update_active(&sub_paths, &mut sub_active, v.meta.window_free, self.form, self.reactivation) {
            let i = ready[j];
            self.active[i] = now_active;
            self.events.push(ActiveChange { at: v.now, subflow: i, active: now_active, decision: self.decisions });
            self.notes.push(StatusNote { at: v.now, subflow: i, status: if now_active { None } else { Some("inactive") }, reason: "rbpm" });
        }
        let active: Vec<usize> = ready.iter().copied().filter(|&i| self.active[i]).collect();
        let pick = Self::best_with_room(v, &sc, &active)
            // A subflow not yet measured may carry data (it is never inactive).
            .or_else(|| v.order.iter().copied().find(|&i| v.subflows[i].available() && v.subflows[i].srtt == SimTime::ZERO))
            // A reinjection may use any subflow when no active one can.
            .or_else(|| if seg == Segment::Reinject { Self::best_with_room(v, &sc, &ready) } else { None });
        if let Some(i) = pick {
            out.push(Action::Send { sub: i, seg });
        }
    }

    fn drain_status_notes(&mut self, out: &mut Vec<StatusNote>) { out.append(&mut self.notes); }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rtt_ms: u64, cwnd: u32) -> PathState { PathState::with_cwnd_rate(SimTime::from_ms(rtt_ms), cwnd, cwnd, 1000) }

    #[test]
    fn out_of_order_factor_matches_the_reference_vector() {
        // path-managers.md §5.6: RTT (10, 35, 15) ms → k12 = 2, k13 = 0, k32 = 1.
        let r = |ms| SimTime::from_ms(ms);
        assert_eq!(k(r(10), r(35)), 2);
        assert_eq!(k(r(10), r(15)), 0);
        assert_eq!(k(r(15), r(35)), 1);
        assert_eq!(k(r(35), r(10)), 0);
    }

    #[test]
    fn required_buffer_pairwise_and_slowest_forms() {
        let paths = [p(10, 10), p(35, 20), p(15, 30)];
        let all = [true, true, true];
        // Pairwise: k12·10 + k13·10 + k32·30 = (2 + 0)·10·1000 + 1·30·1000.
        assert_eq!(required(&paths, &all, Required::Pairwise, Window::Cwnd), 50_000);
        // Slowest (path 2): k12·10 + k32·30 = 20_000 + 30_000.
        assert_eq!(required(&paths, &all, Required::Slowest, Window::Cwnd), 50_000);
        let paths = [p(10, 10), p(25, 20), p(60, 30)];
        // Pairwise: k(10,25)=1·10 + k(10,60)=5·10 + k(25,60)=1·20 → 10+50+20 = 80 windows·1000.
        assert_eq!(required(&paths, &all, Required::Pairwise, Window::Cwnd), 80_000);
        // Slowest (60 ms): k(10,60)·10 + k(25,60)·20 = 50 + 20.
        assert_eq!(required(&paths, &all, Required::Slowest, Window::Cwnd), 70_000);
    }

    #[test]
    fn algorithm_1_deactivates_the_worst_path_while_required_exceeds_available_and_reactivates_at_twice() {
        // Acceptance 1 of issue 4, driven by hand. Paths: fast, medium, very slow.
        let paths = [p(10, 20), p(30, 20), p(200, 5)];
        let sc = scores(&paths);
        assert!(sc[0] > sc[1] && sc[1] > sc[2], "{sc:?}");
        let mut active = [true, true, true];
        let full = required(&paths, &active, Required::Pairwise, Window::Cwnd);
        assert_eq!(full, (2 + 19) * 20 * 1000 + 5 * 20 * 1000); // k(10,30)=2, k(10,200)=19, k(30,200)=5
        // Available below the requirement: the worst path (2) goes; then the pair (0,1)
        // needs k(10,30)·20 windows = 40 KB, still above 30 KB: path 1 goes too.
        let ch = update_active(&paths, &mut active, 30_000, Required::Pairwise, Reactivation::AllPaths);
        assert_eq!(ch, vec![(2, false), (1, false)]);
        assert_eq!(active, [true, false, false]);
        // The last active path is never stopped.
        let ch = update_active(&paths, &mut active, 0, Required::Pairwise, Reactivation::AllPaths);
        assert!(ch.is_empty());
        // Available above the active set's requirement but not twice what all paths
        // need: nothing changes.
        let ch = update_active(&paths, &mut active, 2 * full, Required::Pairwise, Reactivation::AllPaths);
        assert!(ch.is_empty(), "{ch:?}");
        // Available over twice what all paths need: every stopped path returns.
        let ch = update_active(&paths, &mut active, 2 * full + 1, Required::Pairwise, Reactivation::AllPaths);
        assert_eq!(ch, vec![(1, true), (2, true)]);
        assert_eq!(active, [true, true, true]);
        // The literal pseudo-code compares with the reduced set and undoes its own stop
        // in the same pass.
        let mut lit = [true, true, true];
        let ch = update_active(&paths, &mut lit, 30_000, Required::Pairwise, Reactivation::Literal);
        assert_eq!(ch, vec![(2, false), (1, false), (1, true), (2, true)]);
    }

    fn q(rtt_ms: u64, cwnd: u32, outstanding: u32, bw: f64) -> PathState { PathState { rtt: SimTime::from_ms(rtt_ms), cwnd, outstanding, mss: 1000, bw } }

    #[test]
    fn the_later_reading_stops_while_over_and_restarts_only_in_a_later_decision_over_twice_b_req() {
        // Seed 001 topology 2 in small: RTTs 200, 100, 60, 20 ms; BW 1, 8, 3, 2 (in
        // Mbit/s as bytes/s scale; only the order matters). Scores: path 1 worst, then 3,
        // 4 and 2 (Fig. 4: subflows 1 and 3 held back, then 4, then only 2).
        let mut paths = [q(200, 50, 10, 1.0), q(100, 50, 40, 8.0), q(60, 50, 10, 3.0), q(20, 50, 20, 2.0)];
        let sc = scores(&paths);
        assert!(sc[1] > sc[3] && sc[3] > sc[2] && sc[2] > sc[0], "{sc:?}");
        let mut active = [true; 4];
        // Eq. 3 over o_i (not cwnd): k(100,200)=1·40 + k(60,200)=2·10 + k(20,200)=9·20
        // + k(20,100)=4·20 + k(20,60)=2·20 + k(60,100)=0 → (40 + 20 + 180 + 80 + 40)·1000.
        let all = required(&paths, &active, Required::Pairwise, Window::Outstanding);
        assert_eq!(all, 360_000);
        // 120 000 available: stop 1 (B_req falls to k(20,100)·20 + k(20,60)·20 = 120 000,
        // not over), stop nothing more; no restart in this decision.
        let ch = update_active(&paths, &mut active, 120_000, Required::Pairwise, Reactivation::Later);
        assert_eq!(ch, vec![(0, false)]);
        assert_eq!(active, [false, true, true, true]);
        // One byte less available: subflows 1 and 3 go (B_req of {2, 4} = 80 000).
        let mut a2 = [true; 4];
        let ch = update_active(&paths, &mut a2, 119_999, Required::Pairwise, Reactivation::Later);
        assert_eq!(ch, vec![(0, false), (2, false)]);
        // A later decision: B_req over all paths with what they have out is 360 000;
        // 720 000 available is not over twice that, 720 001 is: path 1 restarts.
        let ch = update_active(&paths, &mut active, 720_000, Required::Pairwise, Reactivation::Later);
        assert!(ch.is_empty(), "{ch:?}");
        let ch = update_active(&paths, &mut active, 720_001, Required::Pairwise, Reactivation::Later);
        assert_eq!(ch, vec![(0, true)]);
        assert_eq!(active, [true; 4]);
        // Subflows 1 and 3 stopped, and 3 (60 ms) drained: it adds 0 as a sender
        // (k(60,200)·10 = 20 000 less) but stays a slower path for 4. B_req = 340 000.
        paths[2].outstanding = 0;
        let ch = update_active(&paths, &mut a2, 680_000, Required::Pairwise, Reactivation::Later);
        assert!(ch.is_empty(), "{ch:?}");
        let ch = update_active(&paths, &mut a2, 680_001, Required::Pairwise, Reactivation::Later);
        assert_eq!(ch, vec![(0, true), (2, true)]);
        // Right after the restart the stop test does not fire: B_req of the active set is
        // at most the 340 000 the restart compared with half the window left.
        let ch = update_active(&paths, &mut a2, 680_001, Required::Pairwise, Reactivation::Later);
        assert!(ch.is_empty(), "{ch:?}");
        // A decision that stops restarts nothing: with only path 2 left, 50 000 available.
        let mut a3 = [false, true, false, true];
        let ch = update_active(&paths, &mut a3, 50_000, Required::Pairwise, Reactivation::Later);
        assert_eq!(ch, vec![(3, false)], "k(20,100)·20 = 80 000 > 50 000: stop 4, and no restart");
        assert_eq!(a3, [false, true, false, false]);
        // The literal reading undoes its stop in the same decision on the same input.
        let mut lit = [false, true, false, true];
        let ch = update_active(&paths, &mut lit, 50_000, Required::Pairwise, Reactivation::Literal);
        assert_eq!(ch.first(), Some(&(3, false)));
        assert!(ch.contains(&(3, true)), "{ch:?}");
    }

    #[test]
    fn the_bandwidth_option_decides_which_path_scores_worst() {
        // Same RTTs; a window-limited subflow with a large cwnd looks fast by cwnd/SRTT
        // but delivers little.
        let r = SimTime::from_ms(50);
        let by_cwnd = [PathState::with_cwnd_rate(r, 100, 10, 1000), PathState::with_cwnd_rate(r, 20, 20, 1000)];
        let sc = scores(&by_cwnd);
        assert!(sc[0] > sc[1]);
        let by_rate = [PathState { bw: 200_000.0, ..by_cwnd[0] }, PathState { bw: 400_000.0, ..by_cwnd[1] }];
        let sc = scores(&by_rate);
        assert!(sc[1] > sc[0]);
    }

    #[test]
    fn scores_are_zero_terms_when_all_paths_are_alike() {
        let sc = scores(&[p(20, 10), p(20, 10)]);
        assert_eq!(sc, vec![0.0, 0.0]);
    }
}
