//! The contract the Python binding relies on to install plug-ins (crates/mptcplab-py,
//! docs/plugins.md): before the run, a connection's scheduler is replaced with
//! `Simulator::set_scheduler` and its path manager by assigning `conns[i].pm`, both with
//! the `Dyn` variants; the core then calls them, and a stand-in that does nothing leaves
//! the connection without the subflows it did not ask for.

mod common;
use mptcplab_core::mptcp::pm::{AnyPm, PathManager, PmAction};
use mptcplab_core::mptcp::scheduler::{Action, AnyScheduler, SchedView, Scheduler, Segment};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;


/// Opens the other paths as backups and counts its calls.
struct OpenBackups(Arc<AtomicUsize>);

impl PathManager for OpenBackups {
    fn name(&self) -> &'static str { "test-open-backups" }
    fn on_established(&mut self, paths: usize, initial: usize, _backup: &[bool], out: &mut Vec<PmAction>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        out.extend((0..paths).filter(|&p| p != initial).map(|path| PmAction::OpenSubflow { path, backup: true }));
    }
}

/// Sends new data on the first established subflow with room; counts its calls.
struct First(Arc<AtomicUsize>);

impl Scheduler for First {
    fn name(&self) -> &'static str { "test-first" }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        if let Some(&sub) = v.order.iter().find(|&&i| v.subflows[i].available() && !v.subflows[i].backup) {
            if v.meta.new_data {
                out.push(Action::Send { sub, seg: Segment::New });
            }
        }
    }
}

#[test]
fn a_dynamic_path_manager_and_scheduler_installed_before_the_run_are_used() {
    let (pm_calls, sched_calls) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut s = common::build(&common::two_paths("3 s", "1 MB"), None);
    s.conns[0].pm = AnyPm::Dyn(Box::new(OpenBackups(pm_calls.clone())));
    s.set_scheduler(0, AnyScheduler::Dyn(Box::new(First(sched_calls.clone()))));
    s.run();
    s.check_invariants().unwrap();
    assert_eq!(pm_calls.load(Ordering::Relaxed), 1, "on_established once, for the initial subflow");
    assert!(sched_calls.load(Ordering::Relaxed) > 100);
    assert_eq!(s.summary()[0].bytes_delivered, 1_000_000);
    assert!(s.conns[0].subflows[1].backup, "the join asked for a backup subflow");
    assert_eq!(s.subflow_summary()[1].bytes_sent, 0, "and the scheduler never used it");
}

#[test]
fn a_dynamic_path_manager_that_opens_nothing_keeps_one_subflow() {
    struct Nothing;
    impl PathManager for Nothing {
        fn name(&self) -> &'static str { "test-nothing" }
        fn on_established(&mut self, _: usize, _: usize, _: &[bool], _: &mut Vec<PmAction>) {}
    }
    let mut s = common::build(&common::two_paths("3 s", "1 MB"), None);
    s.conns[0].pm = AnyPm::Dyn(Box::new(Nothing));
    s.run();
    assert_eq!(s.summary()[0].bytes_delivered, 1_000_000);
    let ss = s.subflow_summary();
    assert!(ss[0].bytes_sent > 0 && ss[1].bytes_sent == 0);
}
