//! Acceptance 7 (core side): every kind of bad input names its field and says what was
//! expected. The Python tests check the same cases through the API and the CLI.

use mptcplab_core::{Scenario, ScenarioError};
use serde_json::{json, Value};

fn base() -> Value {
    json!({
        "links": [{"name": "a", "rate": "10 Mbit/s", "delay": "10 ms"},
                  {"name": "b", "rate": "5 Mbit/s", "delay": "30 ms"}],
        "paths": [{"name": "pa", "links": ["a"]}, {"name": "pb", "links": ["b"]}],
        "connections": [{"name": "mp", "paths": ["pa", "pb"]}]
    })
}

fn check(v: Value) -> Result<(), ScenarioError> {
    let sc = Scenario::from_json(&v.to_string())?;
    sc.plan().map(|_| ())
}

fn expect(v: Value, field: &str, msg_part: &str) {
    let e = check(v).expect_err("must be rejected");
    assert_eq!(e.field, field, "{e}");
    assert!(e.message.contains(msg_part), "message {:?} lacks {msg_part:?}", e.message);
}

#[test]
fn the_base_scenario_is_valid() {
    check(base()).unwrap();
}

#[test]
fn unknown_fields_are_named_with_their_path() {
    let mut v = base();
    v["links"][1]["bandwidth"] = json!("1 Mbit/s");
    expect(v, "links[1].bandwidth", "unknown field");
    let mut v = base();
    v["colour"] = json!("red");
    expect(v, "colour", "unknown field");
}

#[test]
fn missing_or_wrong_units_are_rejected() {
    let mut v = base();
    v["links"][0]["rate"] = json!(100);
    expect(v, "links[0].rate", "has no unit");
    let mut v = base();
    v["links"][0]["rate"] = json!("100 K");
    expect(v, "links[0].rate", "incomplete");
    let mut v = base();
    v["links"][0]["rate"] = json!("10 Mbit");
    expect(v, "links[0].rate", "incomplete");
    let mut v = base();
    v["links"][1]["delay"] = json!("30");
    expect(v, "links[1].delay", "no unit");
    let mut v = base();
    v["connections"][0]["receive_buffer"] = json!("200 K");
    expect(v, "connections[0].receive_buffer", "ambiguous");
    let mut v = base();
    v["links"][0]["queue"] = json!(100);
    expect(v, "links[0].queue", "has no unit");
}

#[test]
fn negative_or_zero_rates_are_rejected() {
    let mut v = base();
    v["links"][0]["rate"] = json!("0 Mbit/s");
    expect(v, "links[0].rate", "> 0");
    let mut v = base();
    v["links"][0]["rate"] = json!("-5 Mbit/s");
    expect(v, "links[0].rate", "> 0");
    let mut v = base();
    v["links"][0]["schedule"] = json!([{"at": "1 s", "rate": "0 bit/s"}]);
    expect(v, "links[0].schedule[0].rate", "> 0");
}

#[test]
fn loss_outside_the_unit_interval_and_nan_are_rejected() {
    let mut v = base();
    v["links"][0]["loss"] = json!(1.5);
    expect(v, "links[0].loss", "[0, 1]");
    let mut v = base();
    v["links"][1]["loss"] = json!(-0.1);
    expect(v, "links[1].loss", "[0, 1]");
    let mut v = base();
    v["links"][0]["reverse"] = json!({"loss": 2.0});
    expect(v, "links[0].reverse.loss", "[0, 1]");
    // NaN cannot be written in JSON; through serde's f64 it arrives from TOML or Python.
    let mut sc = Scenario::from_json(&base().to_string()).unwrap();
    sc.links[0].loss = Some(f64::NAN);
    let e = sc.plan().unwrap_err();
    assert_eq!(e.field, "links[0].loss");
    assert!(e.message.contains("NaN"));
    let mut v = base();
    v["links"][0]["delay"] = json!("NaN ms");
    expect(v, "links[0].delay", "number");
}

#[test]
fn routes_naming_missing_links_or_paths_are_rejected() {
    let mut v = base();
    v["paths"][1]["links"] = json!(["b", "nope"]);
    expect(v, "paths[1].links[1]", "unknown link \"nope\"");
    let mut v = base();
    v["connections"][0]["paths"] = json!(["pa", "zz"]);
    expect(v, "connections[0].paths[1]", "unknown path \"zz\"");
    let mut v = base();
    v["connections"][0]["initial_path"] = json!("pc");
    expect(v, "connections[0].initial_path", "not one of");
}

#[test]
fn duplicate_names_are_rejected() {
    let mut v = base();
    v["links"][1]["name"] = json!("a");
    expect(v, "links[1].name", "duplicate link name");
    let mut v = base();
    v["paths"][1]["name"] = json!("pa");
    expect(v, "paths[1].name", "duplicate path name");
    let mut v = base();
    v["flows"] = json!([{"name": "mp", "path": "pa"}]);
    expect(v, "flows[0].name", "duplicate");
}

#[test]
fn empty_topologies_are_rejected() {
    let mut v = base();
    v["links"] = json!([]);
    expect(v, "links", "no links");
    let mut v = base();
    v["paths"] = json!([]);
    expect(v, "paths", "no paths");
    let mut v = base();
    v["connections"] = json!([]);
    expect(v, "connections", "no traffic");
    let mut v = base();
    v["paths"][0]["links"] = json!([]);
    expect(v, "paths[0].links", "at least one link");
}

#[test]
fn unknown_algorithms_list_the_choices() {
    let mut v = base();
    v["connections"][0]["cc"] = json!("vegas2");
    expect(v, "connections[0].cc", "expected one of: reno, cubic");
    let mut v = base();
    v["connections"][0]["scheduler"] = json!("fastest");
    expect(v, "connections[0].scheduler", "minrtt");
}

#[test]
fn normalisation_writes_out_defaults_and_expands_hosts_without_changing_the_run() {
    let v = json!({
        "hosts": [
            {"name": "c", "isps": [{"name": "x", "down": "10 Mbit/s", "up": "5 Mbit/s", "delay": "5 ms"},
                                   {"name": "y", "down": "20 Mbit/s", "up": "2 Mbit/s", "delay": "15 ms"}]},
            {"name": "s", "isps": [{"name": "z", "down": "50 Mbit/s", "up": "50 Mbit/s", "delay": "10 ms"}]}
        ],
        "run": {"duration": "3 s"},
        "connections": [{"name": "mp", "paths": "all"}]
    });
    let sc = Scenario::from_json(&v.to_string()).unwrap();
    let n = sc.normalized().unwrap();
    assert!(n.hosts.is_empty());
    assert_eq!(n.links.len(), 3);
    assert_eq!(n.paths.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), vec!["x~z", "y~z"]);
    let c = &n.connections[0];
    assert_eq!(c.cc.as_deref(), Some("cubic"));
    assert_eq!(c.initial_path.as_deref(), Some("x~z"));
    assert_eq!(c.receive_buffer.as_ref().unwrap().text, "6 MiB");
    // The normalised scenario round-trips through JSON and runs identically.
    let again = Scenario::from_json(&n.to_json()).unwrap();
    let run = |s: &Scenario| {
        let mut sim = mptcplab_core::Simulator::new(s.plan().unwrap(), None, None, &[]).unwrap();
        sim.run();
        format!("{:?}", sim.metrics.subflows)
    };
    assert_eq!(run(&sc), run(&again));
}

#[test]
fn bad_streaming_apps_name_the_field_and_never_panic() {
    let with_app = |app: Value| {
        let mut v = base();
        v["connections"][0]["app"] = app;
        v
    };
    check(with_app(json!({"kind": "stream"}))).unwrap();
    check(with_app(json!({"kind": "stream", "bitrate": "2 Mbit/s", "frame_rate": 25, "duration": "5 s"}))).unwrap();
    expect(with_app(json!({"kind": "stream", "bitrate": 4500000})), "connections[0].app.bitrate", "no unit");
    expect(with_app(json!({"kind": "stream", "bitrate": "4.5 MB/s"})), "connections[0].app.bitrate", "bits per second");
    expect(with_app(json!({"kind": "stream", "bitrate": "0 Mbit/s"})), "connections[0].app.bitrate", "> 0");
    expect(with_app(json!({"kind": "stream", "frame_rate": 0})), "connections[0].app.frame_rate", "(0, 10000]");
    expect(with_app(json!({"kind": "stream", "frame_rate": -30.0})), "connections[0].app.frame_rate", "(0, 10000]");
    expect(with_app(json!({"kind": "stream", "frame_rate": 1e9})), "connections[0].app.frame_rate", "(0, 10000]");
    expect(with_app(json!({"kind": "stream", "frame_rate": "30"})), "connections[0].app.frame_rate", "invalid type");
    expect(with_app(json!({"kind": "stream", "bitrate": "100 bit/s", "frame_rate": 30})), "connections[0].app.bitrate", "less than 1 B");
    expect(with_app(json!({"kind": "stream", "duration": "0 s"})), "connections[0].app.duration", "> 0");
    expect(with_app(json!({"kind": "stream", "size": "10 MB"})), "connections[0].app.size", "unknown field");
    expect(with_app(json!({"kind": "streem"})), "connections[0].app.kind", "unknown variant");
    expect(with_app(json!({"bitrate": "1 Mbit/s"})), "connections[0].app", "missing field `kind`");
    expect(with_app(json!("stream")), "connections[0].app", "application table");
    // The bulk app's field keeps its path too (the derived tagged enum lost it).
    expect(with_app(json!({"kind": "bulk", "size": 100})), "connections[0].app.size", "no unit");
    expect(with_app(json!({"kind": "bulk", "bitrate": "1 Mbit/s"})), "connections[0].app.bitrate", "unknown field");
    let mut v = base();
    v["flows"] = json!([{"name": "bg", "path": "pa", "app": {"kind": "stream", "frame_rate": 0}}]);
    expect(v, "flows[0].app.frame_rate", "(0, 10000]");
    let mut v = base();
    v["run"] = json!({"delay_samples": "yes"});
    expect(v, "run.delay_samples", "invalid type");
}
