//! Run a scenario file from the command line (for profiling the core without Python):
//! `cargo run --release --example run_toml -- scenarios/x.toml`
use mptcplab_core::{Scenario, Simulator};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_toml FILE.toml");
    let text = std::fs::read_to_string(&path).expect("read");
    let v: toml::Value = toml::from_str(&text).expect("toml");
    let sc = Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(sc.plan().unwrap_or_else(|e| panic!("{e}")), None, None, &[]).unwrap();
    let t0 = Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let st = sim.stats();
    for r in sim.summary() {
        println!("{}: goodput {:.2} Mbit/s", r.name, r.goodput_mbps);
    }
    println!("wall {wall:.3} s, sim/wall {:.1}, data segs {} ({:.2} M/s), acks {}, events {} ({:.2} M/s)", sim.now.secs_f64() / wall, st.data_segments_sent, st.data_segments_sent as f64 / wall / 1e6, st.acks_sent, st.events, st.events as f64 / wall / 1e6);
}
