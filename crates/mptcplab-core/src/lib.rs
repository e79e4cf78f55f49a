//! mptcplab-core: a deterministic packet-level Multipath TCP simulator.
//!
//! Sans-IO: no Python, no files, no wall clock. A [`scenario::Scenario`] is validated into
//! a [`scenario::Plan`] and run by a [`world::Simulator`]; metrics come out as columns.

pub mod app;
pub mod cc;
pub mod metrics;
pub mod mptcp;
pub mod net;
pub mod options;
pub mod pcap;
pub mod profile;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod world;

pub use scenario::{Scenario, ScenarioError};
pub use world::Simulator;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The model's fingerprint: a hash of this crate's sources (build.rs). Two builds with the
/// same value run the same model; results record it beside `VERSION`.
pub const MODEL: &str = env!("MPTCPLAB_MODEL");

/// Every component a scenario can name: (kind, name, one-line description).
pub fn components() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut v = Vec::new();
    for c in cc::REGISTRY {
        v.push(("congestion_control", c.name, c.description));
    }
    for s in mptcp::scheduler::REGISTRY {
        v.push(("scheduler", s.name, s.description));
    }
    for p in mptcp::pm::REGISTRY {
        v.push(("path_manager", p.name, p.description));
    }
    for a in app::REGISTRY {
        v.push(("application", a.name, a.description));
    }
    for p in profile::REGISTRY {
        v.push(("profile", p.name, p.description));
    }
    v
}

/// Schedulers, path managers and applications as a Markdown table with their options
/// (`mptcplab list --markdown`; congestion controls have their own table).
pub fn components_markdown() -> String {
    let mut s = String::from("| kind | name | description | options (default) |\n|---|---|---|---|\n");
    let cell = |t: &str| t.replace('|', "\\|");
    for c in mptcp::scheduler::REGISTRY {
        s.push_str(&format!("| scheduler | `{}` | {} | {} |\n", c.name, cell(c.description), options::markdown_cell(c.options)));
    }
    for c in mptcp::pm::REGISTRY {
        s.push_str(&format!("| path_manager | `{}` | {} | {} |\n", c.name, cell(c.description), options::markdown_cell(c.options)));
    }
    for c in app::REGISTRY {
        s.push_str(&format!("| application | `{}` | {} | — |\n", c.name, cell(c.description)));
    }
    for p in profile::REGISTRY {
        s.push_str(&format!("| profile (`run.profile`) | `{}` | {} | — |\n", p.name, cell(p.description)));
    }
    s
}
