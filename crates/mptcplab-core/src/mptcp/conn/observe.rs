//! What the engine collects from a connection besides its packets: delay samples (streams,
//! seed 002), the scheduler's executed decisions (traced flows), subflow status changes,
//! and MP_PRIO signals for packet captures. The connection records here; the engine polls
//! (through `Connection`'s `poll_*` methods) and never sees the rest of its state.

use super::*;

#[derive(Debug, Default)]
pub struct Observations {
    /// Record each executed scheduler action (the engine sets this for traced flows).
    pub trace_sched: bool,
    delay: Vec<DelaySample>,
    sched: Vec<SchedRecord>,
    status: Vec<StatusChange>,
    /// Some only while a packet capture is attached (`record_prio`).
    prio: Option<Vec<(usize, bool)>>,
}

impl Observations {
    pub(super) fn delay_sample(&mut self, s: DelaySample) { self.delay.push(s); }

    /// An executed scheduler action, when this flow is traced.
    #[inline]
    pub(super) fn sched_decision(&mut self, r: impl FnOnce() -> SchedRecord) {
        if self.trace_sched {
            self.sched.push(r());
        }
    }

    pub(super) fn status_change(&mut self, c: StatusChange) { self.status.push(c); }

    /// An MP_PRIO signal (subflow, backup), kept while a capture is attached.
    pub(super) fn prio_signal(&mut self, subflow: usize, backup: bool) {
        if let Some(v) = self.prio.as_mut() {
            v.push((subflow, backup));
        }
    }

    pub(super) fn record_prio(&mut self, on: bool) { self.prio = on.then(Vec::new); }

    #[inline]
    pub(super) fn has_delay(&self) -> bool { !self.delay.is_empty() }

    pub(super) fn poll_delay(&mut self) -> std::vec::Drain<'_, DelaySample> { self.delay.drain(..) }

    pub(super) fn poll_sched(&mut self) -> std::vec::Drain<'_, SchedRecord> { self.sched.drain(..) }

    #[inline]
    pub(super) fn has_prio(&self) -> bool { self.prio.as_ref().is_some_and(|v| !v.is_empty()) }

    pub(super) fn poll_prio(&mut self) -> Vec<(usize, bool)> { self.prio.as_mut().map(std::mem::take).unwrap_or_default() }

    #[inline]
    pub(super) fn has_status(&self) -> bool { !self.status.is_empty() }

    pub(super) fn poll_status(&mut self) -> std::vec::Drain<'_, StatusChange> { self.status.drain(..) }
}
