//! Issue 4 acceptance checks for the schedulers (must pass), on the committed scenarios
//! under `scenarios/schedulers/` (their headers state the assumptions), with BLEST's
//! checks as issue 12 item 5 restated them and its 0 % slow-path share at 256 KB a pinned
//! finding. Run with `--nocapture` to see the figures: means over seeds 1..5 with 95 %
//! CIs.
mod common;
use common::*;
use mptcplab_core::units::SimTime;
use mptcplab_core::Scenario;
use std::sync::OnceLock;

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

fn with_scheduler(file: &str, sched: &str, opts: &[(&str, serde_json::Value)]) -> Scenario {
    let mut sc = scenario_file(file);
    sc.connections[0].scheduler = Some(sched.into());
    if !opts.is_empty() {
        sc.connections[0].scheduler_options = Some(opts.iter().map(|(k, v)| (k.to_string(), v.clone())).collect());
    }
    sc
}

// ---------------------------------------------------------------------------------
// Must-pass 3: redundant on two equal paths.

const REDUNDANT: &str = "scenarios/schedulers/redundant-two-equal-paths.toml";

/// (payload bytes sent / bytes delivered over [5 s, 30 s], share of subflow 1 in the
/// scheduler's sends, copies on each subflow).
fn redundant_run(sc: &Scenario, seed: u64) -> (f64, f64, [u64; 2]) {
    let mut s = build(sc, Some(seed));
    s.run_until(SimTime::from_secs(5));
    let c = &s.conns[0];
    let (read0, sent0): (u64, u64) = (c.rcv.read_total, c.subflows.iter().map(|f| f.tx.stats.bytes_sent).sum());
    let sched0: Vec<u64> = c.subflows.iter().map(|f| f.sched.new_segs + f.sched.copied_segs).collect();
    s.run();
    s.check_invariants().unwrap();
    let c = &s.conns[0];
    let sent: u64 = c.subflows.iter().map(|f| f.tx.stats.bytes_sent).sum::<u64>() - sent0;
    let read = c.rcv.read_total - read0;
    let per: Vec<u64> = c.subflows.iter().zip(&sched0).map(|(f, b)| f.sched.new_segs + f.sched.copied_segs - b).collect();
    let share1 = per[1] as f64 / (per[0] + per[1]) as f64;
    (sent as f64 / read as f64, share1, [c.subflows[0].sched.copied_segs, c.subflows[1].sched.copied_segs])
}

#[test]
fn redundant_sends_every_byte_about_twice_on_two_equal_paths() {
    let sc = scenario_file(REDUNDANT);
    let mut ratios = vec![];
    for seed in SEEDS {
        let (r, share1, copies) = redundant_run(&sc, seed);
        println!("must-pass 3: redundant seed {seed}: bytes sent / goodput {r:.3}; subflow b's share of the scheduled segments {share1:.3}; copies a {} b {}", copies[0], copies[1]);
        assert!(copies[0] > 0 && copies[1] > 0, "both subflows must carry copies: {copies:?}");
        ratios.push(r);
    }
    let (m, ci) = mean_ci(&ratios);
    println!("must-pass 3: redundant (kernel v0.95): bytes sent / goodput = {m:.3} ± {ci:.3} (95 % CI, 5 seeds); claim [1.8, 2.05]");
    // Reported beside it: the v0.94 behaviour (a subflow resumes at the oldest
    // un-DATA_ACKed segment).
    let sc94 = with_scheduler(REDUNDANT, "redundant", &[("kernel", "v0.94".into())]);
    let r94: Vec<f64> = SEEDS.iter().map(|&seed| redundant_run(&sc94, seed).0).collect();
    let (m94, ci94) = mean_ci(&r94);
    println!("must-pass 3: redundant (kernel v0.94, reported only): bytes sent / goodput = {m94:.3} ± {ci94:.3}");
    assert!((1.8..=2.05).contains(&m), "redundant: bytes sent / goodput {m:.3} outside [1.8, 2.05]");
}

/// The contrast that lets the check fail: minRTT on the same paths sends each byte about
/// once.
#[test]
fn minrtt_on_the_redundant_scenario_sends_each_byte_about_once() {
    let sc = with_scheduler(REDUNDANT, "minrtt", &[]);
    let (r, _, _) = redundant_run(&sc, 1);
    println!("must-pass 3 contrast: minrtt seed 1: bytes sent / goodput {r:.3}");
    assert!(r < 1.2, "{r}");
}

// ---------------------------------------------------------------------------------
// Must-pass 4: ECF and BLEST against minRTT, 10 + 2 Mbit/s, 256 KB receive buffer.

const HETERO: &str = "scenarios/schedulers/heterogeneous-256k.toml";
const FROM: u64 = 10;
const TO: u64 = 60;

#[derive(Clone, Copy, Debug)]
struct Hetero {
    goodput_mbps: f64,
    ooo_mean_bytes: f64,
    slow_share: f64,
    copies: [u64; 2],
}

/// Buffer sizes that replace the scenario's: ("send_buffer" | "receive_buffer", size).
type Buffers<'a> = &'a [(&'a str, &'a str)];

fn hetero_run(sched: &str, opts: &[(&str, serde_json::Value)], buffers: Buffers, seed: u64) -> Hetero {
    let mut sc = with_scheduler(HETERO, sched, opts);
    for &(which, size) in buffers {
        let size = Some(mptcplab_core::scenario::Size::parse(size).unwrap());
        match which {
            "send_buffer" => sc.connections[0].send_buffer = size,
            "receive_buffer" => sc.connections[0].receive_buffer = size,
            _ => panic!("unknown buffer {which}"),
        }
    }
    let mut s = build(&sc, Some(seed));
    s.run_until(SimTime::from_secs(FROM));
    let read0 = s.conns[0].rcv.read_total;
    let acked0: Vec<u64> = s.conns[0].subflows.iter().map(|f| f.tx.stats.bytes_acked).collect();
    s.run_until(SimTime::from_secs(TO));
    s.check_invariants().unwrap();
    let c = &s.conns[0];
    let goodput_mbps = (c.rcv.read_total - read0) as f64 * 8.0 / (TO - FROM) as f64 / 1e6;
    let acked: Vec<f64> = c.subflows.iter().zip(&acked0).map(|(f, b)| (f.tx.stats.bytes_acked - b) as f64).collect();
    let slow_share = acked[1] / (acked[0] + acked[1]);
    // Time average of the out-of-order queue: the 10 ms samples in the window.
    let cs = &s.metrics.conns;
    let ooo: Vec<f64> = (0..cs.time_s.len()).filter(|&k| cs.conn[k] == 0 && cs.time_s[k] > FROM as f64 && cs.time_s[k] <= TO as f64 + 1e-9).map(|k| cs.ooo_bytes[k] as f64).collect();
    assert!(ooo.len() >= 4900, "expected 10 ms samples, got {}", ooo.len());
    let ooo_mean_bytes = ooo.iter().sum::<f64>() / ooo.len() as f64;
    Hetero { goodput_mbps, ooo_mean_bytes, slow_share, copies: [c.subflows[0].sched.copied_segs, c.subflows[1].sched.copied_segs] }
}

fn hetero_all(sched: &str, opts: &[(&str, serde_json::Value)], buffers: Buffers, label: &str) -> Vec<Hetero> {
    let runs: Vec<Hetero> = SEEDS.iter().map(|&seed| hetero_run(sched, opts, buffers, seed)).collect();
    for (seed, r) in SEEDS.iter().zip(&runs) {
        println!(
            "must-pass 4: {label} seed {seed}: goodput {:.3} Mbit/s, mean OOO queue {:.0} B, slow-path share {:.3}, copies (opp. retrans.) fast {} slow {}",
            r.goodput_mbps, r.ooo_mean_bytes, r.slow_share, r.copies[0], r.copies[1]
        );
    }
    let col = |f: fn(&Hetero) -> f64| mean_ci(&runs.iter().map(f).collect::<Vec<_>>());
    let (g, gci) = col(|r| r.goodput_mbps);
    let (o, oci) = col(|r| r.ooo_mean_bytes);
    let (sh, shci) = col(|r| r.slow_share);
    println!("must-pass 4: {label}: goodput {g:.3} ± {gci:.3} Mbit/s, mean OOO queue {o:.0} ± {oci:.0} B, slow-path share {sh:.3} ± {shci:.3} (95 % CI, 5 seeds, [{FROM} s, {TO} s])");
    runs
}

fn minrtt() -> &'static Vec<Hetero> {
    static MINRTT: OnceLock<Vec<Hetero>> = OnceLock::new();
    MINRTT.get_or_init(|| hetero_all("minrtt", &[], &[], "minrtt"))
}

/// Exploration beside the verdicts (not a claim of the issue): the same scenario with a
/// 256 KB send buffer, so that the data queued at the connection level, ECF's `k`, is
/// small, as with Linux's send-buffer autotuning rather than a fixed 4 MiB.
const SMALL_SNDBUF: Buffers = &[("send_buffer", "256 KB")];

fn minrtt_small_sndbuf() -> &'static Vec<Hetero> {
    static MINRTT: OnceLock<Vec<Hetero>> = OnceLock::new();
    MINRTT.get_or_init(|| hetero_all("minrtt", &[], SMALL_SNDBUF, "minrtt send_buffer=256 KB (exploration)"))
}

fn mean(runs: &[Hetero], f: fn(&Hetero) -> f64) -> f64 { runs.iter().map(f).sum::<f64>() / runs.len() as f64 }

/// Difference of the means a − b and the half-width of its 95 % CI (Welch standard
/// error, t with 4 degrees of freedom: conservative for two sets of 5 seeds).
fn diff_ci(a: &[Hetero], b: &[Hetero], f: fn(&Hetero) -> f64) -> (f64, f64) {
    let var = |x: &[Hetero]| {
        let m = mean(x, f);
        x.iter().map(|r| (f(r) - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0) / x.len() as f64
    };
    (mean(a, f) - mean(b, f), 2.776 * (var(a) + var(b)).sqrt())
}

/// The three must-pass points for `sched` against `base` (minRTT); returns the failures.
fn check_against(sched: &str, runs: &[Hetero], base: &[Hetero]) -> Vec<String> {
    let (ooo, ooo_m) = (mean(runs, |r| r.ooo_mean_bytes), mean(base, |r| r.ooo_mean_bytes));
    let (g, g_m) = (mean(runs, |r| r.goodput_mbps), mean(base, |r| r.goodput_mbps));
    let share = mean(runs, |r| r.slow_share);
    let (d, dci) = diff_ci(runs, base, |r| r.ooo_mean_bytes);
    let significant = if d.abs() > dci { "significant" } else { "NOT significant" };
    println!(
        "must-pass 4: {sched} vs minrtt: mean OOO {ooo:.0} B vs {ooo_m:.0} B ({:+.1} %; difference {d:+.0} ± {dci:.0} B, {significant} at 95 %), goodput {g:.3} vs {g_m:.3} Mbit/s ({:+.1} %), slow-path share {share:.3}",
        100.0 * (ooo / ooo_m - 1.0),
        100.0 * (g / g_m - 1.0)
    );
    let mut fails = vec![];
    if ooo >= ooo_m {
        fails.push(format!("{sched}: mean OOO queue {ooo:.0} B not below minRTT's {ooo_m:.0} B"));
    }
    if g < 0.9 * g_m {
        fails.push(format!("{sched}: goodput {g:.3} Mbit/s below 0.9 x minRTT's {g_m:.3}"));
    }
    if share < 0.05 {
        fails.push(format!("{sched}: slow path carries {:.1} % < 5 %", 100.0 * share));
    }
    fails
}

/// Passes on the means, but the OOO difference is far inside the noise (see the printed
/// CI of the difference): with the 4 MiB send buffer ECF's queued data k is about 4 MB,
/// so "the fast subflow alone would finish later" holds and ECF takes minRTT's choice;
/// the few decisions that differ come from the kernel's 32-bit products wrapping (with
/// exact arithmetic every seed is identical to minRTT).
#[test]
fn ecf_keeps_a_smaller_out_of_order_queue_than_minrtt_without_losing_goodput() {
    let runs = hetero_all("ecf", &[], &[], "ecf");
    // Reported beside it: ECF with exact arithmetic (the kernel's 32-bit products wrap),
    // and the small-send-buffer exploration.
    let exact = hetero_all("ecf", &[("arithmetic", "exact".into())], &[], "ecf arithmetic=exact (reported only)");
    let _ = check_against("ecf arithmetic=exact (reported only)", &exact, minrtt());
    let small = hetero_all("ecf", &[], SMALL_SNDBUF, "ecf send_buffer=256 KB (exploration)");
    let _ = check_against("ecf send_buffer=256 KB (exploration)", &small, minrtt_small_sndbuf());
    let small_exact = hetero_all("ecf", &[("arithmetic", "exact".into())], SMALL_SNDBUF, "ecf arithmetic=exact send_buffer=256 KB (exploration)");
    let _ = check_against("ecf arithmetic=exact send_buffer=256 KB (exploration)", &small_exact, minrtt_small_sndbuf());
    let fails = check_against("ecf", &runs, minrtt());
    assert!(fails.is_empty(), "{fails:?}");
}

fn blest_256k() -> &'static Vec<Hetero> {
    static BLEST: OnceLock<Vec<Hetero>> = OnceLock::new();
    BLEST.get_or_init(|| hetero_all("blest", &[], &[], "blest"))
}

/// Issue 12 item 5, must pass: at 256 KB BLEST keeps a smaller out-of-order queue and a
/// higher goodput than minRTT, both by more than the 95 % CI of the difference.
#[test]
fn blest_beats_minrtt_on_out_of_order_queue_and_goodput_with_a_256_kb_window() {
    let (runs, base) = (blest_256k(), minrtt());
    let _ = check_against("blest", runs, base);
    let (d_ooo, ci_ooo) = diff_ci(runs, base, |r| r.ooo_mean_bytes);
    let (d_g, ci_g) = diff_ci(runs, base, |r| r.goodput_mbps);
    println!("blest - minrtt at 256 KB: mean OOO {d_ooo:+.0} ± {ci_ooo:.0} B, goodput {d_g:+.3} ± {ci_g:.3} Mbit/s (95 % CI, 5 seeds each)");
    assert!(d_ooo + ci_ooo < 0.0, "OOO difference {d_ooo:+.0} ± {ci_ooo:.0} B");
    assert!(d_g - ci_g > 0.0, "goodput difference {d_g:+.3} ± {ci_g:.3} Mbit/s");
    // Beside it (exploration, no claim): a 256 KB send buffer as well.
    let small = hetero_all("blest", &[], SMALL_SNDBUF, "blest send_buffer=256 KB (exploration)");
    let _ = check_against("blest send_buffer=256 KB (exploration)", &small, minrtt_small_sndbuf());
}

/// Pinned finding (issue 4's must-pass 4 asked for a slow-path share >= 5 %): with a
/// 256 KB window BLEST leaves the slow path unused after start-up (share over [10 s,
/// 60 s] 0 on seeds 2, 3 and 5, 0.025 % on seeds 1 and 4). Its estimate of what
/// the fast subflow sends during one slow-path RTT (400 ms) is 375-715 KB at lambda
/// 1.0-1.2 for fast cwnds of 32-65 packets, never inside the 256 KB connection-level
/// window, so it always waits for the fast subflow, which is what BLEST is meant to do
/// when the window cannot hold the slow path's data. Figures pinned: share < 0.05 % on
/// every seed; mean OOO 2488 B and goodput 9.447 Mbit/s over seeds 1-5.
#[test]
fn blest_leaves_the_slow_path_unused_after_start_up_with_a_256_kb_window() {
    let runs = blest_256k();
    for (seed, r) in SEEDS.iter().zip(runs) {
        println!("pinned: blest 256 KB seed {seed}: slow-path share {:.6}", r.slow_share);
        assert!(r.slow_share < 0.0005, "seed {seed}: slow-path share {}", r.slow_share);
    }
    let (ooo, g) = (mean(runs, |r| r.ooo_mean_bytes), mean(runs, |r| r.goodput_mbps));
    assert!((ooo - 2488.0).abs() < 1.0, "mean OOO {ooo:.1} B");
    assert!((g - 9.447).abs() < 0.0005, "goodput {g:.4} Mbit/s");
}

/// Issue 12 item 5, must pass: with a 1 MB window the fast subflow's estimated volume
/// fits beside the slow path's data, and BLEST uses the slow path on every seed.
#[test]
fn blest_uses_the_slow_path_on_every_seed_with_a_1_mb_window() {
    let runs = hetero_all("blest", &[], &[("receive_buffer", "1 MB")], "blest receive_buffer=1 MB");
    let base = hetero_all("minrtt", &[], &[("receive_buffer", "1 MB")], "minrtt receive_buffer=1 MB (reported)");
    let _ = check_against("blest receive_buffer=1 MB", &runs, &base);
    assert_eq!(runs.len(), 5);
    for (seed, r) in SEEDS.iter().zip(&runs) {
        assert!(r.slow_share > 0.0, "seed {seed}: slow-path share {}", r.slow_share);
    }
}

/// Round-robin on the same scenario, reported for comparison (no claim): it gives the
/// slow path every other segment while it has cwnd room.
#[test]
fn roundrobin_on_the_heterogeneous_scenario_uses_the_slow_path_more_than_minrtt() {
    let runs = hetero_all("roundrobin", &[], &[], "roundrobin (reported)");
    let share = mean(&runs, |r| r.slow_share);
    assert!(share > mean(minrtt(), |r| r.slow_share), "round-robin slow-path share {share:.3}");
}
