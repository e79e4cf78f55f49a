//! Issue 3 acceptance checks that run whole scenarios (the committed files under
//! `scenarios/cc/`), over 5 seeds, measured after a warm-up.
mod common;
use common::*;
use mptcplab_core::units::SimTime;
use mptcplab_core::Scenario;

/// Goodput (Mbit/s) of every connection and flow over [from, to] seconds.
fn window_goodput(sc: &Scenario, seed: u64, from: u64, to: u64) -> Vec<f64> {
    let mut s = build(sc, Some(seed));
    s.run_until(SimTime::from_secs(from));
    let start: Vec<u64> = s.conns.iter().map(|c| c.rcv.read_total).collect();
    s.run_until(SimTime::from_secs(to));
    s.conns.iter().zip(start).map(|(c, b)| (c.rcv.read_total - b) as f64 * 8.0 / (to - from) as f64 / 1e6).collect()
}

fn mean_ci(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    // Student t, 4 degrees of freedom (5 seeds), 95 %.
    (m, 2.776 * sd / n.sqrt())
}

/// Connection goodput over the mean of the single-path flows, per seed.
fn fairness_ratio(cc: &str, seed: u64) -> (f64, Vec<f64>) {
    let mut sc = scenario_file("scenarios/cc/coupled-bbr-fairness.toml");
    sc.connections[0].cc = Some(cc.into());
    let g = window_goodput(&sc, seed, 10, 70);
    let flows = (g[1] + g[2]) / 2.0;
    (g[0] / flows, g)
}

fn fairness(cc: &str) -> f64 {
    let rs: Vec<f64> = (1..=5)
        .map(|seed| {
            let (r, g) = fairness_ratio(cc, seed);
            println!("acceptance 3: {cc} seed {seed}: connection {:.2} Mbit/s, flows {:.2} and {:.2} Mbit/s, ratio {r:.3}", g[0], g[1], g[2]);
            r
        })
        .collect();
    let (m, ci) = mean_ci(&rs);
    println!("acceptance 3: {cc}: mean ratio {m:.3} ± {ci:.3} (95 % CI, 5 seeds)");
    m
}

#[test]
fn coupled_bbr_takes_a_single_flows_share_at_a_shared_bottleneck() {
    let m = fairness("coupled_bbr");
    assert!((0.8..=1.2).contains(&m), "coupled BBR ratio {m:.3} outside [0.8, 1.2]");
}

/// The contrast that lets the check fail: uncoupled BBR takes about two flows' shares
/// (one seed of five can stay near one share when the MP_JOIN subflow leaves STARTUP
/// late into a full queue).
#[test]
fn uncoupled_bbr_takes_more_than_a_single_flows_share() {
    let m = fairness("bbr");
    assert!(!(0.8..=1.2).contains(&m), "uncoupled BBR ratio {m:.3} inside [0.8, 1.2]: the check cannot tell them apart");
}

/// Subflow goodput (bytes acknowledged at subflow level, Mbit/s) over [from, to] of
/// connection 0, with every connection's and flow's goodput.
fn window_with_subflows(sc: &Scenario, seed: u64, from: u64, to: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = build(sc, Some(seed));
    s.run_until(SimTime::from_secs(from));
    let start: Vec<u64> = s.conns.iter().map(|c| c.rcv.read_total).collect();
    let sub0: Vec<u64> = s.conns[0].subflows.iter().map(|f| f.tx.stats.bytes_acked).collect();
    s.run_until(SimTime::from_secs(to));
    let secs = (to - from) as f64;
    let g = s.conns.iter().zip(start).map(|(c, b)| (c.rcv.read_total - b) as f64 * 8.0 / secs / 1e6).collect();
    let sf = s.conns[0].subflows.iter().zip(sub0).map(|(f, b)| (f.tx.stats.bytes_acked - b) as f64 * 8.0 / secs / 1e6).collect();
    (g, sf)
}

/// `cc` may carry options after a colon: "lia:best_path=exact".
fn with_cc(file: &str, cc: &str) -> Scenario {
    let mut sc = scenario_file(file);
    let (name, opts) = cc.split_once(':').unwrap_or((cc, ""));
    sc.connections[0].cc = Some(name.into());
    if !opts.is_empty() {
        let o = opts.split(',').map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), serde_json::json!(v))
        });
        sc.connections[0].cc_options = Some(o.collect());
    }
    sc
}

/// LIA with RFC 6356's best path ("exact"): the Linux module's integer quotient
/// `(cwnd << 32) / srtt_us²` is 0 for every subflow once the RTT exceeds about
/// 8.2 ms·√cwnd (40 ms at cwnd < 24 here), so Linux takes the last subflow as the best
/// one and computes a smaller alpha. That default is checked separately below.
const COUPLED: [&str; 3] = ["lia:best_path=exact", "olia", "balia"];

#[test]
fn rfc6356_goal1_mptcp_does_at_least_as_well_as_a_single_flow_on_the_best_path() {
    let bad: Vec<String> = goal1(&COUPLED).into_iter().filter(|&(_, r)| r < 0.9).map(|(cc, r)| format!("{cc}: {r:.3} < 0.9 of the single flow")).collect();
    assert!(bad.is_empty(), "{bad:?}");
}

/// A finding, pinned: Linux LIA (the default, `best_path = "linux"`) is less aggressive
/// than RFC-exact LIA at this RTT. The module's quotient `(cwnd << 32) / srtt_us²` is 0
/// for every subflow (40 ms, cwnd < 24), so it takes the last subflow as the best one and
/// computes a smaller alpha: 0.948 of the single flow against exact LIA's 1.007 (5 seeds).
/// Before the simulator restarted the retransmission timer on a head retransmission
/// (`tcp_xmit_retransmit_queue`, 2026-11-27) the same runs gave 0.82 against 1.11, a miss
/// of goal 1; with it Linux LIA passes the 0.9 bar, so it stays out of COUPLED only
/// because the margin is thin. If this fails, the emulation of the kernel's arithmetic has
/// changed.
#[test]
fn linux_lia_is_less_aggressive_than_rfc_lia_at_40_ms_because_its_best_path_quotient_underflows() {
    let r = goal1(&["lia", "lia:best_path=exact"]);
    assert!(r[0].1 < r[1].1, "Linux LIA no longer trails RFC-exact LIA: {r:?}; revisit docs/congestion-control.md");
}

/// MPTCP goodput over a single Reno flow's in its place, per congestion control.
fn goal1<'a>(ccs: &[&'a str]) -> Vec<(&'a str, f64)> {
    // The reference: one Reno flow in the connection's place, same cross traffic.
    let mut single = scenario_file("scenarios/cc/rfc6356-goal1.toml");
    let mut f = single.flows[0].clone();
    f.name = "single".into();
    single.connections.clear();
    single.flows.insert(0, f);
    let (bm, bci) = over_seeds(|seed| window_goodput(&single, seed, 10, 70)[0]);
    println!("acceptance 2, goal 1: single Reno flow on path a: {bm:.2} ± {bci:.2} Mbit/s");
    ccs.iter()
        .map(|&cc| {
            let sc = with_cc("scenarios/cc/rfc6356-goal1.toml", cc);
            let (m, ci) = over_seeds(|seed| window_goodput(&sc, seed, 10, 70)[0]);
            println!("acceptance 2, goal 1: {cc}: MPTCP {m:.2} ± {ci:.2} Mbit/s = {:.3} of the single flow", m / bm);
            (cc, m / bm)
        })
        .collect()
}

/// Mean and 95 % CI of `f(seed)` over seeds 1..=5.
fn over_seeds(f: impl Fn(u64) -> f64) -> (f64, f64) { mean_ci(&(1..=5).map(f).collect::<Vec<_>>()) }

fn goal2_share(cc: &str) -> f64 {
    let sc = with_cc("scenarios/cc/rfc6356-goal2.toml", cc);
    let (m, ci) = over_seeds(|seed| {
        let g = window_goodput(&sc, seed, 10, 70);
        g[0] / (g[0] + g[1])
    });
    println!("acceptance 2, goal 2: {cc}: MPTCP share {:.1} % ± {:.1}", 100.0 * m, 100.0 * ci);
    m
}

#[test]
fn rfc6356_goal2_mptcp_takes_one_flows_share_at_a_shared_bottleneck() {
    goal2(&COUPLED);
    goal2(&["lia"]);
    let m = goal2_share("reno");
    assert!(!(0.35..=0.55).contains(&m), "uncoupled reno share {m:.3} inside [0.35, 0.55]: the check cannot fail");
}

fn goal2(ccs: &[&str]) {
    let mut bad = vec![];
    for &cc in ccs {
        let m = goal2_share(cc);
        if !(0.35..=0.55).contains(&m) {
            bad.push(format!("{cc}: share {m:.3} outside [0.35, 0.55]"));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}

fn goal3_share(cc: &str) -> f64 {
    let sc = with_cc("scenarios/cc/rfc6356-goal3.toml", cc);
    let (m, ci) = over_seeds(|seed| {
        let (g, sf) = window_with_subflows(&sc, seed, 10, 70);
        sf[0] / (sf[0] + g[1] + g[2])
    });
    println!("acceptance 2, goal 3: {cc}: MPTCP share of path a {:.1} % ± {:.1}", 100.0 * m, 100.0 * ci);
    m
}

#[test]
fn rfc6356_goal3_coupled_mptcp_moves_traffic_off_the_congested_path() {
    let uncoupled = goal3_share("reno");
    for cc in COUPLED.iter().copied().chain(["lia"]) {
        let m = goal3_share(cc);
        assert!(uncoupled - m >= 0.10, "{cc}: share on path a {m:.3} is not 10 points below uncoupled {uncoupled:.3}");
    }
}

