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

#[test]
fn a_paced_flow_keeps_line_rate_with_a_shorter_queue() {
    let text = |pacing: bool| format!(r#"
        [run]
        duration = "20 s"
        [tcp]
        pacing = {pacing}
        [[links]]
        name = "l"
        rate = "50 Mbit/s"
        delay = "20 ms"
        queue = "250 KB"
        [[paths]]
        name = "p"
        links = ["l"]
        [[flows]]
        name = "f"
        path = "p"
        cc = "cubic"
        "#);
    let mut paced = common::build(&common::scenario_toml(&text(true)), None);
    let mut plain = common::build(&common::scenario_toml(&text(false)), None);
    paced.run();
    plain.run();
    let (gp, g0) = (common::goodput(&paced, 0), common::goodput(&plain, 0));
    let qmean = |s: &mptcplab_core::Simulator| {
        let l = &s.metrics.links;
        let v: Vec<f64> = l.hop.iter().zip(&l.queue_pkts).filter(|(h, _)| **h == 0).map(|(_, q)| *q as f64).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    println!("paced {gp:.2} Mbit/s, mean queue {:.1} pkt; unpaced {g0:.2} Mbit/s, mean queue {:.1} pkt", qmean(&paced), qmean(&plain));
    assert!(gp >= 0.9 * 50.0 * 1448.0 / 1500.0, "{gp}");
    assert_ne!(format!("{:?}", paced.metrics.links.queue_pkts), format!("{:?}", plain.metrics.links.queue_pkts));
}

#[test]
fn packets_and_events_stay_small() {
    // Hot-path values are copied a lot: keep them compact.
    println!("Packet {} B, Event {} B", std::mem::size_of::<mptcplab_core::net::Packet>(), std::mem::size_of::<mptcplab_core::sim::Event>());
    assert!(std::mem::size_of::<mptcplab_core::net::Packet>() <= 104);
    assert!(std::mem::size_of::<mptcplab_core::sim::Event>() <= 12);
}
