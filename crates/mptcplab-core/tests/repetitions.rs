//! Repetitions that differ (issue 12, item 4): a loss-free scenario replays one run for
//! every seed unless the scenario gives the seed something to vary. `run.start_jitter`
//! offsets each connection's start; `run.join_jitter` offsets each subflow's MP_JOIN.
mod common;
use common::*;
use mptcplab_core::units::SimTime;

/// Two loss-free paths (10 ms and 30 ms one way), one bulk MPTCP connection, `run` extra lines.
fn lossless(run: &str) -> mptcplab_core::Scenario {
    scenario_toml(&two_link_toml(
        &format!("duration = \"5 s\"\n    {run}"),
        ("10 Mbit/s", "10 ms", "100 pkt"),
        "",
        ("10 Mbit/s", "30 ms", "100 pkt"),
        "cc = \"reno\"\n    app = { kind = \"bulk\" }",
    ))
}

/// (bytes delivered, when subflow 1 was established) for one seed.
fn run(sc: &mptcplab_core::Scenario, seed: u64) -> (u64, SimTime) {
    let mut s = build(sc, Some(seed));
    s.run();
    let joined = s.conns[0].subflows[1].established_at.expect("the join completes");
    (s.summary()[0].bytes_delivered, joined)
}

#[test]
fn without_jitter_a_lossless_scenario_gives_the_same_run_for_every_seed() {
    // The defect the jitter fields fix: five seeds, one run.
    let sc = lossless("");
    let first = run(&sc, 1);
    for seed in 2..=5 {
        assert_eq!(run(&sc, seed), first, "seed {seed}");
    }
}

#[test]
fn join_jitter_of_zero_is_the_run_without_the_field() {
    assert_eq!(run(&lossless("join_jitter = \"0 s\""), 3), run(&lossless(""), 3));
}

#[test]
fn join_jitter_gives_the_same_run_for_the_same_seed_and_different_runs_for_different_seeds() {
    let sc = lossless("join_jitter = \"200 ms\"");
    let base = run(&lossless(""), 1).1;
    let mut joins = Vec::new();
    for seed in 1..=5 {
        let a = run(&sc, seed);
        assert_eq!(a, run(&sc, seed), "seed {seed} replays bit for bit");
        // The join waits an offset in [0, 200 ms) after the connection is established.
        assert!(a.1 >= base && a.1 < base + SimTime::from_ms(200), "seed {seed}: joined at {:?}, base {:?}", a.1, base);
        joins.push(a);
    }
    println!("join_jitter 200 ms: (bytes delivered, join established) per seed {joins:?}; without: {base:?}");
    let distinct_bytes = joins.iter().map(|j| j.0).collect::<std::collections::BTreeSet<_>>().len();
    let distinct_joins = joins.iter().map(|j| j.1).collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(distinct_joins, 5, "every seed draws its own join offset");
    assert!(distinct_bytes >= 4, "the seeds' runs differ in goodput: {joins:?}");
}

#[test]
fn start_and_join_jitter_draw_from_separate_streams() {
    // Adding join_jitter must not move the start offsets that start_jitter draws.
    let mut a = build(&lossless("start_jitter = \"300 ms\""), Some(7));
    let mut b = build(&lossless("start_jitter = \"300 ms\"\n    join_jitter = \"100 ms\""), Some(7));
    assert_eq!(a.conns[0].cfg.start, b.conns[0].cfg.start);
    assert!(a.conns[0].cfg.start > SimTime::ZERO);
    a.run();
    b.run();
    assert_eq!(a.conns[0].subflows[0].established_at, b.conns[0].subflows[0].established_at);
}

#[test]
fn a_join_jitter_as_long_as_the_run_is_an_error_naming_the_field() {
    let e = lossless("join_jitter = \"5 s\"").plan().err().expect("rejected");
    assert_eq!(e.field, "run.join_jitter");
    assert!(e.message.contains("shorter than run.duration"), "{}", e.message);
}
