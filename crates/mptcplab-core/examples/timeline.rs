//! Print a per-second timeline of a scenario (goodput, per-subflow sent rate, cwnd, srtt):
//! `cargo run --release --example timeline -- scenarios/x.toml [KEY=VALUE on connections[0]]`
use mptcplab_core::{Scenario, Simulator};
use mptcplab_core::units::SimTime;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: timeline FILE.toml [rcvbuf] [initial_path]");
    let text = std::fs::read_to_string(&path).expect("read");
    let v: toml::Value = toml::from_str(&text).expect("toml");
    let mut sc = Scenario::deserialize_from(v).unwrap_or_else(|e| panic!("{e}"));
    if let Some(b) = args.next() {
        sc.connections[0].receive_buffer = Some(mptcplab_core::scenario::Size::parse(&b).unwrap());
    }
    if let Some(p) = args.next() {
        sc.connections[0].initial_path = Some(p);
    }
    let mut sim = Simulator::new(sc.plan().unwrap_or_else(|e| panic!("{e}")), None, None, &[]).unwrap();
    let mut prev_read = 0;
    let mut prev_sent = vec![0u64; sim.conns[0].subflows.len()];
    let end = sim.end.secs_f64() as u64;
    for t in 1..=end {
        sim.run_until(SimTime::from_secs(t));
        let c = &sim.conns[0];
        let g = (c.rcv.read_total - prev_read) as f64 * 8e-6;
        prev_read = c.rcv.read_total;
        let mut line = format!("{t:4}s goodput {g:6.2} |");
        prev_sent.resize(c.subflows.len(), 0); // path managers may open subflows later
        for (i, s) in c.subflows.iter().enumerate() {
            let r = (s.tx.stats.bytes_sent - prev_sent[i]) as f64 * 8e-6;
            prev_sent[i] = s.tx.stats.bytes_sent;
            line += &format!(" s{i} {r:5.2} cw {:4} fl {:4} rtt {:5.0} {:?} |", s.tx.st.cwnd, s.tx.in_flight(), s.tx.st.srtt.ms_f64(), s.tx.ca_state());
        }
        println!("{line}");
    }
}
