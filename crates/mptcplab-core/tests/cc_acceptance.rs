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
