//! End-to-end checks of the uncoupled controllers (reference `cc-uncoupled.md` §2.3–2.5)
//! through the engine: one TCP flow on one 10 Mbit/s bottleneck with a 100-packet queue.

mod common;

struct Outcome {
    goodput_mbps: f64,
    mean_srtt_ms: f64,
    bytes_retrans: u64,
}

fn one_flow(cc: &str, one_way_delay_ms: u32, secs: u32) -> Outcome {
    let s = common::run(&format!(
        r#"{{
        "run": {{"duration": "{secs} s"}},
        "links": [{{"name": "l", "rate": "10 Mbit/s", "delay": "{one_way_delay_ms} ms", "queue": "100 pkt"}}],
        "paths": [{{"name": "p", "links": ["l"]}}],
        "flows": [{{"name": "f", "path": "p", "cc": "{cc}"}}]
    }}"#
    ));
    let sub = &s.subflow_summary()[0];
    Outcome { goodput_mbps: s.summary()[0].goodput_mbps, mean_srtt_ms: sub.mean_srtt_ms, bytes_retrans: sub.bytes_retrans }
}

#[test]
fn vegas_fills_the_link_without_filling_the_queue() {
    // 20 ms RTT: Vegas stops a few packets above the BDP; Reno fills the 100-packet queue
    // (≈ 116 ms of queueing) and loses packets.
    let vegas = one_flow("vegas", 10, 20);
    let reno = one_flow("reno", 10, 20);
    assert!(vegas.goodput_mbps > 9.0, "{}", vegas.goodput_mbps);
    assert_eq!(vegas.bytes_retrans, 0);
    assert!(vegas.mean_srtt_ms < 30.0, "vegas srtt {}", vegas.mean_srtt_ms);
    assert!(reno.mean_srtt_ms > 80.0 && reno.bytes_retrans > 0, "reno srtt {}", reno.mean_srtt_ms);
}

#[test]
fn hybla_and_scalable_outrun_reno_on_a_600ms_path() {
    // RTT 600 ms, BDP ≈ 520 packets. After the slow-start loss Reno regains 1 packet per
    // 0.6 s; Hybla (ρ = 24) 576 per RTT, Scalable 2 % per RTT.
    let reno = one_flow("reno", 300, 60);
    for cc in ["hybla", "scalable"] {
        let o = one_flow(cc, 300, 60);
        assert!(o.goodput_mbps > 1.4 * reno.goodput_mbps, "{cc} {} vs reno {}", o.goodput_mbps, reno.goodput_mbps);
    }
}
