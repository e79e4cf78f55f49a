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

/// Mean and half-width of the 95 % CI (Student t, n − 1 degrees of freedom, n ≤ 10).
pub fn mean_ci(v: &[f64]) -> (f64, f64) {
    const T95: [f64; 10] = [f64::NAN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262];
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (m, T95[v.len() - 1] * sd / n.sqrt())
}

pub fn build(sc: &Scenario, seed: Option<u64>) -> Simulator {
    Simulator::new(sc.plan().unwrap_or_else(|e| panic!("plan: {e}")), seed, None, &[]).unwrap()
}

/// A link's rate, one-way delay and queue.
pub type LinkParams<'a> = (&'a str, &'a str, &'a str);

/// TOML of two disjoint paths, "pa" over link "a" and "pb" over link "b", and one MPTCP
/// connection "mp" over both. `run` adds lines to `[run]`, `a_extra` to link a's table
/// and `conn` to the connection's (its cc, app, options).
pub fn two_link_toml(run: &str, a: LinkParams, a_extra: &str, b: LinkParams, conn: &str) -> String {
    format!(
        r#"
    [run]
    {run}
    [[links]]
    name = "a"
    rate = "{}"
    delay = "{}"
    queue = "{}"
    {a_extra}
    [[links]]
    name = "b"
    rate = "{}"
    delay = "{}"
    queue = "{}"
    [[paths]]
    name = "pa"
    links = ["a"]
    [[paths]]
    name = "pb"
    links = ["b"]
    [[connections]]
    name = "mp"
    paths = ["pa", "pb"]
    {conn}
"#,
        a.0, a.1, a.2, b.0, b.1, b.2
    )
}

/// Two disjoint 10 Mbit/s paths (10 ms and 30 ms one way, 100-packet queues) and one
/// MPTCP connection "mp" with uncoupled Reno sending `size` bytes, for `duration`.
pub fn two_paths(duration: &str, size: &str) -> Scenario {
    scenario_toml(&two_link_toml(
        &format!("duration = \"{duration}\""),
        ("10 Mbit/s", "10 ms", "100 pkt"),
        "",
        ("10 Mbit/s", "30 ms", "100 pkt"),
        &format!("cc = \"reno\"\n    app = {{ kind = \"bulk\", size = \"{size}\" }}"),
    ))
}
