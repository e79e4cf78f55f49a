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
