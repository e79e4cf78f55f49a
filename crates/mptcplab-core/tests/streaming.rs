//! Streaming application and the delay metrics of seed 002 (issue 5): frames and the
//! application queue, per-segment delay samples (Sec. IV), ground-truth drops per subflow.
//! Run with `--nocapture` to see the figures.
mod common;
use common::*;
use mptcplab_core::Simulator;

/// Disjoint paths `(rate, one-way delay, queue, loss)` and one MPTCP connection "mp"
/// (Reno, minRTT) over all of them with the given app table and extra connection keys.
fn scenario(paths: &[(&str, &str, &str, f64)], app: &str, extra: &str, duration: &str) -> mptcplab_core::Scenario {
    let mut t = format!("[run]\nduration = \"{duration}\"\n");
    for (i, (rate, delay, queue, loss)) in paths.iter().enumerate() {
        t += &format!("[[links]]\nname = \"l{i}\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"{queue}\"\nloss = {loss}\n");
        t += &format!("[[paths]]\nname = \"p{i}\"\nlinks = [\"l{i}\"]\n");
    }
    let names: Vec<String> = (0..paths.len()).map(|i| format!("\"p{i}\"")).collect();
    t += &format!("[[connections]]\nname = \"mp\"\npaths = [{}]\ncc = \"reno\"\n{extra}\napp = {app}\n", names.join(", "));
    scenario_toml(&t)
}

fn run(sc: &mptcplab_core::Scenario) -> Simulator {
    let mut s = build(sc, None);
    s.run();
    s.check_invariants().unwrap();
    s
}

fn mean(v: &[f64]) -> f64 { v.iter().sum::<f64>() / v.len() as f64 }
fn max(v: &[f64]) -> f64 { v.iter().cloned().fold(f64::NEG_INFINITY, f64::max) }

const FAST: (&str, &str, &str, f64) = ("20 Mbit/s", "10 ms", "100 pkt", 0.0);
const STREAM: &str = r#"{ kind = "stream" }"#;

#[test]
fn a_stream_below_capacity_delivers_every_frame_at_its_bitrate() {
    // 4.5 Mbit/s (the default) for 4 s over a 20 Mbit/s path, run 5 s.
    let s = run(&scenario(&[FAST], r#"{ kind = "stream", duration = "4 s" }"#, "", "5 s"));
    let f = s.frames();
    assert_eq!(f.frame.len(), 120, "30 frame/s for 4 s");
    assert!(f.size_bytes.iter().all(|&z| z == 18_750), "4.5 Mbit/s / 30 = 18 750 B");
    let c = &s.conns[0];
    assert_eq!(c.rcv.read_total, 120 * 18_750, "every byte delivered");
    assert!(c.completed_at.is_some(), "a bounded stream completes");
    let ack: Vec<f64> = (0..120).map(|k| (f.acked_s[k] - f.scheduled_s[k]) * 1e3).collect();
    let wait: Vec<f64> = (0..120).map(|k| (f.enqueued_s[k] - f.scheduled_s[k]) * 1e3).collect();
    println!("frames: DATA_ACK of the last byte {:.1} ms on average, {:.1} ms at most", mean(&ack), max(&ack));
    assert!(wait.iter().all(|&w| w == 0.0), "a 4 MiB send buffer never holds a frame back");
    // One RTT (20 ms) + serialisation of 13 segments at 20 Mbit/s (8 ms) + delayed ACK (≤ 40 ms).
    assert!(ack.iter().all(|&a| (20.0..=80.0).contains(&a)), "{ack:?}");
    let first = f.scheduled_s[0];
    assert!((f.scheduled_s[30] - first - 1.0).abs() < 1e-9, "frame 30 is one second after frame 0");
}

#[test]
fn frames_wait_in_order_in_the_application_queue_while_the_send_buffer_is_full() {
    // A 10 KB send buffer cannot hold one 18.75 KB frame: every frame's last byte waits.
    let s = run(&scenario(&[FAST], STREAM, "send_buffer = \"10 KB\"", "3 s"));
    let f = s.frames();
    let n = f.frame.len();
    let wait: Vec<f64> = (0..n).filter(|&k| f.enqueued_s[k].is_finite()).map(|k| (f.enqueued_s[k] - f.scheduled_s[k]) * 1e3).collect();
    println!("app-queue wait of the last byte: mean {:.1} ms, max {:.1} ms over {} frames", mean(&wait), max(&wait), wait.len());
    assert!(wait.len() > 60 && wait.iter().all(|&w| w > 0.0), "{wait:?}");
    for k in 1..n {
        // In order: a frame enters the buffer, is taken and acknowledged after the one before.
        for col in [&f.enqueued_s, &f.taken_s, &f.acked_s] {
            if col[k].is_finite() {
                assert!(col[k] >= col[k - 1], "frame {k} overtook frame {}", k - 1);
            }
        }
        assert!(f.enqueued_s[k].is_nan() || f.enqueued_s[k] >= f.scheduled_s[k]);
    }
    assert!(s.conns[0].snd.written - s.conns[0].snd.data_una <= 10_000);
}

#[test]
fn a_stream_faster_than_its_path_falls_behind_and_its_frames_get_later() {
    let slow = ("2 Mbit/s", "10 ms", "50 pkt", 0.0);
    let s = run(&scenario(&[slow], STREAM, "", "10 s"));
    let f = s.frames();
    let ack = |k: usize| (f.acked_s[k] - f.scheduled_s[k]) * 1e3;
    let acked: Vec<usize> = (0..f.frame.len()).filter(|&k| f.acked_s[k].is_finite()).collect();
    let (early, late) = (ack(acked[5]), ack(*acked.last().unwrap()));
    println!("4.5 Mbit/s over 2 Mbit/s: frame {} acknowledged {early:.0} ms late, frame {} {late:.0} ms late", acked[5], acked.last().unwrap());
    assert!(late > early + 2000.0, "lateness must grow: {early} -> {late}");
    assert!(acked.len() < f.frame.len() / 2 + 10, "about 2/4.5 of the frames make it");
    assert!(goodput(&s, 0) < 2.0);
}

#[test]
fn every_acknowledged_segment_is_one_delay_sample_in_data_sequence_order() {
    let s = run(&scenario(&[FAST, ("10 Mbit/s", "30 ms", "100 pkt", 0.01)], STREAM, "", "5 s"));
    let d = &s.metrics.delay;
    assert!(d.len() > 1000);
    let mut next = 0u64;
    for k in 0..d.len() {
        assert_eq!(d.dsn[k], next, "sample {k}: a gap or a repeat");
        next += d.len[k] as u64;
        assert!(d.time_s[k] >= d.taken_s[k]);
        assert!(d.subflow[k] == 0 || d.subflow[k] == 1, "the carrying subflow is known");
    }
    assert_eq!(next, s.conns[0].snd.data_una, "samples cover exactly the DATA_ACKed bytes");
}

#[test]
fn on_one_lossless_path_the_model_has_no_hol_blocking_and_the_measured_delay_is_at_least_one_rtt() {
    let s = run(&scenario(&[FAST], STREAM, "", "5 s"));
    let d = &s.metrics.delay;
    for k in 0..d.len() {
        assert_eq!(d.theta_ms[k], 0.0, "no waiting at the sender without loss");
        assert_eq!(d.zeta_ms[k], 0.0);
        assert_eq!(d.t_over_ms[k], d.tau_ms[k], "T_over is the path's SRTT");
        assert!(d.delay_ms[k] >= 20.0, "sample {k}: {} ms < the 20 ms base RTT", d.delay_ms[k]);
    }
    println!("one path: measured {:.1} ms on average, model {:.1} ms", mean(&d.delay_ms), mean(&d.t_over_ms));
}

#[test]
fn a_loss_on_the_fast_path_shows_as_sender_side_waiting_and_hol_blocking() {
    let lossy_fast = ("20 Mbit/s", "10 ms", "100 pkt", 0.02);
    let s = run(&scenario(&[lossy_fast, ("20 Mbit/s", "40 ms", "100 pkt", 0.0)], r#"{ kind = "stream", bitrate = "12 Mbit/s" }"#, "", "10 s"));
    let d = &s.metrics.delay;
    let waited = (0..d.len()).filter(|&k| d.theta_ms[k] > 0.0).count();
    let hol = (0..d.len()).filter(|&k| d.zeta_ms[k] > 0.0).count();
    let hol_measured = (0..d.len()).filter(|&k| d.zeta_measured_ms[k] > 0.0).count();
    println!(
        "lossy fast path: {} samples, θ > 0 in {waited}, ζ > 0 in {hol} (model) and {hol_measured} (measured); υ model {:.1}/{:.1} ms, measured {:.1}/{:.1} ms (av/max)",
        d.len(), mean(&d.t_over_ms), max(&d.t_over_ms), mean(&d.delay_ms), max(&d.delay_ms)
    );
    assert!(waited > 10 && hol > 0 && hol_measured > 0);
    for k in 0..d.len() {
        // θ is a retransmission's (or reinjection's) sending time after the MPTCP level took the data.
        assert!(d.theta_ms[k] == 0.0 || d.theta_ms[k] >= 1.0);
        assert!(d.t_over_ms[k] >= d.tau_max_ms[k] && (d.zeta_ms[k] - (d.t_over_ms[k] - d.tau_max_ms[k])).abs() < 1e-9);
    }
}

#[test]
fn with_the_slow_path_idle_the_model_overstates_the_measured_protocol_delay() {
    // minRTT keeps a 4.5 Mbit/s stream on the 20 ms path; the 80 ms path carries nothing,
    // yet Eq. 2 takes its SRTT as the protocol delay (docs/streaming.md).
    let s = run(&scenario(&[FAST, ("20 Mbit/s", "40 ms", "100 pkt", 0.0)], STREAM, "", "5 s"));
    let d = &s.metrics.delay;
    assert_eq!(s.conns[0].subflows[1].tx.stats.segs_sent, 0, "the slow path stays idle");
    let (model, measured) = (mean(&d.t_over_ms), mean(&d.delay_ms));
    println!("idle slow path: model υ_av {model:.1} ms, measured {measured:.1} ms");
    assert!(model >= 70.0 && measured < 40.0, "the model counts the idle path's 80 ms SRTT");
}

#[test]
fn bulk_runs_collect_no_delay_samples_unless_asked_and_collecting_changes_nothing_else() {
    let paths = [FAST, ("10 Mbit/s", "30 ms", "50 pkt", 0.005)];
    let bulk = run(&scenario(&paths, r#"{ kind = "bulk", size = "5 MB" }"#, "", "5 s"));
    assert!(bulk.metrics.delay.is_empty());
    assert!(bulk.frames().frame.is_empty());
    let mut sc = scenario(&paths, r#"{ kind = "bulk", size = "5 MB" }"#, "", "5 s");
    sc.run.delay_samples = Some(true);
    let asked = run(&sc);
    assert!(asked.metrics.delay.len() > 3000);
    let key = |s: &Simulator| format!("{:?} {:?} {:?}", s.summary(), s.stats(), s.metrics.subflows.bytes_sent);
    assert_eq!(key(&bulk), key(&asked), "collecting samples must not perturb the run");
}

#[test]
fn the_same_stream_and_seed_give_bit_identical_samples_and_frames() {
    let sc = scenario(&[("10 Mbit/s", "10 ms", "30 pkt", 0.01), ("8 Mbit/s", "25 ms", "30 pkt", 0.01)], r#"{ kind = "stream", bitrate = "9 Mbit/s" }"#, "", "5 s");
    let dump = |s: &Simulator| {
        let d = &s.metrics.delay;
        let f = s.frames();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        format!("{:?}{:?}{:?}{:?}{:?}{:?}", bits(&d.time_s), bits(&d.delay_ms), bits(&d.t_over_ms), d.subflow, bits(&f.acked_s), bits(&f.delivered_s))
    };
    let (a, b) = (run(&sc), run(&sc));
    assert_eq!(dump(&a), dump(&b));
    let mut other = build(&sc, Some(2));
    other.run();
    assert_ne!(dump(&a), dump(&other), "another seed draws other losses");
}

#[test]
fn network_drops_per_subflow_add_up_to_the_link_counters_by_cause() {
    // Loss on the data direction only, and a short queue that overflows under bulk Reno.
    let s = run(&scenario(&[("10 Mbit/s", "20 ms", "20 pkt", 0.01)], r#"{ kind = "bulk" }"#, "", "10 s"));
    let sub = &s.subflow_summary()[0];
    let fwd = &s.links[0].stats;
    println!("drops: queue {} loss {} (link {} / {}), retransmitted {} of {} segments", sub.drops_queue, sub.drops_loss, fwd.dropped_queue, fwd.dropped_loss, sub.segs_retrans, sub.segs_sent);
    assert!(sub.drops_queue > 0 && sub.drops_loss > 0);
    // The forward direction carries only this subflow's data (and its SYN).
    assert_eq!(sub.drops_loss, fwd.dropped_loss);
    assert_eq!(sub.drops_queue, fwd.dropped_queue);
    assert_eq!(s.links[1].stats.dropped(), 0, "no drops on the ACK direction");
    // The sender's view counts the same losses, plus any spurious retransmission.
    assert!(sub.segs_retrans >= sub.drops_queue + sub.drops_loss - 2);
}
