//! The out_of_tree profile's base-kernel rules (docs/out-of-tree-profile.md): MPTCP v0.89
//! on Linux 3.14 (seed 001) against v0.9x on Linux 4.x, on seed 001's topologies.

mod common;

use common::{build, scenario_file, scenario_toml};
use mptcplab_core::scenario::{BaseKernelName, CwndValidationName, Duration, Size};
use mptcplab_core::{Scenario, Simulator};

/// Seed 001 topology `file`, initial subflow on `first`, the Linux-accounted 200 KB
/// buffer, `secs` seconds.
fn seed001(file: &str, first: &str, secs: &str) -> Scenario {
    let mut sc = scenario_file(file);
    sc.connections[0].initial_path = Some(first.to_string());
    sc.connections[0].receive_buffer = Some(Size::parse("200 KB").unwrap());
    sc.run.duration = Some(Duration::parse(secs).unwrap());
    sc
}

/// Share of the bytes acked on each path, in path order.
fn shares(s: &Simulator) -> Vec<f64> {
    let subs = s.subflow_summary();
    let total: u64 = subs.iter().map(|x| x.bytes_acked).sum();
    let mut by_path: Vec<(u32, f64)> = subs.iter().map(|x| (x.path, x.bytes_acked as f64 / total.max(1) as f64)).collect();
    by_path.sort_by_key(|x| x.0);
    by_path.into_iter().map(|x| x.1).collect()
}

fn run(sc: &Scenario) -> Simulator {
    let mut s = build(sc, None);
    s.run();
    s
}

#[test]
fn under_base_kernel_3_14_minrtt_puts_data_behind_the_slow_path_and_under_4x_it_does_not() {
    // Topology 1, slow path first: under the 3.14 cwnd validation the fast subflows'
    // cwnds stay near their use, so new data spills onto the 1 Mbit/s path; under 4.x
    // slow start lets them reach twice their use and the slow path starves.
    let mut sc = seed001("scenarios/rbpm-4path-a.toml", "path4", "20 s");
    sc.tcp.base_kernel = Some(BaseKernelName::Linux3_14);
    let old = run(&sc);
    let s314 = shares(&old);
    sc.tcp.base_kernel = Some(BaseKernelName::Linux4);
    let s4 = shares(&run(&sc));
    assert!(s314[3] > 0.10, "3.14: slow path share {:?}", s314);
    assert!(s4[3] < 0.02, "4.x: slow path share {:?}", s4);
}

#[test]
fn an_explicit_cwnd_validation_overrides_the_base_kernel_default() {
    let mut sc = seed001("scenarios/rbpm-4path-a.toml", "path4", "20 s");
    sc.tcp.base_kernel = Some(BaseKernelName::Linux3_14);
    sc.tcp.cwnd_validation = Some(CwndValidationName::Linux4);
    let a = run(&sc);
    sc.tcp.base_kernel = Some(BaseKernelName::Linux4);
    sc.tcp.cwnd_validation = None;
    let b = run(&sc);
    // Seed 001 disables penalisation, so cwnd validation is the only rule that differs.
    assert_eq!(a.summary()[0].bytes_delivered, b.summary()[0].bytes_delivered);
    sc.tcp.cwnd_validation = Some(CwndValidationName::Linux3_14);
    let c = run(&sc);
    assert_ne!(a.summary()[0].bytes_delivered, c.summary()[0].bytes_delivered);
}

#[test]
fn the_upstream_profile_keeps_the_5_18_cwnd_validation_and_ignores_base_kernel() {
    // The upstream profile's default is the >= 5.18 form: naming it changes nothing.
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rbpm-4path-b.toml")).unwrap();
    let text = text.replacen("[run]", "[run]\nprofile = \"upstream\"", 1).replace("duration = \"100 s\"", "duration = \"10 s\"");
    let sc = scenario_toml(&text);
    let a = run(&sc);
    let mut sc2 = sc.clone();
    sc2.tcp.cwnd_validation = Some(CwndValidationName::Linux5_18);
    let b = run(&sc2);
    assert_eq!((a.summary()[0].bytes_delivered, a.stats().events), (b.summary()[0].bytes_delivered, b.stats().events));
    // base_kernel qualifies the out-of-tree kernel only: upstream ignores it.
    sc2.tcp.cwnd_validation = None;
    sc2.tcp.base_kernel = Some(BaseKernelName::Linux3_14);
    let d = run(&sc2);
    assert_eq!((a.summary()[0].bytes_delivered, a.stats().events), (d.summary()[0].bytes_delivered, d.stats().events));
    sc2.tcp.cwnd_validation = Some(CwndValidationName::Linux3_14);
    let c = run(&sc2);
    assert_ne!(a.summary()[0].bytes_delivered, c.summary()[0].bytes_delivered, "the switch reaches the upstream sender too");
}

#[test]
fn base_kernel_input_errors_name_the_field() {
    let with = |tcp: &str| {
        let t = format!(
            "[tcp]\n{tcp}\n[[links]]\nname = \"a\"\nrate = \"5 Mbit/s\"\ndelay = \"10 ms\"\n[[paths]]\nname = \"pa\"\nlinks = [\"a\"]\n[[connections]]\nname = \"mp\"\npaths = [\"pa\"]\n"
        );
        let v: toml::Value = toml::from_str(&t).unwrap();
        match Scenario::deserialize_from(v) {
            Err(e) => Some((e.field, e.message)),
            Ok(sc) => sc.plan().err().map(|e| (e.field, e.message)),
        }
    };
    let (f, m) = with("base_kernel = \"3.16\"").unwrap();
    assert_eq!(f, "tcp.base_kernel", "{m}");
    assert!(m.contains("3.14") && m.contains("4.x"), "{m}");
    let (f, m) = with("cwnd_validation = \"linux_3\"").unwrap();
    assert_eq!(f, "tcp.cwnd_validation");
    assert!(m.contains("linux_3_14") && m.contains("linux_5_18"), "{m}");
    let (f, _) = with("gso = \"yes\"").unwrap();
    assert_eq!(f, "tcp.gso");
    assert!(with("base_kernel = \"3.14\"\ngso = false\ncwnd_validation = \"linux_3_11\"").is_none());
}
