//! Issue 2 acceptance checks (must pass). Run with `--nocapture` to see the figures.

mod common;
use common::*;
use mptcplab_core::units::SimTime;

/// Payload share of a full-sized packet: MSS / (MSS + headers).
fn payload_share(mss: f64, header: f64) -> f64 { mss / (mss + header) }

fn one_flow(cc: &str) -> f64 {
    // 100 Mbit/s, 20 ms one-way, queue = 1 BDP (100 Mbit/s x 40 ms = 500 KB), unbounded rwnd.
    let sc = scenario_toml(&format!(
        r#"
        [run]
        duration = "30 s"
        [[links]]
        name = "l"
        rate = "100 Mbit/s"
        delay = "20 ms"
        queue = "500 KB"
        [[paths]]
        name = "p"
        links = ["l"]
        [[flows]]
        name = "f"
        path = "p"
        cc = "{cc}"
        receive_buffer = "1 GB"
        send_buffer = "1 GB"
        "#
    ));
    let mut s = build(&sc, None);
    s.run();
    goodput(&s, 0)
}

#[test]
fn one_flow_reaches_line_rate_with_cubic_and_reno() {
    let payload_rate = 100.0 * payload_share(1448.0, 52.0);
    for cc in ["cubic", "reno"] {
        let g = one_flow(cc);
        println!("acceptance 1: {cc}: goodput {g:.2} Mbit/s = {:.1} % of the {payload_rate:.2} Mbit/s payload rate", 100.0 * g / payload_rate);
        assert!(g >= 0.9 * payload_rate, "{cc}: {g}");
    }
}

fn mathis_run(p: f64, seed: u64) -> (f64, f64) {
    let sc = scenario_toml(&format!(
        r#"
        [run]
        duration = "310 s"
        [[links]]
        name = "l"
        rate = "1 Gbit/s"
        delay = "50 ms"
        queue = "10000 pkt"
        loss = {p}
        [[paths]]
        name = "p"
        links = ["l"]
        [[flows]]
        name = "f"
        path = "p"
        cc = "reno"
        receive_buffer = "1 GB"
        send_buffer = "1 GB"
        "#
    ));
    let mut s = build(&sc, Some(seed));
    s.run_until(SimTime::from_secs(10));
    let d0 = s.conns[0].rcv.read_total;
    let (o0, l0) = (s.links[0].stats.offered, s.links[0].stats.dropped_loss);
    s.run();
    let d1 = s.conns[0].rcv.read_total;
    let (o1, l1) = (s.links[0].stats.offered, s.links[0].stats.dropped_loss);
    let thr = (d1 - d0) as f64 * 8.0 / 300.0;
    let loss = (l1 - l0) as f64 / (o1 - o0) as f64;
    (thr, loss)
}

#[test]
fn reno_throughput_follows_the_mathis_formula() {
    // Mathis et al. 1997: rate = MSS/RTT * sqrt(3/(2p)), base RTT 100 ms, measured p.
    for p in [0.001, 0.01] {
        let runs: Vec<(f64, f64)> = (1..=5).map(|seed| mathis_run(p, seed)).collect();
        let thr = runs.iter().map(|r| r.0).sum::<f64>() / 5.0;
        let loss = runs.iter().map(|r| r.1).sum::<f64>() / 5.0;
        let model = 1448.0 * 8.0 / 0.1 * (3.0 / (2.0 * loss)).sqrt();
        let ratio = thr / model;
        println!("acceptance 2: p = {p}: measured loss {:.4} %, throughput {:.3} Mbit/s, Mathis {:.3} Mbit/s, ratio {ratio:.3}", loss * 100.0, thr / 1e6, model / 1e6);
        assert!((0.75..=1.25).contains(&ratio), "p = {p}: ratio {ratio}");
    }
}

#[test]
fn mptcp_aggregates_two_disjoint_paths() {
    let sc = scenario_toml(
        r#"
        [run]
        duration = "30 s"
        [[links]]
        name = "a"
        rate = "50 Mbit/s"
        delay = "20 ms"
        queue = "250 KB"
        [[links]]
        name = "b"
        rate = "50 Mbit/s"
        delay = "20 ms"
        queue = "250 KB"
        [[paths]]
        name = "pa"
        links = ["a"]
        [[paths]]
        name = "pb"
        links = ["b"]
        [[connections]]
        name = "mp"
        paths = ["pa", "pb"]
        cc = "cubic"
        receive_buffer = "64 MB"
        send_buffer = "64 MB"
        "#,
    );
    let mut s = build(&sc, None);
    s.run();
    let g = goodput(&s, 0);
    // Payload rate with the MPTCP DSS option on every data packet.
    let payload_rate = 100.0 * payload_share(1448.0, 72.0);
    println!("acceptance 3: aggregate goodput {g:.2} Mbit/s = {:.1} % of the {payload_rate:.2} Mbit/s payload rate", 100.0 * g / payload_rate);
    for r in s.subflow_summary() {
        println!("  subflow {}: {:.2} Mbit/s", r.subflow, r.throughput_mbps);
    }
    assert!(g >= 0.9 * payload_rate);
}

/// Under the default profile (out_of_tree), the receive buffer is charged as Linux 4.x
/// charges it (truesize, half the free space advertised), the kernel the seed ran. With
/// `receive_buffer_accounting = "payload"` the three fast subflows stay window-limited
/// with cwnd to spare, minRTT almost never schedules the slow subflow, and blocking is
/// mild (8.72 vs 14.71 Mbit/s on path1, ratio 0.59): the payload test below shows it.
/// This is acceptance 4 as issue 2 ran it, with the out-of-tree rules of a 4.x base
/// kernel (`tcp.base_kernel = "4.x"`, named here so that the scenario file's own base
/// kernel does not change what this test checks).
#[test]
fn a_small_receive_buffer_blocks_the_seed_001_topology() {
    let mut sc = scenario_file("scenarios/rbpm-4path-a.toml");
    sc.tcp.base_kernel = Some(mptcplab_core::scenario::BaseKernelName::Linux4);
    check_blocking(sc, "default profile, base kernel 4.x, linux accounting");
}

/// Pinned finding (issue 12): under the rules of seed 001's own kernel (MPTCP v0.89 on
/// Linux 3.14, docs/out-of-tree-profile.md) acceptance 4 holds with the initial subflow on
/// the slow path (1.88 against 14.58 Mbit/s) but not on a fast path (7.69 against 14.70
/// Mbit/s, ratio 0.52 > 0.5): there the slow path stays unused and the three fast paths
/// share the window.
#[test]
fn under_the_3_14_rules_the_small_buffer_blocks_topology_1_only_when_the_slow_path_starts() {
    let mut sc = scenario_file("scenarios/rbpm-4path-a.toml");
    sc.tcp.base_kernel = Some(mptcplab_core::scenario::BaseKernelName::Linux3_14);
    let fast = small_and_large_buffer_goodput(&sc, "path1");
    let slow = small_and_large_buffer_goodput(&sc, "path4");
    println!("base kernel 3.14: path1 first {fast:?}, path4 first {slow:?} Mbit/s (200 KB, 8 MB)");
    assert!(slow[0] <= 0.2 * slow[1], "slow path first blocks: {slow:?}");
    assert!(fast[0] > 0.5 * fast[1], "fast path first misses acceptance 4: {fast:?}");
    assert!(fast[1] >= 0.8 * 16.0 && slow[1] >= 0.8 * 16.0, "{fast:?} {slow:?}");
}

/// The same scenario with payload accounting: the blocking is mild. This is why the
/// default follows Linux; if payload accounting starts to block as much, the choice of
/// default no longer decides acceptance 4 and should be revisited.
#[test]
fn payload_accounting_blocks_the_seed_001_topology_only_mildly() {
    let mut base = scenario_file("scenarios/rbpm-4path-a.toml");
    base.tcp.receive_buffer_accounting = Some(mptcplab_core::scenario::AccountingName::Payload);
    let g = small_and_large_buffer_goodput(&base, "path1");
    println!("payload accounting, initial subflow on path1: 200 KB {:.3}, 8 MB {:.3} Mbit/s, ratio {:.2}", g[0], g[1], g[0] / g[1]);
    assert!(g[0] > 0.5 * g[1], "{g:?}");
}

/// Acceptance 4 under `run.profile = "upstream"` (Linux 6.x, the kernel the kernel backend
/// runs and measured: 4.04 against 14.63 Mbit/s for this scenario with the fast path
/// first, the mean of three runs of 1.04, 8.30 and 2.77, docs/kernel.md), with the
/// backend's PM limits (subflows 8): the in-kernel PM opens the same four subflows as
/// fullmesh does towards a single-address server. The scenario file is unchanged.
///
/// With the fast path first the blocking is the receive deadlock of 6.18
/// (docs/research/upstream-receive-deadlock-measured.md): a window of out-of-order skbs
/// ends over sk_rcvbuf and nothing is pulled again. Whether and when a run deadlocks
/// varies from run to run on the kernel (gap `deadlock_timing`), so that case is judged
/// as the kernel's was, on the mean over runs: twenty seeds with the kernel emulator's
/// measured delay error as per-link jitter (as `mptcplab validate` adds it: 0-120 us a
/// path direction, 60 us on each of a path's two links), against five at 8 MB. (Until
/// 2026-11-27 this test asserted on the one trajectory of the jitter-free scenario.)
#[test]
fn a_small_receive_buffer_blocks_the_seed_001_topology_under_the_upstream_profile() {
    let sc = upstream_rbpm_4path_a();
    // Slow path first: one mode on both backends (kernel 1.80 +- 0.03 Mbit/s at 200 KB).
    let g = small_and_large_buffer_goodput(&sc, "path4");
    println!("acceptance 4 (upstream profile): initial subflow on path4: 200 KB {:.3}, 8 MB {:.3} Mbit/s", g[0], g[1]);
    assert!(g[0] <= 0.5 * g[1] && g[1] >= 0.8 * 16.0, "path4: {g:?}");
    // Fast path first, over jittered seeds.
    let mut jittered = sc;
    for l in &mut jittered.links {
        l.jitter = Some(mptcplab_core::scenario::Duration::parse("60 us").unwrap());
    }
    jittered.connections[0].initial_path = Some("path1".into());
    let run = |buf: &str, seed: u64| {
        let mut x = jittered.clone();
        x.connections[0].receive_buffer = Some(mptcplab_core::scenario::Size::parse(buf).unwrap());
        let mut s = build(&x, Some(seed));
        s.run();
        let c = &s.conns[0];
        (goodput(&s, 0), c.stats.rcv_rmem_max > c.rcv.rcvbuf && c.stats.rcv_stalled_at.is_some() && c.stats.rcvq_drops > 0)
    };
    let small: Vec<(f64, bool)> = (1..=20).map(|seed| run("200 KB", seed)).collect();
    let large: Vec<f64> = (1..=5).map(|seed| run("8 MB", seed).0).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let g_small = mean(&small.iter().map(|r| r.0).collect::<Vec<_>>());
    let deadlocked = small.iter().filter(|r| r.1).count();
    println!(
        "acceptance 4 (upstream profile): initial subflow on path1: 200 KB {g_small:.3} Mbit/s over 20 seeds ({deadlocked} deadlocked: MPTCP memory over sk_rcvbuf, the reader stalled, then subflow drops), 8 MB {:.3}",
        mean(&large)
    );
    assert!(g_small <= 0.5 * mean(&large), "path1: {small:?} against {large:?}");
    assert!(mean(&large) >= 0.8 * 16.0, "path1: {large:?}");
    assert!(deadlocked > 0, "the blocking is the receive deadlock: {small:?}");
}

fn upstream_rbpm_4path_a() -> mptcplab_core::Scenario {
    let mut sc = scenario_file("scenarios/rbpm-4path-a.toml");
    sc.run.profile = Some(mptcplab_core::profile::ProfileName::Upstream);
    let c = &mut sc.connections[0];
    c.scheduler = None;
    c.path_manager = Some("in_kernel".into());
    c.path_manager_options = Some(
        [("subflows_limit".to_string(), serde_json::json!(8)), ("add_addr_accepted".to_string(), serde_json::json!(8))]
            .into_iter()
            .collect(),
    );
    sc
}

/// Acceptance 4: for each initial path, goodput with 200 KB <= 0.5 x goodput with 8 MB,
/// and goodput with 8 MB >= 80 % of the 16 Mbit/s capacity.
fn check_blocking(base: mptcplab_core::Scenario, label: &str) {
    for initial in ["path1", "path4"] {
        let g = small_and_large_buffer_goodput(&base, initial);
        for (buf, x) in ["200 KB", "8 MB"].iter().zip(g) {
            println!("acceptance 4 ({label}): initial subflow on {initial}, receive buffer {buf}: goodput {x:.3} Mbit/s");
        }
        assert!(g[0] <= 0.5 * g[1], "{initial}: {g:?}");
        assert!(g[1] >= 0.8 * 16.0, "{initial}: {g:?}");
    }
}

/// Goodput (Mbit/s) with a 200 KB and with an 8 MB receive buffer, initial subflow on `initial`.
fn small_and_large_buffer_goodput(base: &mptcplab_core::Scenario, initial: &str) -> [f64; 2] {
    ["200 KB", "8 MB"].map(|buf| {
        let mut sc = base.clone();
        sc.connections[0].initial_path = Some(initial.into());
        sc.connections[0].receive_buffer = Some(mptcplab_core::scenario::Size::parse(buf).unwrap());
        let mut s = build(&sc, None);
        s.run();
        goodput(&s, 0)
    })
}

