mod common;

#[test]
fn smoke_one_tcp_flow() {
    let s = common::run(r#"{
        "run": {"duration": "10 s"},
        "links": [{"name": "l", "rate": "10 Mbit/s", "delay": "10 ms", "queue": "50 pkt"}],
        "paths": [{"name": "p", "links": ["l"]}],
        "flows": [{"name": "f", "path": "p", "cc": "reno"}]
    }"#);
    let sum = s.summary();
    eprintln!("{:?}", sum);
    eprintln!("{:?}", s.subflow_summary());
    eprintln!("{:?}", s.stats());
    assert!(sum[0].goodput_mbps > 8.0);
}

#[test]
fn smoke_mptcp_two_paths() {
    let s = common::run(r#"{
        "run": {"duration": "10 s"},
        "links": [{"name": "a", "rate": "10 Mbit/s", "delay": "10 ms", "queue": "50 pkt"},
                  {"name": "b", "rate": "5 Mbit/s", "delay": "40 ms", "queue": "50 pkt"}],
        "paths": [{"name": "pa", "links": ["a"]}, {"name": "pb", "links": ["b"]}],
        "connections": [{"name": "mp", "paths": ["pa", "pb"], "cc": "reno"}]
    }"#);
    let sum = s.summary();
    eprintln!("{:?}", sum);
    eprintln!("{:?}", s.subflow_summary());
    assert!(sum[0].goodput_mbps > 12.0);
}

