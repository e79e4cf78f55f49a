//! Acceptance 5 (in-process part; the cross-process check is in tests/python).

mod common;
use common::*;

const LOSSY: &str = r#"
    [run]
    duration = "10 s"
    [[links]]
    name = "a"
    rate = "10 Mbit/s"
    delay = "10 ms"
    queue = "50 pkt"
    loss = 0.01
    [[paths]]
    name = "pa"
    links = ["a"]
    [[flows]]
    name = "f"
    path = "pa"
    cc = "cubic"
"#;

fn drops_series(s: &mptcplab_core::Simulator, hop: u32) -> Vec<u64> {
    let l = &s.metrics.links;
    l.hop.iter().zip(&l.dropped_pkts).filter(|(h, _)| **h == hop).map(|(_, d)| *d).collect()
}

#[test]
fn the_same_seed_gives_identical_rows_and_another_seed_a_different_loss_pattern() {
    let sc = scenario_toml(LOSSY);
    let mut a = build(&sc, Some(7));
    let mut b = build(&sc, Some(7));
    let mut c = build(&sc, Some(8));
    a.run();
    b.run();
    c.run();
    assert_eq!(format!("{:?}", a.metrics.subflows), format!("{:?}", b.metrics.subflows));
    assert_eq!(format!("{:?}", a.metrics.links), format!("{:?}", b.metrics.links));
    assert_ne!(drops_series(&a, 0), drops_series(&c, 0));
}

#[test]
fn an_unrelated_lossy_link_leaves_the_first_links_loss_pattern_unchanged() {
    // Same offered packets on link a in both runs (the extra flow never touches it), so
    // the named stream of link a must drop exactly the same packets.
    let base = scenario_toml(LOSSY);
    let mut extra = base.clone();
    let more = scenario_toml(
        r#"
        [[links]]
        name = "z"
        rate = "5 Mbit/s"
        delay = "30 ms"
        loss = 0.05
        [[paths]]
        name = "pz"
        links = ["z"]
        [[flows]]
        name = "g"
        path = "pz"
        cc = "reno"
        "#,
    );
    extra.links.extend(more.links);
    extra.paths.extend(more.paths);
    extra.flows.extend(more.flows);
    let mut a = build(&base, Some(3));
    let mut b = build(&extra, Some(3));
    a.run();
    b.run();
    assert!(drops_series(&b, 2).last().copied().unwrap_or(0) > 0, "the extra link must lose packets");
    assert_eq!(drops_series(&a, 0), drops_series(&b, 0));
    assert_eq!(a.summary()[0].bytes_delivered, b.summary()[0].bytes_delivered);
}
