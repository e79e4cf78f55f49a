//! Reference `metrics.md` §6.1 and §6.2 test cases: throughput vs goodput under the
//! redundant scheduler, and the meta-level out-of-order queue.
mod common;
use common::*;

fn two(rate: &str, d0: &str, d1: &str, queue: &str, extra: &str, app: &str, duration: &str) -> mptcplab_core::Scenario {
    scenario_toml(&two_link_toml(
        &format!("duration = \"{duration}\""),
        (rate, d0, queue),
        "",
        (rate, d1, queue),
        &format!("cc = \"reno\"\n    {extra}\n    app = {app}"),
    ))
}

#[test]
fn redundant_on_two_paths_sends_about_20_mb_for_a_10_mb_transfer_and_delivers_exactly_10_mb() {
    // §6.1: Σ throughput bytes ≈ 20 MB, goodput bytes = 10 MB.
    let sc = two("10 Mbit/s", "20 ms", "20 ms", "50 KB", "scheduler = \"redundant\"", r#"{ kind = "bulk", size = "10 MB" }"#, "60 s");
    let mut s = build(&sc, None);
    s.run();
    s.check_invariants().unwrap();
    let sum = &s.summary()[0];
    let sent_mb = sum.bytes_sent as f64 / 1e6;
    println!("§6.1 redundant: sent {sent_mb:.2} MB over both subflows, delivered {} B, done at {:.2} s", sum.bytes_delivered, sum.completion_s);
    assert!(sum.completion_s.is_finite(), "the transfer completes");
    assert_eq!(sum.bytes_delivered, 10_000_000, "each data byte counted once at the receiver");
    assert!((18.0..=21.0).contains(&sent_mb), "Σ sent {sent_mb} MB");
    for f in s.subflow_summary() {
        assert!(f.bytes_sent as f64 >= 0.9 * 10e6, "subflow {} carried only {} B", f.subflow, f.bytes_sent);
    }
}

#[test]
fn subflow_series_throughput_counts_bytes_acked_and_sent_mbps_counts_bytes_sent() {
    // One meaning of per-subflow throughput on both backends: bytes newly acknowledged
    // at the subflow level per interval (the kernel's Δ tcpi_bytes_acked); sent_mbps is
    // §6.1's transmitted rate. 2 % loss on path 0 makes them differ by its retransmissions.
    let sc = scenario_toml(&two_link_toml(
        "duration = \"10 s\"",
        ("10 Mbit/s", "20 ms", "50 KB"),
        "loss = 0.02",
        ("10 Mbit/s", "40 ms", "50 KB"),
        "cc = \"reno\"\n    app = { kind = \"bulk\" }",
    ));
    let mut s = build(&sc, None);
    s.run();
    let m = &s.metrics.subflows;
    let interval = 0.1; // the default sample interval, s
    for f in s.subflow_summary() {
        let rows: Vec<usize> = (0..m.time_s.len()).filter(|&i| m.conn[i] == f.conn && m.subflow[i] == f.subflow).collect();
        let last = *rows.last().expect("the subflow was sampled");
        let acked: f64 = rows.iter().map(|&i| m.throughput_mbps[i] * 1e6 / 8.0 * interval).sum();
        let sent: f64 = rows.iter().map(|&i| m.sent_mbps[i] * 1e6 / 8.0 * interval).sum();
        println!("subflow {}: Σ throughput {acked:.0} B vs acked {} B; Σ sent {sent:.0} B vs sent {} B",
                 f.subflow, m.bytes_acked[last], m.bytes_sent[last]);
        assert!((acked - m.bytes_acked[last] as f64).abs() < 1.0, "throughput_mbps integrates to bytes_acked");
        assert!((sent - m.bytes_sent[last] as f64).abs() < 1.0, "sent_mbps integrates to bytes_sent");
    }
    let lossy = &s.subflow_summary()[0];
    assert!(lossy.bytes_retrans > 0 && lossy.bytes_sent > lossy.bytes_acked + lossy.bytes_retrans / 2,
            "path 0's retransmissions separate sent from acked: {} vs {}", lossy.bytes_sent, lossy.bytes_acked);
}

#[test]
fn one_lossless_path_never_has_out_of_order_data() {
    // §6.2: a single path without loss delivers in order: ofo ≡ 0. The 200 KB window
    // keeps the 1000-packet queue from overflowing, so nothing is dropped.
    let sc = scenario_toml(
        r#"
    [run]
    duration = "10 s"
    sample_interval = "10 ms"
    [[links]]
    name = "a"
    rate = "20 Mbit/s"
    delay = "10 ms"
    queue = "1000 pkt"
    [[paths]]
    name = "pa"
    links = ["a"]
    [[connections]]
    name = "mp"
    paths = ["pa"]
    cc = "reno"
    receive_buffer = "200 KB"
"#,
    );
    let mut s = build(&sc, None);
    s.run();
    let c = &s.metrics.conns;
    assert!(c.ooo_bytes.len() > 900);
    assert_eq!(s.links[0].stats.dropped(), 0, "no loss at all");
    assert!(c.ooo_bytes.iter().all(|&b| b == 0));
    assert_eq!(s.summary()[0].ooo_max_bytes, 0);
    assert!(s.summary()[0].goodput_mbps > 15.0, "the path was busy");
}

#[test]
fn two_paths_with_rtts_of_10_and_100_ms_hold_data_out_of_order() {
    // §6.2: two equal-rate paths with RTT 10 / 100 ms (5 / 50 ms one way): mean ofo > 0.
    let sc = two("10 Mbit/s", "5 ms", "50 ms", "100 pkt", "", r#"{ kind = "bulk" }"#, "20 s");
    let mut s = build(&sc, None);
    s.run();
    let c = &s.metrics.conns;
    let mean = c.ooo_bytes.iter().sum::<u64>() as f64 / c.ooo_bytes.len() as f64;
    let subs = s.subflow_summary();
    println!("§6.2: mean ofo {:.0} B, max {} B; subflow goodput {:.2} / {:.2} Mbit/s", mean, s.summary()[0].ooo_max_bytes, subs[0].throughput_mbps, subs[1].throughput_mbps);
    assert!(subs[0].throughput_mbps > 5.0 && subs[1].throughput_mbps > 5.0, "both paths carry data");
    assert!(mean > 10_000.0, "mean ofo {mean} B");
}
