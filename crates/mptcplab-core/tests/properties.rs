//! Acceptance 6 of issue 2: invariants on >= 200 random scenarios.
//!
//! The generator (seeded, so failures reproduce) covers link down/up, 100 % loss, receive
//! buffers under 4 MSS, ramps, shared bottlenecks, background TCP flows, both recovery
//! modes, every registered congestion control, scheduler and path manager with random
//! options, backup paths (issue 4, must-pass 9), and the upstream profile (issue 6). Invariants are checked after every event:
//! bytes delivered once and in order, queues within limits, packet conservation at every
//! link, every undelivered data byte still outstanding on some subflow, cwnd finite and
//! >= its floor. The test prints the coverage it reached.

mod common;

/// Check the invariants after every event.
const CHECK_EVERY: u64 = 1;
use mptcplab_core::rng::Rng;
use mptcplab_core::units::SimTime;
use mptcplab_core::Scenario;
use serde_json::{json, Value};
use std::collections::BTreeMap;

struct Case {
    scenario: Value,
    /// Per flow: may it legitimately deliver nothing (all its paths dead)?
    may_starve: Vec<bool>,
    features: Vec<&'static str>,
}

fn pick<'a, T>(r: &mut Rng, xs: &'a [T]) -> &'a T { &xs[r.below(xs.len() as u64) as usize] }

/// `r` draws the network and traffic; `rs` the schedulers, `pm` the path managers and
/// backup flags, and `ra` the streaming apps and delay samples, each on its own stream so
/// that adding a dimension leaves the other draws of every case as they were.
fn gen_case(r: &mut Rng, rs: &mut Rng, pm: &mut Rng, ra: &mut Rng) -> Case {
    let mut features = vec![];
    let duration_s = 4 + r.below(9); // 4..12 s
    let n_links = 1 + r.below(4) as usize;
    let shared = n_links >= 2 && r.chance(0.35);
    let mut links = vec![];
    let mut dead_link = vec![false; n_links + 1];
    let mut late_down = vec![false; n_links + 1];
    let mut slow_link = vec![false; n_links + 1];
    for i in 0..n_links {
        let rate = *pick(r, &["500 kbit/s", "2 Mbit/s", "10 Mbit/s", "30 Mbit/s"]);
        // A 500 kbit/s link with a deep queue can legitimately starve a late flow's SYN
        // for the whole (short) run; liveness is only asserted elsewhere.
        slow_link[i] = rate == "500 kbit/s";
        let delay = *pick(r, &["1 ms", "10 ms", "40 ms", "120 ms"]);
        let queue = if r.chance(0.3) { format!("{} KB", 3 + r.below(60)) } else { format!("{} pkt", 2 + r.below(150)) };
        let mut l = json!({"name": format!("l{i}"), "rate": rate, "delay": delay, "queue": queue});
        let x = r.next_f64();
        if x < 0.08 {
            l["loss"] = json!(1.0);
            dead_link[i] = true;
            features.push("100% loss");
        } else if x < 0.4 {
            l["loss"] = json!((r.next_f64() * 0.05 * 1000.0).round() / 1000.0);
            features.push("random loss");
        } else if x < 0.5 {
            l["loss_model"] = json!({"kind": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3, "loss_bad": 0.6});
            features.push("gilbert-elliott");
        }
        if r.chance(0.2) {
            l["reverse"] = json!({"loss": 0.02, "rate": "1 Mbit/s"});
            features.push("lossy reverse path");
        }
        let mut sched = vec![];
        if r.chance(0.3) {
            let t = 1 + r.below(duration_s.saturating_sub(2).max(1));
            let back = t + 1 + r.below(3);
            sched.push(json!({"at": format!("{t} s"), "state": "down"}));
            sched.push(json!({"at": format!("{back} s"), "state": "up"}));
            if t <= 3 {
                late_down[i] = true;
            }
            features.push("link down/up");
        }
        if r.chance(0.3) {
            let t = r.below(duration_s);
            let rate2 = *pick(r, &["1 Mbit/s", "5 Mbit/s", "20 Mbit/s"]);
            sched.push(json!({"at": format!("{t} s"), "until": format!("{} s", t + 1 + r.below(4)), "rate": rate2, "delay": *pick(r, &["5 ms", "60 ms"])}));
            features.push("ramp");
        }
        if r.chance(0.15) {
            sched.push(json!({"at": format!("{} ms", r.below(duration_s * 1000)), "rate": "3 Mbit/s", "direction": "forward"}));
            features.push("step");
        }
        if !sched.is_empty() {
            l["schedule"] = Value::Array(sched);
        }
        links.push(l);
    }
    let mut paths = vec![];
    if shared {
        links.push(json!({"name": "core", "rate": "8 Mbit/s", "delay": "5 ms", "queue": "40 pkt"}));
        for i in 0..n_links {
            paths.push(json!({"name": format!("p{i}"), "links": [format!("l{i}"), "core"]}));
        }
        features.push("shared bottleneck");
    } else {
        for i in 0..n_links {
            paths.push(json!({"name": format!("p{i}"), "links": [format!("l{i}")]}));
        }
    }
    // Backup paths (MP_PRIO): a backup subflow takes the data only when no active one
    // can, so a backup path never makes a flow starve that an active path would feed.
    for p in paths.iter_mut() {
        if pm.chance(0.2) {
            p["backup"] = json!(true);
            features.push("backup path");
        }
    }
    let path_dead = |i: usize| dead_link[i] || late_down[i] || slow_link[i];
    let mut conns = vec![];
    let mut flows = vec![];
    let mut may_starve = vec![];
    let n_conn = 1 + r.below(2);
    for c in 0..n_conn {
        let k = 1 + r.below(n_links as u64) as usize;
        let ps: Vec<usize> = (0..k).collect();
        let mut conn = json!({
            "name": format!("mp{c}"),
            "paths": ps.iter().map(|i| format!("p{i}")).collect::<Vec<_>>(),
            "cc": pick_cc(r, &mut features),
            "initial_path": format!("p{}", ps[r.below(k as u64) as usize]),
            "opportunistic_retransmission": r.chance(0.7),
            "penalisation": r.chance(0.7),
        });
        pick_scheduler(rs, &mut conn, &mut features);
        if conn["scheduler"] == "upstream" {
            // Validation refuses them for the upstream scheduler (it has neither).
            conn["opportunistic_retransmission"] = json!(false);
            conn["penalisation"] = json!(false);
        }
        let path_names: Vec<String> = ps.iter().map(|i| format!("p{i}")).collect();
        let (pm_name, pm_options) = pick_pm(pm, &path_names, &mut features);
        conn["path_manager"] = json!(pm_name);
        if !pm_options.is_empty() {
            conn["path_manager_options"] = Value::Object(pm_options);
        }
        let y = r.next_f64();
        if y < 0.25 {
            conn["receive_buffer"] = json!(format!("{} B", 500 + r.below(4 * 1448 - 500)));
            features.push("receive buffer < 4 MSS");
        } else if y < 0.5 {
            conn["receive_buffer"] = json!(format!("{} KB", 10 + r.below(200)));
        }
        if r.chance(0.2) {
            conn["send_buffer"] = json!(format!("{} KB", 2 + r.below(50)));
            features.push("small send buffer");
        }
        if r.chance(0.3) {
            conn["app"] = json!({"kind": "bulk", "size": format!("{} KB", 1 + r.below(3000))});
            features.push("finite transfer");
        }
        if r.chance(0.15) {
            conn["read_rate"] = json!("2 Mbit/s");
            features.push("slow reader");
        }
        if ra.chance(0.25) {
            let mut app = json!({"kind": "stream", "bitrate": format!("{} kbit/s", 200 + ra.below(20_000)),
                                 "frame_rate": *pick(ra, &[10.0, 24.0, 29.97, 30.0, 60.0])});
            if ra.chance(0.3) {
                app["duration"] = json!(format!("{} ms", 1 + ra.below(5000)));
                features.push("bounded stream");
            }
            conn["app"] = app;
            features.push("stream");
        }
        if r.chance(0.2) {
            conn["start"] = json!(format!("{} ms", r.below(2000)));
        }
        conns.push(conn);
        // Dead if the initial path is dead (no MP_CAPABLE) or every path is dead.
        let init: usize = conns.last().unwrap()["initial_path"].as_str().unwrap()[1..].parse().unwrap();
        may_starve.push(path_dead(init) || ps.iter().all(|&i| path_dead(i)) || shared);
    }
    if r.chance(0.4) {
        let p = r.below(n_links as u64) as usize;
        flows.push(json!({"name": "bg", "path": format!("p{p}"), "cc": pick_cc(r, &mut features), "start": "500 ms"}));
        may_starve.push(path_dead(p) || shared);
        // A connection that opens on the background flow's path after it started meets a
        // full queue: its first flight can be dropped whole and the RTO backoff outlast
        // the run (the upstream stack writes whole 32 KiB data frags, so its first flight
        // is a full initial window even with a tiny send buffer).
        for (c, starve) in conns.iter().zip(may_starve.iter_mut()) {
            let start_ms: u64 = c["start"].as_str().map_or(0, |t| t.trim_end_matches(" ms").parse().unwrap_or(0));
            if c["initial_path"] == json!(format!("p{p}")) && start_ms >= 500 {
                *starve = true;
            }
        }
        features.push("background TCP");
    }
    let mut sc = json!({
        "run": {"duration": format!("{duration_s} s"), "seed": r.next_u64() % 1000, "sample_interval": "100 ms"},
        "links": links,
        "paths": paths,
        "connections": conns,
        "flows": flows,
    });
    if ra.chance(0.2) {
        sc["run"]["delay_samples"] = json!(true);
        features.push("delay samples");
    }
    if r.chance(0.3) {
        sc["tcp"] = json!({"recovery": "newreno"});
        features.push("newreno recovery");
    }
    if r.chance(0.25) {
        if sc.get("tcp").is_none() {
            sc["tcp"] = json!({});
        }
        sc["tcp"]["pacing"] = json!(true);
        features.push("pacing");
    }
    if r.chance(0.25) {
        if sc.get("tcp").is_none() {
            sc["tcp"] = json!({});
        }
        // The default (out_of_tree) is "linux"; cover the other one.
        sc["tcp"]["receive_buffer_accounting"] = json!("payload");
        features.push("payload buffer accounting");
    }
    if r.chance(0.15) {
        if sc.get("tcp").is_none() {
            sc["tcp"] = json!({});
        }
        sc["tcp"]["delayed_ack"] = json!(false);
        features.push("no delayed ack");
    }
    Case { scenario: sc, may_starve, features }
}

/// Any registered path manager, with each of its options drawn (or left at its
/// default) at random. A path-list option (PCDC's SP*) gets a non-empty random subset of
/// the connection's `paths`.
fn pick_pm(r: &mut Rng, paths: &[String], features: &mut Vec<&'static str>) -> (&'static str, serde_json::Map<String, Value>) {
    use mptcplab_core::options::OptKind;
    let reg = mptcplab_core::mptcp::pm::REGISTRY;
    let info = &reg[r.below(reg.len() as u64) as usize];
    features.push(info.name);
    let mut opts = serde_json::Map::new();
    for o in info.options {
        if r.chance(0.3) {
            continue;
        }
        let v = match o.kind {
            OptKind::Bool => json!(r.chance(0.5)),
            // Small values: a few subflows per path, not 64.
            OptKind::Int { min, max } => json!(min + r.below((max - min).min(5) as u64 + 1) as i64),
            OptKind::Choice(cs) => json!(*pick(r, cs)),
            OptKind::Paths => {
                let mut sub: Vec<&String> = paths.iter().filter(|_| r.chance(0.5)).collect();
                if sub.is_empty() {
                    sub.push(pick(r, paths));
                }
                if sub.len() < paths.len() {
                    features.push("path-manager path subset");
                }
                json!(sub)
            }
        };
        opts.insert(o.name.to_string(), v);
    }
    (info.name, opts)
}

/// Any registered congestion control, with its default options.
fn pick_cc(r: &mut Rng, features: &mut Vec<&'static str>) -> &'static str {
    let reg = mptcplab_core::cc::REGISTRY;
    let c = reg[r.below(reg.len() as u64) as usize].name;
    features.push(c);
    c
}

/// Any registered scheduler, with each boolean and choice option drawn at random (integer
/// options keep their defaults).
fn pick_scheduler(r: &mut Rng, conn: &mut Value, features: &mut Vec<&'static str>) {
    use mptcplab_core::options::OptKind;
    let reg = mptcplab_core::mptcp::scheduler::REGISTRY;
    let s = &reg[r.below(reg.len() as u64) as usize];
    features.push(s.name);
    conn["scheduler"] = json!(s.name);
    let mut opts = serde_json::Map::new();
    for o in s.options {
        match o.kind {
            OptKind::Bool => {
                opts.insert(o.name.into(), json!(r.chance(0.5)));
            }
            OptKind::Choice(cs) => {
                opts.insert(o.name.into(), json!(cs[r.below(cs.len() as u64) as usize]));
            }
            OptKind::Int { .. } | OptKind::Paths => {}
        }
    }
    if !opts.is_empty() {
        conn["scheduler_options"] = Value::Object(opts);
    }
}

#[test]
fn invariants_hold_on_250_random_scenarios() {
    let mut r = Rng::stream(2026, "property-test-generator");
    let mut rs = Rng::stream(2026, "property-test-schedulers");
    let mut r_pm = Rng::stream(2026, "property-test-generator/path-managers");
    let mut r_app = Rng::stream(2026, "property-test-generator/apps");
    let mut r_prof = Rng::stream(2026, "property-test-generator/profile");
    let mut coverage: BTreeMap<&str, u32> = BTreeMap::new();
    let cases = 250;
    let mut total_events = 0u64;
    for case_no in 0..cases {
        let mut case = gen_case(&mut r, &mut rs, &mut r_pm, &mut r_app);
        // The upstream stack (MPTCP retransmit timer, stale subflows, subflow send
        // buffers) under every scheduler and path manager.
        if r_prof.chance(0.3) {
            case.scenario["run"]["profile"] = json!("upstream");
            case.features.push("upstream profile");
        }
        for f in &case.features {
            *coverage.entry(f).or_default() += 1;
        }
        let text = case.scenario.to_string();
        let sc = Scenario::from_json(&text).unwrap_or_else(|e| panic!("case {case_no}: generator made a bad scenario: {e}\n{text}"));
        let mut sim = mptcplab_core::Simulator::new(sc.plan().unwrap_or_else(|e| panic!("case {case_no}: {e}\n{text}")), None, None, &[]).unwrap();
        let mut n = 0u64;
        let mut next_check = SimTime::ZERO;
        let end = sim.end;
        while sim.step(end) {
            n += 1;
            if n % CHECK_EVERY == 0 || sim.now >= next_check {
                if let Err(e) = sim.check_invariants() {
                    panic!("case {case_no} at {} (event {n}): {e}\n{text}", sim.now);
                }
                next_check = sim.now + SimTime::from_ms(100);
            }
        }
        sim.run();
        sim.check_invariants().unwrap_or_else(|e| panic!("case {case_no} at the end: {e}\n{text}"));
        total_events += n;
        for (i, row) in sim.summary().iter().enumerate() {
            let c = &sim.conns[i];
            assert!(c.rcv.read_total <= c.snd.written, "case {case_no}: {} read more than written", row.name);
            if !case.may_starve[i] {
                assert!(row.bytes_delivered > 0, "case {case_no}: {} delivered nothing\n{text}", row.name);
            }
            // A stream's frames pass their stages in order, one after the other.
            let frames = c.app.frames();
            for (k, f) in frames.iter().enumerate() {
                let stages = [Some(f.scheduled), f.enqueued, f.taken, f.acked];
                for w in stages.windows(2) {
                    if let (Some(a), Some(b)) = (w[0], w[1]) {
                        assert!(a <= b, "case {case_no}: {} frame {k} passes its stages out of order: {f:?}", row.name);
                    }
                    assert!(w[0].is_some() || w[1].is_none(), "case {case_no}: {} frame {k} skipped a stage: {f:?}", row.name);
                }
                assert!(f.delivered.is_none() || f.taken.is_some_and(|t| Some(t) <= f.delivered), "case {case_no}: frame {k} delivered before it was sent");
                if k > 0 {
                    let prev = &frames[k - 1];
                    assert!(f.end > prev.end && f.scheduled > prev.scheduled, "case {case_no}: frame {k} does not follow frame {}", k - 1);
                    if let Some(a) = f.acked {
                        assert!(prev.acked.is_some_and(|p| p <= a), "case {case_no}: frame {k} acknowledged before frame {}", k - 1);
                    }
                }
            }
        }
        // Delay samples: each DATA_ACKed segment once, in data-sequence order.
        let d = &sim.metrics.delay;
        for (i, c) in sim.conns.iter().enumerate() {
            let idx: Vec<usize> = (0..d.len()).filter(|&k| d.conn[k] == i as u32).collect();
            if !c.cfg.delay_samples {
                assert!(idx.is_empty(), "case {case_no}: samples of a connection that does not collect them");
                continue;
            }
            let mut next = 0u64;
            for &k in &idx {
                assert_eq!(d.dsn[k], next, "case {case_no}: conn {i} sample {k} leaves a gap or repeats\n{text}");
                next += d.len[k] as u64;
                assert!(d.t_over_ms[k] >= d.tau_max_ms[k] && d.zeta_ms[k] >= 0.0 && d.delay_ms[k] >= 0.0);
            }
            assert_eq!(next, c.snd.data_una, "case {case_no}: conn {i} samples do not cover the DATA_ACKed bytes\n{text}");
        }
    }
    println!("property test: {cases} scenarios, {total_events} events checked; coverage:");
    for (k, v) in &coverage {
        println!("  {k:28} {v:4} cases");
    }
    for sched in mptcplab_core::mptcp::scheduler::REGISTRY {
        assert!(coverage.get(sched.name).copied().unwrap_or(0) >= 5, "coverage of scheduler {:?} too low: {coverage:?}", sched.name);
    }
    let pms = mptcplab_core::mptcp::pm::REGISTRY.iter().map(|p| p.name);
    for must in ["upstream profile", "stream", "bounded stream", "delay samples", "link down/up", "100% loss", "receive buffer < 4 MSS", "ramp", "shared bottleneck", "backup path", "path-manager path subset"].into_iter().chain(pms) {
        assert!(coverage.get(must).copied().unwrap_or(0) >= 5, "coverage of {must:?} too low: {coverage:?}");
    }
}
