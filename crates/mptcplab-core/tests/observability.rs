//! Issue 4, observability: the scheduler's per-subflow counters in the subflow summary,
//! a scheduler's own subflow status (RBPM's "inactive") in the status event log, and the
//! per-decision "sched" rows of the event trace.
mod common;
use common::*;
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::units::SimTime;
use mptcplab_core::{Scenario, Simulator};

fn with_scheduler(file: &str, sched: &str, opts: &[(&str, &str)]) -> Scenario {
    let mut sc = scenario_file(file);
    sc.connections[0].scheduler = Some(sched.into());
    if !opts.is_empty() {
        sc.connections[0].scheduler_options = Some(
            opts.iter()
                .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                .collect(),
        );
    }
    sc
}

fn sim_for(sc: &Scenario, secs: u64, trace: &[String]) -> Simulator {
    Simulator::new(
        sc.plan().unwrap(),
        Some(1),
        Some(SimTime::from_secs(secs)),
        trace,
    )
    .unwrap()
}

#[test]
fn subflow_summary_carries_the_scheduler_counters() {
    // Redundant: every subflow gets new data and copies.
    let mut s = sim_for(
        &with_scheduler(
            "scenarios/schedulers/redundant-two-equal-paths.toml",
            "redundant",
            &[],
        ),
        5,
        &[],
    );
    s.run();
    let ss = s.subflow_summary();
    for r in &ss {
        let c = s.conns[r.conn as usize].subflows[r.subflow as usize].sched;
        assert_eq!(
            (
                r.sched_new_segs,
                r.sched_reinjected_segs,
                r.sched_copied_segs,
                r.sched_penalised
            ),
            (c.new_segs, c.reinjected_segs, c.copied_segs, c.penalised)
        );
    }
    assert!(
        ss.iter().map(|r| r.sched_copied_segs).sum::<u64>() > 100,
        "redundant copies: {:?}",
        ss.iter().map(|r| r.sched_copied_segs).collect::<Vec<_>>()
    );
    assert!(ss
        .iter()
        .all(|r| r.sched_new_segs + r.sched_copied_segs > 0));
    // minRTT with penalisation on a buffer-limited heterogeneous pair: penalisations
    // appear and add up to the connection's count.
    let mut s = sim_for(
        &scenario_file("scenarios/schedulers/heterogeneous-256k.toml"),
        20,
        &[],
    );
    s.run();
    let ss = s.subflow_summary();
    let pen: u64 = ss.iter().map(|r| r.sched_penalised).sum();
    assert_eq!(pen, s.conns[0].stats.penalisations);
    println!(
        "heterogeneous-256k minRTT: penalisations per subflow {:?}, copies {:?}",
        ss.iter().map(|r| r.sched_penalised).collect::<Vec<_>>(),
        ss.iter().map(|r| r.sched_copied_segs).collect::<Vec<_>>()
    );
}

/// The event log as (time, subflow, from, to, reason) rows of connection 0.
fn log(s: &Simulator) -> Vec<(f64, u32, &'static str, &'static str, &'static str)> {
    let e = &s.metrics.events;
    (0..e.len())
        .filter(|&k| e.conn[k] == 0)
        .map(|k| (e.time_s[k], e.subflow[k], e.from[k], e.to[k], e.reason[k]))
        .collect()
}

#[test]
fn rbpm_active_set_changes_are_inactive_statuses_in_the_event_log() {
    for reactivation in ["later", "all_paths", "literal"] {
        let mut s = sim_for(
            &with_scheduler(
                "scenarios/rbpm-4path-b.toml",
                "rbpm",
                &[("reactivation", reactivation)],
            ),
            30,
            &[],
        );
        s.run();
        let rows = log(&s);
        // Each subflow's rows chain: every row starts from the previous row's status.
        for sub in 0..s.conns[0].subflows.len() as u32 {
            let mut last = "idle";
            for r in rows.iter().filter(|r| r.1 == sub) {
                assert_eq!(r.2, last, "{reactivation}: subflow {sub}: {r:?}");
                last = r.3;
            }
        }
        let rbpm: Vec<_> = rows.iter().filter(|r| r.4 == "rbpm").collect();
        assert!(
            rbpm.iter().all(|r| (r.2 == "active" && r.3 == "inactive")
                || (r.2 == "inactive" && r.3 == "active")),
            "{rbpm:?}"
        );
        let stops = rbpm.iter().filter(|r| r.3 == "inactive").count();
        let AnyScheduler::Rbpm(sched) = &s.conns[0].sched else {
            unreachable!()
        };
        let raw_stops = sched.events.iter().filter(|e| !e.active).count();
        println!("rbpm-4path-b, reactivation={reactivation}, 30 s: {stops} stops and {} restarts in the log; the scheduler's own record: {raw_stops} stops, {} restarts", rbpm.len() - stops, sched.events.len() - raw_stops);
        assert!(stops <= raw_stops);
        if reactivation != "literal" {
            // A decision never both stops and restarts a subflow: the log is the record.
            assert!(stops >= 1);
            assert_eq!(rbpm.len(), sched.events.len());
        }
        // The subflows whose last log row is "inactive" are the ones RBPM holds stopped.
        for i in 0..s.conns[0].subflows.len() {
            let inactive_now = s.conns[0].subflows[i].status.as_str() == "inactive";
            let rbpm_stopped =
                !sched.is_active(i) && s.conns[0].subflows[i].status.as_str() != "failed";
            assert_eq!(inactive_now, rbpm_stopped, "{reactivation}: subflow {i}");
        }
    }
}

#[test]
fn other_schedulers_log_no_scheduler_statuses() {
    let mut s = sim_for(&scenario_file("scenarios/rbpm-4path-b.toml"), 10, &[]);
    s.run();
    assert!(log(&s).iter().all(|r| r.4 != "rbpm" && r.3 != "inactive"));
}

#[test]
fn the_trace_has_one_sched_row_per_executed_action_before_the_send_it_caused() {
    let sc = with_scheduler(
        "scenarios/schedulers/redundant-two-equal-paths.toml",
        "redundant",
        &[],
    );
    let name = sc.connections[0].name.clone();
    let mut s = sim_for(&sc, 3, &[name]);
    s.run();
    let t = &s.metrics.trace;
    let sched: Vec<usize> = (0..t.len()).filter(|&k| t.event[k] == "sched").collect();
    assert!(!sched.is_empty());
    assert!(sched
        .iter()
        .all(|&k| ["new", "reinject", "copy", "enqueue", "penalise"].contains(&t.sched_kind[k])));
    assert!((0..t.len())
        .filter(|&k| t.event[k] != "sched")
        .all(|k| t.sched_kind[k].is_empty()));
    // As many rows of each kind as the counters say.
    let count = |kind: &str| sched.iter().filter(|&&k| t.sched_kind[k] == kind).count() as u64;
    let subs = &s.conns[0].subflows;
    assert_eq!(
        count("new"),
        subs.iter().map(|x| x.sched.new_segs).sum::<u64>()
    );
    assert_eq!(
        count("copy"),
        subs.iter().map(|x| x.sched.copied_segs).sum::<u64>()
    );
    assert_eq!(
        count("reinject"),
        subs.iter().map(|x| x.sched.reinjected_segs).sum::<u64>()
    );
    assert!(count("copy") > 0);
    // Every first transmission ("send") is preceded by the sched row that chose it: same
    // time, subflow, dsn and length, and every sched send row is followed by its send.
    let mut pending: Vec<(u64, u32, u64, u32)> = vec![];
    for k in 0..t.len() {
        match t.event[k] {
            "sched" => pending.push((t.time_ns[k], t.subflow[k], t.dsn[k], t.len[k])),
            "send" => {
                let key = (t.time_ns[k], t.subflow[k], t.dsn[k], t.len[k]);
                let pos = pending
                    .iter()
                    .position(|p| *p == key)
                    .unwrap_or_else(|| panic!("send row {k} {key:?} has no sched row"));
                pending.remove(pos);
            }
            _ => {}
        }
    }
    assert!(
        pending.is_empty(),
        "sched rows without a send: {:?}",
        &pending[..pending.len().min(5)]
    );
    // Untraced flows have no sched rows.
    let mut s = sim_for(&sc, 1, &[]);
    s.run();
    assert!(s.metrics.trace.is_empty());
}
