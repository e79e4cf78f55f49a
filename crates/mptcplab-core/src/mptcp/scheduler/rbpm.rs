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
//! - Required buffer (Eq. 3, whose symbols the seed's text lost): by default the
//!   reference's reconstruction `B_req = Σ_{i∈A} Σ_{j∈A, RTT_j>RTT_i} k_{i,j}·cwnd_i·MSS_i`;
//!   option `required = "slowest"` reads it as `Σ_{i∈A} k_{i,s}·cwnd_i·MSS_i` with s the
//!   slowest active subflow.
//! - Score (Eq. 5, max-min normalised, higher is better):
//!   `(BW_i − BW_min)/(BW_max − BW_min) − (RTT_i − RTT_min)/(RTT_max − RTT_min)`, a term
//!   being 0 when its max equals its min. BW_i is `cwnd_i·MSS_i/SRTT_i` (the rate the
//!   window allows), RTT_i the SRTT.
//! - Available buffer: what the sender sees, the connection-level window the peer
//!   advertised minus the data in flight (`MetaView::window_free`).
//! - Algorithm 1: send on the best-score active subflow if it has room; otherwise
//!   while `B_req > available` make the worst-score active subflow inactive (never the
//!   last one) and recompute; if `available > 2·B_req` reactivate every stopped subflow;
//!   send on the best active subflow with room.
//! - Read literally, Algorithm 1 compares the available buffer with twice the B_req of
//!   the *current* (reduced) active set, and reaches that test even right after it
//!   deactivated (`goto recalculate` ends in the same `else` branch). The reduced set's
//!   B_req is small (0 with one path left), so every stop is undone at the next decision
//!   and the paths flap on every packet. The prose says to restart the stopped paths
//!   "if the available buffer size is large enough", which can be read as large enough
//!   for them. The seed's pseudo-code is the default (`reactivation = "literal"`);
//!   `reactivation = "all_paths"` restarts the stopped paths only when the available
//!   buffer exceeds twice the B_req of *all* paths, and never in a decision that stopped
//!   one (a hysteresis the pseudo-code lacks).
//! - Observability: every change of the active set is kept in `Rbpm::events` and also
//!   handed to the connection as a `StatusNote` ("inactive", reason "rbpm"), so the run's
//!   subflow event log shows active -> inactive -> active. The connection logs the net
//!   change of each decision: a stop the same decision undoes (the literal reading's
//!   flapping) is in `Rbpm::events` but not in the log.

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
    pub mss: u32,
}

impl PathState {
    fn bw(&self) -> f64 { if self.rtt == SimTime::ZERO { 0.0 } else { self.cwnd as f64 * self.mss as f64 / self.rtt.secs_f64() } }
}

/// Eq. 3 over the active subflows.
pub fn required(paths: &[PathState], active: &[bool], form: Required) -> u64 {
    let act: Vec<usize> = (0..paths.len()).filter(|&i| active[i]).collect();
    let slowest = act.iter().copied().max_by_key(|&i| paths[i].rtt);
    let mut b = 0u64;
    for &i in &act {
        let per_window = paths[i].cwnd as u64 * paths[i].mss as u64;
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
    let bw: Vec<f64> = paths.iter().map(|p| p.bw()).collect();
    let rtt: Vec<f64> = paths.iter().map(|p| p.rtt.secs_f64()).collect();
    let (bmin, bmax) = bw.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let (rmin, rmax) = rtt.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let norm = |x: f64, lo: f64, hi: f64| if hi > lo { (x - lo) / (hi - lo) } else { 0.0 };
    (0..paths.len()).map(|i| norm(bw[i], bmin, bmax) - norm(rtt[i], rmin, rmax)).collect()
}

/// One pass of Algorithm 1's "recalculate" loop: deactivate the worst active subflow
/// while the required buffer exceeds the available one (keeping at least one), then
/// reactivate everything if the available buffer is over twice the required. Returns the
/// subflows whose state changed, with their new state (true = active).
pub fn update_active(paths: &[PathState], active: &mut [bool], available: u64, form: Required, literal: bool) -> Vec<(usize, bool)> {
    let sc = scores(paths);
    let mut changes = vec![];
    loop {
        let breq = required(paths, active, form);
        let act: Vec<usize> = (0..paths.len()).filter(|&i| active[i]).collect();
        if breq <= available || act.len() <= 1 {
            break;
        }
        // Worst score; ties go to the slower subflow.
        let worst = act.iter().copied().min_by(|&a, &b| sc[a].total_cmp(&sc[b]).then(paths[b].rtt.cmp(&paths[a].rtt))).unwrap_or(act[0]);
        active[worst] = false;
        changes.push((worst, false));
    }
    let breq = if literal { required(paths, active, form) } else { required(paths, &vec![true; paths.len()], form) };
    if (literal || changes.is_empty()) && available > 2 * breq {
        for (i, a) in active.iter_mut().enumerate() {
            if !*a {
                *a = true;
                changes.push((i, true));
            }
        }
    }
    changes
}

pub struct Rbpm {
    pub form: Required,
    pub literal: bool,
    active: Vec<bool>,
    /// (time, subflow, now active) for every change of the active set.
    pub events: Vec<(SimTime, usize, bool)>,
    /// The same changes, not yet drained by the connection.
    notes: Vec<StatusNote>,
}

impl Rbpm {
    pub fn new(form: Required, literal: bool) -> Self { Rbpm { form, literal, active: vec![], events: vec![], notes: vec![] } }

    pub fn is_active(&self, i: usize) -> bool { self.active.get(i).copied().unwrap_or(true) }

    fn paths(subs: &[SubflowView]) -> Vec<PathState> { subs.iter().map(|s| PathState { rtt: s.srtt, cwnd: s.cwnd, mss: s.mss }).collect() }

    /// The best-score subflow among `cands` that can send now.
    fn best_with_room(v: &SchedView, sc: &[f64], cands: &[usize]) -> Option<usize> {
        cands.iter().copied().filter(|&i| v.subflows[i].available()).max_by(|&a, &b| sc[a].total_cmp(&sc[b]))
    }
}

impl Scheduler for Rbpm {
    fn name(&self) -> &'static str { "rbpm" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        let n = v.subflows.len();
        if self.active.len() < n {
            self.active.resize(n, true);
        }
        // Only established subflows with an RTT estimate take part (a fresh subflow is
        // active until measured).
        let ready: Vec<usize> = v.order.iter().copied().filter(|&i| v.subflows[i].established && v.subflows[i].srtt > SimTime::ZERO).collect();
        let paths = Self::paths(v.subflows);
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
        let sub_paths: Vec<PathState> = ready.iter().map(|&i| paths[i]).collect();
        let mut sub_active: Vec<bool> = ready.iter().map(|&i| self.active[i]).collect();
        for (j, now_active) in update_active(&sub_paths, &mut sub_active, v.meta.window_free, self.form, self.literal) {
            let i = ready[j];
            self.active[i] = now_active;
            self.events.push((v.now, i, now_active));
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

    fn p(rtt_ms: u64, cwnd: u32) -> PathState { PathState { rtt: SimTime::from_ms(rtt_ms), cwnd, mss: 1000 } }

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
        assert_eq!(required(&paths, &all, Required::Pairwise), 50_000);
        // Slowest (path 2): k12·10 + k32·30 = 20_000 + 30_000.
        assert_eq!(required(&paths, &all, Required::Slowest), 50_000);
        let paths = [p(10, 10), p(25, 20), p(60, 30)];
        // Pairwise: k(10,25)=1·10 + k(10,60)=5·10 + k(25,60)=1·20 → 10+50+20 = 80 windows·1000.
        assert_eq!(required(&paths, &all, Required::Pairwise), 80_000);
        // Slowest (60 ms): k(10,60)·10 + k(25,60)·20 = 50 + 20.
        assert_eq!(required(&paths, &all, Required::Slowest), 70_000);
    }

    #[test]
    fn algorithm_1_deactivates_the_worst_path_while_required_exceeds_available_and_reactivates_at_twice() {
        // Acceptance 1 of issue 4, driven by hand. Paths: fast, medium, very slow.
        let paths = [p(10, 20), p(30, 20), p(200, 5)];
        let sc = scores(&paths);
        assert!(sc[0] > sc[1] && sc[1] > sc[2], "{sc:?}");
        let mut active = [true, true, true];
        let full = required(&paths, &active, Required::Pairwise);
        assert_eq!(full, (2 + 19) * 20 * 1000 + 5 * 20 * 1000); // k(10,30)=2, k(10,200)=19, k(30,200)=5
        // Available below the requirement: the worst path (2) goes; then the pair (0,1)
        // needs k(10,30)·20 windows = 40 KB, still above 30 KB: path 1 goes too.
        let ch = update_active(&paths, &mut active, 30_000, Required::Pairwise, false);
        assert_eq!(ch, vec![(2, false), (1, false)]);
        assert_eq!(active, [true, false, false]);
        // The last active path is never stopped.
        let ch = update_active(&paths, &mut active, 0, Required::Pairwise, false);
        assert!(ch.is_empty());
        // Available above the active set's requirement but not twice what all paths
        // need: nothing changes.
        let ch = update_active(&paths, &mut active, 2 * full, Required::Pairwise, false);
        assert!(ch.is_empty(), "{ch:?}");
        // Available over twice what all paths need: every stopped path returns.
        let ch = update_active(&paths, &mut active, 2 * full + 1, Required::Pairwise, false);
        assert_eq!(ch, vec![(1, true), (2, true)]);
        assert_eq!(active, [true, true, true]);
        // The literal pseudo-code compares with the reduced set and undoes its own stop
        // in the same pass.
        let mut lit = [true, true, true];
        let ch = update_active(&paths, &mut lit, 30_000, Required::Pairwise, true);
        assert_eq!(ch, vec![(2, false), (1, false), (1, true), (2, true)]);
    }

    #[test]
    fn scores_are_zero_terms_when_all_paths_are_alike() {
        let sc = scores(&[p(20, 10), p(20, 10)]);
        assert_eq!(sc, vec![0.0, 0.0]);
    }
}
