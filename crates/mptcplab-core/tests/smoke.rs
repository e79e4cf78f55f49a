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


#[test]
fn every_shipped_scenario_file_is_valid_and_runs() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut n = 0;
    for dir in ["scenarios", "python/mptcplab/data", "python/mptcplab/data/bench"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        files.sort();
        for f in files {
            let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
            let sc = common::scenario_file(&rel);
            let plan = sc.plan().unwrap_or_else(|e| panic!("{rel}: {e}"));
            let mut s = mptcplab_core::Simulator::new(plan, None, Some(mptcplab_core::units::SimTime::from_secs(2)), &[]).unwrap();
            s.run();
            assert!(s.summary().iter().any(|r| r.bytes_delivered > 0), "{rel}: nothing delivered in 2 s");
            n += 1;
        }
    }
    assert!(n >= 5, "found only {n} scenario files");
}
