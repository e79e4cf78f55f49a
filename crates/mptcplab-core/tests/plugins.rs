//! The scheduler trait admits what later schedulers need: pre-scheduling into per-subflow
//! queues (AR&P), several sends of the same data (redundant) and waiting (BLEST/ECF),
//! through the dynamic variant that plug-ins use.

mod common;
use mptcplab_core::mptcp::scheduler::{Action, AnyScheduler, SchedView, Scheduler, Segment};


/// Pre-schedules new data alternately into the subflows' queues, two segments ahead.
struct AlternateEnqueue {
    next: usize,
}

impl Scheduler for AlternateEnqueue {
    fn name(&self) -> &'static str { "test-enqueue" }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if !v.meta.new_data {
            return;
        }
        let n = v.subflows.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            let s = &v.subflows[i];
            if s.established && s.queued_bytes < 2 * s.mss as u64 {
                self.next = i + 1;
                out.push(Action::Enqueue { sub: i, bytes: s.mss });
                return;
            }
        }
    }
}

/// Sends every new segment on every established subflow with space (redundant).
struct Duplicate;

impl Scheduler for Duplicate {
    fn name(&self) -> &'static str { "test-duplicate" }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if !v.meta.new_data || !v.subflows.iter().all(|s| s.established && s.has_space()) {
            return;
        }
        out.push(Action::Send { sub: 0, seg: Segment::New });
    }
}

#[test]
fn a_plugin_can_pre_schedule_into_subflow_queues() {
    let sc = common::two_paths("5 s", "2 MB");
    let mut s = common::build(&sc, None);
    s.set_scheduler(0, AnyScheduler::Dyn(Box::new(AlternateEnqueue { next: 0 })));
    s.run();
    let sum = s.summary();
    assert_eq!(sum[0].bytes_delivered, 2_000_000);
    let ss = s.subflow_summary();
    // Alternating assignment: both subflows carry a similar share despite the RTT gap.
    let (a, b) = (ss[0].bytes_acked as f64, ss[1].bytes_acked as f64);
    assert!(a > 0.3 * (a + b) && b > 0.3 * (a + b), "{a} {b}");
    s.check_invariants().unwrap();
}

#[test]
fn a_plugin_that_waits_sends_nothing_and_copies_are_delivered_once() {
    // Duplicate sends new data only when both subflows have space; it waits otherwise.
    let sc = common::two_paths("5 s", "2 MB");
    let mut s = common::build(&sc, None);
    s.set_scheduler(0, AnyScheduler::Dyn(Box::new(Duplicate)));
    s.run();
    let sum = s.summary();
    assert_eq!(sum[0].bytes_delivered, 2_000_000);
    // Everything went on subflow 0 only.
    assert_eq!(s.subflow_summary()[1].bytes_sent, 0);
}

/// Redundant: every new segment goes on subflow 0 and a copy on subflow 1.
struct Redundant;

impl Scheduler for Redundant {
    fn name(&self) -> &'static str { "test-redundant" }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if v.meta.new_data && v.subflows.iter().all(|s| s.established && s.has_space()) {
            out.push(Action::Send { sub: 0, seg: Segment::New });
            out.push(Action::Send { sub: 1, seg: Segment::Copy { dsn: v.meta.next_dsn, len: v.meta.next_len } });
        }
    }
}

#[test]
fn redundant_copies_count_once_at_the_receiver() {
    // metrics.md §6.1: with every segment on both subflows, the bytes sent are about
    // twice the goodput bytes, and the application gets each byte once.
    let sc = common::two_paths("5 s", "2 MB");
    let mut s = common::build(&sc, None);
    s.set_scheduler(0, AnyScheduler::Dyn(Box::new(Redundant)));
    s.run();
    s.check_invariants().unwrap();
    let sum = s.summary();
    assert_eq!(sum[0].bytes_delivered, 2_000_000);
    let ss = s.subflow_summary();
    let (a, b) = (ss[0].bytes_sent - ss[0].bytes_retrans, ss[1].bytes_sent - ss[1].bytes_retrans);
    assert_eq!(a, b, "every new segment has its copy");
    assert!(a >= 2_000_000 && a < 2_100_000, "{a}");
    assert!(s.conns[0].rcv.duplicate_bytes > 1_000_000, "the copies arrive as duplicates");
}
