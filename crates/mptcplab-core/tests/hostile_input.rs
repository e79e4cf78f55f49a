//! No input makes the core panic: every leaf of a valid scenario is replaced by hostile
//! values (huge, tiny, negative, wrong types, NaN-like strings) and the scenario is parsed,
//! planned and, when valid, run for a short time.

use mptcplab_core::rng::Rng;
use mptcplab_core::units::SimTime;
use mptcplab_core::{Scenario, Simulator};
use serde_json::{json, Value};

fn base() -> Value {
    json!({
        "run": {"duration": "2 s", "seed": 3, "sample_interval": "100 ms"},
        "tcp": {"mss": "1448 B", "initial_cwnd": 10, "delack_timeout": "40 ms", "min_rto": "200 ms"},
        "links": [{"name": "a", "rate": "10 Mbit/s", "delay": "10 ms", "queue": "50 pkt", "loss": 0.01,
                   "reverse": {"rate": "5 Mbit/s", "delay": "5 ms", "queue": "20 KB"},
                   "schedule": [{"at": "1 s", "until": "1500 ms", "rate": "2 Mbit/s"}, {"at": "1200 ms", "state": "down"}]},
                  {"name": "b", "rate": "5 Mbit/s", "delay": "30 ms"}],
        "paths": [{"name": "pa", "links": ["a"]}, {"name": "pb", "links": ["b"]}],
        "connections": [{"name": "mp", "paths": ["pa", "pb"], "send_buffer": "100 KB", "receive_buffer": "50 KB",
                         "read_rate": "1 Mbit/s", "start": "10 ms", "app": {"kind": "bulk", "size": "300 KB"}}],
        "flows": [{"name": "f", "path": "pb", "cc": "reno"}]
    })
}

fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                leaves(x, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn set(v: &mut Value, path: &[String], new: Value) {
    let mut cur = v;
    for p in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(p).unwrap(),
            Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
    }
    *cur = new;
}

/// A generated topology: a k = 2 FatTree (two hosts), a host-pair connection and flow, a
/// permutation and a Poisson workload (issue 16).
fn topology_base() -> Value {
    json!({
        "run": {"duration": "1 s", "seed": 3},
        "topology": {"kind": "fat_tree", "k": 2, "rate": "100 Mbit/s", "delay": "10 us", "queue": "20 pkt", "host_queue": "100 pkt"},
        "connections": [{"name": "c", "from": "h0", "to": "h1", "subflows": 2, "path_choice": "hash", "cc": "lia",
                         "app": {"kind": "bulk", "size": "100 KB"}}],
        "flows": [{"name": "f", "from": "h1", "to": "h0", "path_choice": "random", "cc": "reno"}],
        "traffic": [{"name": "p", "kind": "permutation", "subflows": 3, "size": "50 KB", "start": "100 ms"},
                    {"name": "w", "kind": "poisson", "load": 0.3, "transport": "tcp", "until": "500 ms",
                     "size_cdf": [[0, 0.0], [10000, 0.5], [200000, 1.0]]}]
    })
}

#[test]
fn hostile_values_in_every_field_never_panic() { hostile_values_never_panic(base()) }

#[test]
fn hostile_values_in_a_generated_topology_never_panic() { hostile_values_never_panic(topology_base()) }

fn hostile_values_never_panic(b: Value) {
    let hostile = [
        json!(0), json!(-1), json!(1e300), json!(-1e300), json!(u64::MAX), json!(""), json!("0"),
        json!("1e30 s"), json!("1e30 GB"), json!("1e30 Gbit/s"), json!("1e-30 bit/s"), json!("0 s"), json!("0 B"),
        json!("0 pkt"), json!("4294967296 pkt"), json!("18446744073709551615 B"), json!("inf s"), json!("NaN ms"),
        json!("-0 ms"), json!(true), json!(null), json!([]), json!({}), json!("1e-30 ns"), json!(1.5), json!("1 ns"),
    ];
    Scenario::from_json(&b.to_string()).unwrap().plan().unwrap();
    let mut paths = vec![];
    leaves(&b, &mut vec![], &mut paths);
    let mut r = Rng::stream(9, "hostile");
    let mut ran = 0;
    let mut rejected = 0;
    for p in &paths {
        for h in &hostile {
            let mut v = b.clone();
            set(&mut v, p, h.clone());
            let text = v.to_string();
            let outcome = std::panic::catch_unwind(|| {
                let Ok(sc) = Scenario::from_json(&text) else { return false };
                let Ok(plan) = sc.plan() else { return false };
                let mut sim = Simulator::new(plan, None, Some(SimTime::from_secs(2)), &[]).unwrap();
                sim.run();
                sim.check_invariants().unwrap();
                true
            });
            match outcome {
                Ok(true) => ran += 1,
                Ok(false) => rejected += 1,
                Err(_) => panic!("panic with {} = {h}", p.join(".")),
            }
        }
        // Also a random pair of fields at once.
        let q = &paths[r.below(paths.len() as u64) as usize];
        let mut v = b.clone();
        set(&mut v, p, hostile[r.below(hostile.len() as u64) as usize].clone());
        set(&mut v, q, hostile[r.below(hostile.len() as u64) as usize].clone());
        let text = v.to_string();
        let res = std::panic::catch_unwind(|| Scenario::from_json(&text).ok().and_then(|s| s.plan().ok()).map(|p| {
            let mut sim = Simulator::new(p, None, Some(SimTime::from_secs(2)), &[]).unwrap();
            sim.run();
        }));
        assert!(res.is_ok(), "panic with {} and {}: {text}", p.join("."), q.join("."));
    }
    println!("hostile input: {} fields x {} values: {ran} ran, {rejected} rejected with an error", paths.len(), hostile.len());
    assert!(ran > 0 && rejected > 0);
}
