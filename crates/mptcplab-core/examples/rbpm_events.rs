//! Run a scenario with the RBPM scheduler on connection 0 and print its active-set
//! changes and the goodput: `cargo run --release --example rbpm_events -- FILE.toml [literal|all_paths]`
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::{Scenario, Simulator};

fn main() {
    let path = std::env::args().nth(1).expect("usage: rbpm_events FILE.toml");
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(&path).expect("read")).expect("toml");
    let mut sc = Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("{e}"));
    sc.connections[0].scheduler = Some("rbpm".into());
    if let Some(r) = std::env::args().nth(2) {
        let mut o = std::collections::BTreeMap::new();
        o.insert("reactivation".to_string(), serde_json::json!(r));
        sc.connections[0].scheduler_options = Some(o);
    }
    let mut sim = Simulator::new(sc.plan().unwrap_or_else(|e| panic!("{e}")), None, None, &[]).unwrap();
    sim.run();
    if let AnyScheduler::Rbpm(r) = &sim.conns[0].sched {
        for (t, i, a) in r.events.iter().take(20) {
            println!("{:9.3} s  subflow {i} ({}) {}", t.secs_f64(), sim.path_name(0, *i), if *a { "reactivated" } else { "deactivated" });
        }
        let down = r.events.iter().filter(|e| !e.2).count();
        println!("{} changes ({} deactivations, {} reactivations; first 20 above)", r.events.len(), down, r.events.len() - down);
    }
    for s in sim.summary() {
        println!("{}: goodput {:.3} Mbit/s", s.name, s.goodput_mbps);
    }
}
