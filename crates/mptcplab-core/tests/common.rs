//! Shared helpers for the end-to-end tests.
#![allow(dead_code)]

use mptcplab_core::{Scenario, Simulator};

pub fn sim(json: &str) -> Simulator {
    let sc = Scenario::from_json(json).unwrap_or_else(|e| panic!("scenario: {e}"));
    let plan = sc.plan().unwrap_or_else(|e| panic!("plan: {e}"));
    Simulator::new(plan, None, None, &[]).unwrap()
}

pub fn run(json: &str) -> Simulator {
    let mut s = sim(json);
    s.run();
    s
}

/// Goodput of flow `i` in Mbit/s over the whole run.
pub fn goodput(s: &Simulator, i: usize) -> f64 { s.summary()[i].goodput_mbps }

/// Parse a TOML scenario (the same format as the files in `scenarios/`).
pub fn scenario_toml(text: &str) -> Scenario {
    let v: toml::Value = toml::from_str(text).unwrap_or_else(|e| panic!("toml: {e}"));
    Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("scenario: {e}"))
}

pub fn scenario_file(rel: &str) -> Scenario {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    scenario_toml(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

pub fn build(sc: &Scenario, seed: Option<u64>) -> Simulator {
    Simulator::new(sc.plan().unwrap_or_else(|e| panic!("plan: {e}")), seed, None, &[]).unwrap()
}

/// Two disjoint 10 Mbit/s paths (10 ms and 30 ms one way, 100-packet queues) and one
/// MPTCP connection "mp" with uncoupled Reno sending `size` bytes, for `duration`.
pub fn two_paths(duration: &str, size: &str) -> Scenario {
    scenario_toml(&format!(
        r#"
    [run]
    duration = "{duration}"
    [[links]]
    name = "a"
    rate = "10 Mbit/s"
    delay = "10 ms"
    queue = "100 pkt"
    [[links]]
    name = "b"
    rate = "10 Mbit/s"
    delay = "30 ms"
    queue = "100 pkt"
    [[paths]]
    name = "pa"
    links = ["a"]
    [[paths]]
    name = "pb"
    links = ["b"]
    [[connections]]
    name = "mp"
    paths = ["pa", "pb"]
    cc = "reno"
    app = {{ kind = "bulk", size = "{size}" }}
"#
    ))
}
