//! Print every connection's subflows at a fixed interval: controller mode, cwnd,
//! ssthresh, in-flight, srtt, pacing rate and sent rate, plus each link's queue:
//! `cargo run --release --example cc_timeline -- scenarios/x.toml [interval_ms]`
use mptcplab_core::cc::CongestionControl;
use mptcplab_core::units::SimTime;
use mptcplab_core::{Scenario, Simulator};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: cc_timeline FILE.toml [interval_ms]");
    let step_ms: u64 = args.next().map_or(1000, |s| s.parse().expect("interval_ms"));
    let text = std::fs::read_to_string(&path).expect("read");
    let v: toml::Value = toml::from_str(&text).expect("toml");
    let sc = Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(sc.plan().unwrap_or_else(|e| panic!("{e}")), None, None, &[]).unwrap();
    let mut prev: Vec<Vec<u64>> = sim.conns.iter().map(|c| vec![0; c.subflows.len()]).collect();
    let mut t = SimTime::ZERO;
    while t < sim.end {
        t = (t + SimTime::from_ms(step_ms)).min(sim.end);
        sim.run_until(t);
        let mut line = format!("{:7.2}s", t.secs_f64());
        for (ci, c) in sim.conns.iter().enumerate() {
            for (i, s) in c.subflows.iter().enumerate() {
                let r = (s.tx.stats.bytes_sent - prev[ci][i]) as f64 * 8e-3 / step_ms as f64;
                prev[ci][i] = s.tx.stats.bytes_sent;
                let pr = s.tx.pacing_rate().map_or(0.0, |b| b.0 * 1e-6);
                let ss = if s.tx.st.ssthresh > 1_000_000 { -1 } else { s.tx.st.ssthresh as i64 };
                line += &format!(" | {}.{i} {} cw {} ss {ss} fl {} rtt {:.1} pace {pr:.1} tx {r:.1}", c.cfg.name, s.tx.cc.mode(), s.tx.st.cwnd, s.tx.in_flight(), s.tx.st.srtt.ms_f64());
            }
        }
        let now = sim.now;
        for l in sim.links.iter_mut() {
            let (q, _) = l.queue_len(now);
            if l.direction == "forward" {
                line += &format!(" | q[{}] {q}", l.name);
            }
        }
        println!("{line}");
    }
}
