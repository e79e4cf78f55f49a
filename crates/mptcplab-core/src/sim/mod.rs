//! Event queue with virtual time and a deterministic tie-break.

use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What can happen. Small and `Copy`: the heap moves these around a lot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of link direction `link` reaches the far end. `epoch` guards against
    /// events made stale by a rate change or a link going down.
    LinkArrive { link: u32, epoch: u32 },
    /// Apply schedule entry `entry` of link direction `link`.
    LinkChange { link: u32, entry: u32 },
    /// A connection timer (`kind`) may have expired.
    Timer { conn: u32, sub: u16, kind: TimerKind },
    /// Connection (or background flow) starts.
    ConnStart { conn: u32 },
    /// Application read tick (read rate limited receivers).
    AppRead { conn: u32 },
    /// Metrics sample.
    Sample,
    /// A path manager's timer (`PathManager::poll_timeout`).
    PmTimer { conn: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    DelAck,
    Pace,
    /// The application's timer (a stream's next frame); `sub` is unused.
    App,
    /// The MPTCP-level retransmit timer of the upstream stack; `sub` is unused.
    MetaRtx,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: SimTime,
    seq: u64,
    ev: Event,
}
impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool { self.at == o.at && self.seq == o.seq }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> { Some(self.cmp(o)) }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (then the oldest) first.
    fn cmp(&self, o: &Self) -> Ordering { o.at.cmp(&self.at).then(o.seq.cmp(&self.seq)) }
}

/// Min-heap of events; equal times pop in insertion order (a monotone sequence number).
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self { Self::default() }
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, ev });
    }
    pub fn peek_time(&self) -> Option<SimTime> { self.heap.peek().map(|e| e.at) }
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.popped += 1;
        self.heap.pop().map(|e| (e.at, e.ev))
    }
    pub fn len(&self) -> usize { self.heap.len() }
    pub fn is_empty(&self) -> bool { self.heap.is_empty() }
    /// Events handled so far.
    pub fn handled(&self) -> u64 { self.popped }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), Event::Sample);
        q.schedule(SimTime(3), Event::ConnStart { conn: 1 });
        q.schedule(SimTime(3), Event::ConnStart { conn: 2 });
        q.schedule(SimTime(3), Event::ConnStart { conn: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order[0], (SimTime(3), Event::ConnStart { conn: 1 }));
        assert_eq!(order[1], (SimTime(3), Event::ConnStart { conn: 2 }));
        assert_eq!(order[2], (SimTime(3), Event::ConnStart { conn: 0 }));
        assert_eq!(order[3], (SimTime(5), Event::Sample));
    }
}
