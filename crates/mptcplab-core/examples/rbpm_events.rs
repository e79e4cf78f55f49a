//! Run a scenario with the RBPM scheduler on connection 0 and print its active-set
//! changes and the goodput: `cargo run --release --example rbpm_events -- FILE.toml [later|literal|all_paths [delivery_rate|cwnd_srtt]]`
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::{Scenario, Simulator};

fn main() {
    let path = std::env::args().nth(1).expect("usage: rbpm_events FILE.toml");
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(&path).expect("read")).expect("toml");
    let mut sc = Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("{e}"));
    sc.connections[0].scheduler = Some("rbpm".into());
    let mut o = std::collections::BTreeMap::new();
    if let Some(r) = std::env::args().nth(2) {
        o.insert("reactivation".to_string(), serde_json::json!(r));
    }
    if let Some(b) = std::env::args().nth(3) {
        o.insert("bandwidth".to_string(), serde_json::json!(b));
    }
    sc.connections[0].scheduler_options = Some(o);
    let mut sim = Simulator::new(sc.plan().unwrap_or_else(|e| panic!("{e}")), None, None, &[]).unwrap();
    sim.run();
    if let AnyScheduler::Rbpm(r) = &sim.conns[0].sched {
        for e in r.events.iter().take(20) {
            println!("{:9.3} s  decision {:6}  subflow {} ({}) {}", e.at.secs_f64(), e.decision, e.subflow, sim.path_name(0, e.subflow), if e.active { "reactivated" } else { "deactivated" });
        }
        let down = r.events.iter().filter(|e| !e.active).count();
        println!("{} changes ({} deactivations, {} reactivations; first 20 above)", r.events.len(), down, r.events.len() - down);
    }
    for s in sim.summary() {
        println!("{}: goodput {:.3} Mbit/s", s.name, s.goodput_mbps);
    }
}
