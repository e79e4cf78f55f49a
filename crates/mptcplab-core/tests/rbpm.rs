//! RBPM (seed 001) in the seed's two topologies: issue 12 item 5's checks of the reading
//! of Eq. 3 and Fig. 4 (`reactivation = "later"`, the default), and the pinned findings
//! of the literal and the prose readings. Run with `--nocapture` for the figures.
mod common;
use common::*;
use mptcplab_core::mptcp::scheduler::rbpm::ActiveChange;
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::scenario::{BaseKernelName, Duration};
use mptcplab_core::units::SimTime;
use mptcplab_core::Scenario;

const TOPO1: &str = "scenarios/rbpm-4path-a.toml";
const TOPO2: &str = "scenarios/rbpm-4path-b.toml";

struct Run {
    events: Vec<ActiveChange>,
    decisions: u64,
    goodput: f64,
    /// Payload capacity of the active paths, averaged over the run (Mbit/s).
    active_capacity: f64,
}

impl Run {
    fn stops(&self) -> usize { self.events.iter().filter(|e| !e.active).count() }
    fn restarts(&self) -> usize { self.events.len() - self.stops() }
    /// Stops undone in the decision that made them.
    fn undone_in_place(&self) -> usize {
        self.events.iter().filter(|e| !e.active && self.events.iter().any(|r| r.active && r.subflow == e.subflow && r.decision == e.decision)).count()
    }
}

fn rbpm(file: &str, opts: &[(&str, &str)]) -> Scenario {
    let mut sc = scenario_file(file);
    sc.connections[0].scheduler = Some("rbpm".into());
    sc.connections[0].scheduler_options = Some(opts.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect());
    sc
}

fn run(sc: &Scenario, seed: Option<u64>) -> Run {
    let mut s = build(sc, seed);
    s.run();
    s.check_invariants().unwrap();
    let AnyScheduler::Rbpm(r) = &s.conns[0].sched else { unreachable!() };
    let end = s.end;
    let n = s.conns[0].subflows.len();
    // Capacity of each subflow's path: its slowest forward link, payload share.
    let caps: Vec<f64> = (0..n)
        .map(|i| {
            let p = &s.plan.paths[s.conn_paths[0][i]];
            let rate = p.fwd_hops.iter().map(|&h| s.links[h as usize].rate().0).fold(f64::INFINITY, f64::min);
            rate * 1448.0 / 1500.0 / 1e6
        })
        .collect();
    let mut active_time = vec![0.0f64; n];
    let mut since = vec![SimTime::ZERO; n];
    let mut active = vec![true; n];
    for e in &r.events {
        let i = e.subflow;
        if active[i] && !e.active {
            active_time[i] += (e.at - since[i]).secs_f64();
        } else if !active[i] && e.active {
            since[i] = e.at;
        }
        active[i] = e.active;
    }
    for i in 0..n {
        if active[i] {
            active_time[i] += (end - since[i]).secs_f64();
        }
    }
    let active_capacity = (0..n).map(|i| caps[i] * active_time[i] / end.secs_f64()).sum();
    Run { events: r.events.clone(), decisions: r.decisions, goodput: goodput(&s, 0), active_capacity }
}

fn describe(label: &str, r: &Run) {
    println!(
        "{label}: {} decisions, {} stops, {} restarts, {} stops undone in their own decision; goodput {:.3} Mbit/s = {:.0} % of the {:.2} Mbit/s the kept-active paths carry",
        r.decisions,
        r.stops(),
        r.restarts(),
        r.undone_in_place(),
        r.goodput,
        100.0 * r.goodput / r.active_capacity,
        r.active_capacity
    );
}

/// Issue 12 item 5, must pass: in topology 2 the Eq. 3 reading stops a path and later
/// restarts it, never in the decision that stopped it.
#[test]
fn rbpm_in_topology_2_stops_a_path_and_restarts_it_in_a_later_decision() {
    let r = run(&rbpm(TOPO2, &[]), None);
    describe("topology 2, reactivation=later (default)", &r);
    for e in r.events.iter().take(12) {
        println!("  {:8.3} s decision {:5} subflow {} {}", e.at.secs_f64(), e.decision, e.subflow, if e.active { "restarted" } else { "stopped" });
    }
    assert!(r.stops() >= 1 && r.restarts() >= 1, "{} stops, {} restarts", r.stops(), r.restarts());
    // No decision both stops and restarts.
    for e in r.events.iter().filter(|e| e.active) {
        assert!(!r.events.iter().any(|s| !s.active && s.decision == e.decision), "decision {} both stops and restarts", e.decision);
    }
    // Some restart undoes a stop of an earlier decision.
    assert!(r.events.iter().any(|e| e.active && r.events.iter().any(|s| !s.active && s.subflow == e.subflow && s.decision < e.decision)));
}

/// A pinned figure: stops, restarts and goodput (Mbit/s) of one reading in topology 2,
/// seed 1, 100 s, for each way of measuring BW_i.
/// `base_kernel`: the TCP under the subflows (`tcp.base_kernel`); the scenario file
/// declares seed 001's 3.14, and issue 4's figures were measured under the 4.x rules.
struct Pinned {
    base_kernel: BaseKernelName,
    bandwidth: &'static str,
    stops: usize,
    restarts: usize,
    goodput: f64,
}

fn check_pinned(reading: &str, pins: &[Pinned], extra: impl Fn(&Run, BaseKernelName)) {
    for p in pins {
        let mut sc = rbpm(TOPO2, &[("reactivation", reading), ("bandwidth", p.bandwidth)]);
        sc.tcp.base_kernel = Some(p.base_kernel);
        let r = run(&sc, None);
        describe(&format!("topology 2, reactivation={reading}, bandwidth={}, base {:?}", p.bandwidth, p.base_kernel), &r);
        extra(&r, p.base_kernel);
        assert_eq!((r.stops(), r.restarts()), (p.stops, p.restarts), "bandwidth={} base {:?}", p.bandwidth, p.base_kernel);
        assert!((r.goodput - p.goodput).abs() < 0.005, "bandwidth={} base {:?}: goodput {:.3}", p.bandwidth, p.base_kernel, r.goodput);
    }
}

/// Pinned finding: the literal Algorithm 1 restarts every stopped path in the decision
/// that stopped it (its restart test compares with the reduced set's B_req, 0 with one
/// path left), so the paths flap and nothing stays stopped; it delivers about 2.9
/// Mbit/s, 21 % of the 13.5 Mbit/s its (always active) paths could carry. With
/// `bandwidth = "cwnd_srtt"` these are issue 4's figures (295 stops, 295 restarts), all
/// under the 4.x rules; under the scenario's own 3.14 rules 2 150 of 2 161 stops are
/// undone in place (2.99 Mbit/s).
#[test]
fn the_literal_algorithm_1_undoes_every_stop_in_the_decision_that_made_it_in_topology_2() {
    let pins = [
        Pinned { base_kernel: BaseKernelName::Linux4, bandwidth: "delivery_rate", stops: 226, restarts: 226, goodput: 2.867 },
        Pinned { base_kernel: BaseKernelName::Linux4, bandwidth: "cwnd_srtt", stops: 295, restarts: 295, goodput: 2.862 },
        Pinned { base_kernel: BaseKernelName::Linux3_14, bandwidth: "delivery_rate", stops: 2161, restarts: 2161, goodput: 2.986 },
    ];
    // Under the 3.14 rules the flapping stays, though a few stops outlive their decision.
    check_pinned("literal", &pins, |r, base| {
        if base == BaseKernelName::Linux4 {
            assert_eq!(r.undone_in_place(), r.stops(), "every stop undone in place");
        } else {
            assert!(r.undone_in_place() * 100 >= r.stops() * 99, "{} of {} undone in place", r.undone_in_place(), r.stops());
        }
    });
}

/// Pinned finding (with the literal one above, what remains of issue 4's ignored
/// acceptance 2, which asked both readings for a stop, a restart and 70 % of the
/// kept-active paths' capacity): the prose reading stops paths in topology 2 and never
/// restarts them, since the window left never exceeds twice the B_req of all four paths
/// by their cwnds. By delivery rate it keeps only path4 (2 Mbit/s): path2 (8 Mbit/s),
/// starved while path3 held the best score, measured 0.2 Mbit/s when it was stopped. By
/// cwnd/SRTT it keeps path2 and path3 but delivers 27 % of their 10.7 Mbit/s: path3,
/// whose cwnd grows into its 100-packet queue, keeps the best score and takes the data,
/// and path2 sends only when path3's cwnd is full. Under seed 001's own 3.14 rules (the
/// scenario file's base kernel, rule 1 of docs/out-of-tree-profile.md) it stops two
/// paths and keeps 7.52 Mbit/s, 71 % of what the kept paths carry.
#[test]
fn the_all_paths_reading_stops_paths_in_topology_2_and_never_restarts_them() {
    let pins = [
        Pinned { base_kernel: BaseKernelName::Linux4, bandwidth: "delivery_rate", stops: 3, restarts: 0, goodput: 1.937 },
        Pinned { base_kernel: BaseKernelName::Linux4, bandwidth: "cwnd_srtt", stops: 2, restarts: 0, goodput: 2.859 },
        Pinned { base_kernel: BaseKernelName::Linux3_14, bandwidth: "delivery_rate", stops: 2, restarts: 0, goodput: 7.519 },
    ];
    check_pinned("all_paths", &pins, |r, _| assert_eq!(r.undone_in_place(), 0));
}

/// Reported, not must-pass: RBPM (each reading) against plain MPTCP (fullmesh +
/// minRTT) at the same 200 KB buffer, both topologies, 100 s, seeds 1-5. The scenarios
/// have no random loss, so the seed moves the connection's start in [0, 100 ms)
/// (`run.start_jitter`, as `reproduce rbpm` does). Asserts only that the seeds differ,
/// so that the CIs are over five runs, not one printed five times; they differ by the
/// start phase only, and the CIs (± 0.000 Mbit/s when this was written) say the result
/// does not depend on it: in effect n = 1.
#[test]
fn rbpm_goodput_against_fullmesh_in_both_topologies_over_five_seeds() {
    for file in [TOPO1, TOPO2] {
        let mut fm = scenario_file(file);
        fm.run.start_jitter = Some(Duration::parse("100 ms").unwrap());
        let base: Vec<f64> = (1..=5).map(|seed| goodput(&{ let mut s = build(&fm, Some(seed)); s.run(); s }, 0)).collect();
        let (bm, bci) = mean_ci(&base);
        println!("{file}: fullmesh+minRTT goodput {bm:.3} ± {bci:.3} Mbit/s (95 % CI, seeds 1-5)");
        assert!(base.iter().any(|&g| g != base[0]), "{file}: the seeds give one run: {base:?}");
        for reading in ["later", "literal", "all_paths"] {
            for bw in ["delivery_rate", "cwnd_srtt"] {
                let mut sc = rbpm(file, &[("reactivation", reading), ("bandwidth", bw)]);
                sc.run.start_jitter = fm.run.start_jitter.clone();
                let runs: Vec<Run> = (1..=5).map(|seed| run(&sc, Some(seed))).collect();
                let g: Vec<f64> = runs.iter().map(|r| r.goodput).collect();
                let (m, ci) = mean_ci(&g);
                let stops: Vec<f64> = runs.iter().map(|r| r.stops() as f64).collect();
                let restarts: Vec<f64> = runs.iter().map(|r| r.restarts() as f64).collect();
                println!(
                    "{file}: rbpm reactivation={reading} bandwidth={bw}: goodput {m:.3} ± {ci:.3} Mbit/s = {:.2} x fullmesh; stops {:.0} ± {:.0}, restarts {:.0} ± {:.0} per run",
                    m / bm,
                    mean_ci(&stops).0,
                    mean_ci(&stops).1,
                    mean_ci(&restarts).0,
                    mean_ci(&restarts).1
                );
            }
        }
    }
}
