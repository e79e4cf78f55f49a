//! Event queue with virtual time and a deterministic tie-break.

use crate::units::SimTime;

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
    /// A subflow's delayed MP_JOIN (`run.join_jitter`).
    Join,
}

/// Ask the CPU to bring `x`'s cache lines in: a hint, with no effect on results. The
/// engine's state for thousands of connections does not fit in cache, and some of what
/// an event will touch is known a few events ahead (issue 14, docs/performance.md).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = x as *const T as *const i8;
        for off in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults and reads nothing into the
            // program (x86 PREFETCHT0); SSE is in every x86-64 baseline. The address is
            // within `*x`, a live object.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Give a queue's spare memory back once it holds a quarter of its capacity or less,
/// keeping twice its length (and at least `floor`). A queue grows to the largest window
/// it ever held and `VecDeque` never shrinks by itself: at 1 000 connections the
/// scoreboards and link rings held 3.5 times the entries in use, a third of the run's
/// peak memory (issue 14). Amortised O(1): after a shrink the queue must halve again, or
/// double, before its entries are copied again.
#[inline]
pub fn shrink_sparse<T>(q: &mut std::collections::VecDeque<T>, floor: usize) {
    if q.capacity() > floor && q.len() * 4 <= q.capacity() {
        shrink_now(q, floor);
    }
}

/// The rare part of `shrink_sparse`, out of line. Inlined, `shrink_to`'s copying code
/// made the hot paths that check (a link's pop, a cumulative ACK) slower: S3 mptcp
/// N=1000, PGO build, 5 paired rounds, median wall 11.6 s against 9.8 s without the
/// check, and 8.8 s with this split, for ~230 shrinks a simulated second.
#[cold]
#[inline(never)]
fn shrink_now<T>(q: &mut std::collections::VecDeque<T>, floor: usize) { q.shrink_to((q.len() * 2).max(floor)); }

/// Min-heap on packed keys, 4-ary, keys and events in separate arrays. Hand-written:
/// `BinaryHeap` with a two-field `Ord` cost about twice as much per pop, and there is one
/// pop per event. Four children per node halve the levels a pop sifts through (a k = 8
/// FatTree keeps ~300 link heads in flight: 4 levels, not 8), and the four keys compared
/// at each level sit side by side (64 bytes) instead of among the events (issue 16,
/// cachegrind: the binary heap was a third of the instructions per event there).
/// Keys are unique, so the pop order is that of any correct heap.
#[derive(Default)]
struct Heap {
    /// `(time << 64) | seq`: one integer comparison orders by time, then by insertion.
    keys: Vec<u128>,
    evs: Vec<Event>,
}

const ARITY: usize = 4;

impl Heap {
    #[inline]
    fn top_key(&self) -> Option<u128> { self.keys.first().copied() }

    fn len(&self) -> usize { self.keys.len() }

    fn push(&mut self, key: u128, ev: Event) {
        // Sift up.
        let mut i = self.keys.len();
        self.keys.push(key);
        self.evs.push(ev);
        while i > 0 {
            let p = (i - 1) / ARITY;
            if self.keys[p] <= key {
                break;
            }
            self.keys[i] = self.keys[p];
            self.evs[i] = self.evs[p];
            i = p;
        }
        self.keys[i] = key;
        self.evs[i] = ev;
    }

    #[inline]
    fn pop(&mut self) -> Option<(u128, Event)> {
        let last_k = self.keys.pop()?;
        let last_e = self.evs.pop()?;
        let n = self.keys.len();
        if n == 0 {
            return Some((last_k, last_e));
        }
        let top = (self.keys[0], self.evs[0]);
        // Sift the last entry down from the root.
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let kids = &self.keys[first..(first + ARITY).min(n)];
            let mut c = 0;
            for (j, k) in kids.iter().enumerate().skip(1) {
                if *k < kids[c] {
                    c = j;
                }
            }
            let c = first + c;
            if self.keys[c] >= last_k {
                break;
            }
            self.keys[i] = self.keys[c];
            self.evs[i] = self.evs[c];
            i = c;
        }
        self.keys[i] = last_k;
        self.evs[i] = last_e;
        Some(top)
    }
}

/// The pending link arrivals, one slot per link direction, in a winner tree: each inner
/// node holds the link with the smaller key of its two children, so the root's link has
/// the earliest arrival. A link direction has at most one current `LinkArrive` (its
/// head packet's), so a slot per link replaces a heap: an arrival pops the root and,
/// when the link holds another packet, re-keys the same slot, one walk from leaf to root
/// with one comparison per level and no entries moved (issue 16: at a k = 8 FatTree the
/// 4-ary heap's pop and push were a quarter of the run, perf). Unused slots hold `EMPTY`.
///
/// Keys live once, per link; a node holds only a link index (4 bytes, one store per
/// level). With the key in every node (20 bytes) a k = 8 FatTree's 1 024-leaf tree
/// filled 40 KiB of a 48 KiB L1, and the walk stored three arrays per level.
#[derive(Default)]
struct LinkTree {
    /// Leaves: a power of two, at least the largest link index + 1.
    width: usize,
    /// Per link: its key `(time, seq)` as two halves. Written as two 8-byte halves and
    /// read back as one 16-byte value, the root's key missed store forwarding on every
    /// pop (perf: a quarter of the event loop's samples sat on that load): they are
    /// read as halves.
    keys: Vec<[u64; 2]>,
    /// `2 * width` nodes: the root at 1, link `l`'s leaf at `width + l`; each holds the
    /// link with the smallest key below it.
    win: Vec<u32>,
    /// Per link: the epoch of its pending arrival.
    epochs: Vec<u32>,
    /// The link whose arrival was popped last, still in the tree: its handler usually
    /// re-keys it at once (the link's next head), which then costs one walk, not two.
    taken: Option<u32>,
    occupied: usize,
}

const EMPTY: u128 = u128::MAX;

impl LinkTree {
    #[inline(always)]
    fn key(&self, link: usize) -> u128 { (self.keys[link][0] as u128) << 64 | self.keys[link][1] as u128 }

    fn grow(&mut self, link: usize) {
        let width = (link + 1).next_power_of_two().max(self.width * 2).max(2);
        self.keys.resize(width, [u64::MAX; 2]);
        self.epochs.resize(width, 0);
        self.width = width;
        self.win = vec![0; 2 * width];
        for l in 0..width {
            self.win[width + l] = l as u32;
        }
        for i in (1..width).rev() {
            let (a, b) = (self.win[2 * i], self.win[2 * i + 1]);
            self.win[i] = if self.key(a as usize) <= self.key(b as usize) { a } else { b };
        }
    }

    /// Set link `link`'s key and recompute its ancestors: each holds the earlier of the
    /// node below it on the path and that node's sibling. The siblings are known from the
    /// leaf alone, so their loads do not wait on each other, and the choice is a
    /// conditional move, not a branch: the path's comparisons are unpredictable, and as
    /// branches they cost more than the 4-ary heap they replace (perf, k = 8 FatTree).
    /// The loop is 22 instructions a level (x86-64): one 128-bit comparison (compare,
    /// subtract with borrow), three `cmov`, one store. Written with `select_unpredictable`
    /// on a 128-bit comparison, LLVM made it a branch; on the comparison in two halves
    /// (setb, sete, and, or), 31 instructions with spills. Out of line: inlined into the
    /// event loop, it spilled its registers.
    #[inline(never)]
    fn set(&mut self, link: usize, key: u128) {
        let (mut t, mut q, mut w) = ((key >> 64) as u64, key as u64, link as u32);
        self.keys[link] = [t, q];
        // Indices masked by the (power-of-two) lengths, which changes none of them, so
        // that the loop carries no bounds checks.
        let (wmask, nmask) = (self.width - 1, 2 * self.width - 1);
        let (keys, win) = (&self.keys[..=wmask], &mut self.win[..=nmask]);
        let mut i = self.width + link;
        while i > 1 {
            let sl = win[(i ^ 1) & nmask];
            let [st, sq] = keys[sl as usize & wmask];
            // The blend by mask becomes `cmov` (see above).
            let m = (((st as u128) << 64 | sq as u128) < ((t as u128) << 64 | q as u128)) as u64;
            let m = m.wrapping_neg();
            t = (st & m) | (t & !m);
            q = (sq & m) | (q & !m);
            w = ((sl as u64 & m) | (w as u64 & !m)) as u32;
            i >>= 1;
            win[i & nmask] = w;
        }
    }

    /// Set the key of link `link`, whose slot is empty. Its ancestors can only go down to
    /// `key`: the walk stops at the first that is already earlier, which in a busy
    /// network is a level or two up, not the root.
    #[inline]
    fn fill(&mut self, link: usize, key: u128) {
        let (t, q) = ((key >> 64) as u64, key as u64);
        self.keys[link] = [t, q];
        let mut i = self.width + link;
        while i > 1 {
            i >>= 1;
            let [wt, wq] = self.keys[self.win[i] as usize];
            if (wt, wq) < (t, q) {
                break;
            }
            self.win[i] = link as u32;
        }
    }

    /// Finish the last pop: empty the taken slot unless it was re-keyed.
    #[inline]
    fn settle(&mut self) {
        if let Some(l) = self.taken.take() {
            self.set(l as usize, EMPTY);
            self.occupied -= 1;
        }
    }

    /// Put `link`'s arrival at `key`. Returns the one it displaces (a stale arrival: a
    /// change of the link's timing made a new one, `LinkDir::apply`), to pop elsewhere.
    #[inline]
    fn put(&mut self, link: u32, epoch: u32, key: u128) -> Option<(u128, Event)> {
        let l = link as usize;
        if self.taken == Some(link) {
            self.taken = None;
            self.epochs[l] = epoch;
            self.set(l, key);
            return None;
        }
        self.settle();
        if l >= self.width {
            self.grow(l);
        }
        let old = self.key(l);
        let displaced = (old != EMPTY).then(|| (old, Event::LinkArrive { link, epoch: self.epochs[l] }));
        self.epochs[l] = epoch;
        if displaced.is_none() {
            self.occupied += 1;
            self.fill(l, key);
        } else {
            self.set(l, key);
        }
        displaced
    }

    #[inline]
    fn top_key(&mut self) -> Option<u128> {
        self.settle();
        if self.width == 0 {
            return None;
        }
        Some(self.key(self.win[1] as usize)).filter(|&k| k != EMPTY)
    }

    /// Take the earliest arrival.
    #[inline]
    fn pop(&mut self) -> Option<(u128, Event)> {
        let k = self.top_key()?;
        let link = self.win[1];
        self.taken = Some(link);
        Some((k, Event::LinkArrive { link, epoch: self.epochs[link as usize] }))
    }

    fn len(&self) -> usize { self.occupied - usize::from(self.taken.is_some()) }
}

/// The events, earliest first; equal times pop in insertion order (a monotone sequence
/// number packed under the time). Keys are unique, so the pop order is fully determined.
///
/// Link arrivals and everything else, mostly connection timers, are kept apart: the
/// arrivals in a tree with a slot per link direction (`LinkTree`), the rest in a heap
/// (two or three timers per subflow: thousands at 1 000 connections). A pop takes the
/// smaller of the two tops. Each packet's hop is one arrival, and with a single heap it
/// sifted through every timer's level (issue 14: at 1 000 connections the heap cost
/// ~290 instructions per event). An arrival made stale by a change of its link (a new
/// one took its slot) moves to the heap and pops there at its time, doing nothing, as
/// it always did.
#[derive(Default)]
pub struct EventQueue {
    links: LinkTree,
    others: Heap,
    next_seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self { Self::default() }
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (at.ns() as u128) << 64 | seq as u128;
        if let Event::LinkArrive { link, epoch } = ev {
            if let Some((k, stale)) = self.links.put(link, epoch, key) {
                self.others.push(k, stale);
            }
        } else {
            self.others.push(key, ev);
        }
    }
    /// The earliest key of the two tops, and whether it is the link tree's.
    #[inline]
    fn top(&mut self) -> Option<(u128, bool)> {
        match (self.links.top_key(), self.others.top_key()) {
            (Some(a), Some(b)) => Some((a.min(b), a < b)),
            (Some(a), None) => Some((a, true)),
            (None, b) => b.map(|b| (b, false)),
        }
    }
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> { self.top().map(|(k, _)| SimTime((k >> 64) as u64)) }
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> { self.pop_until(SimTime(u64::MAX)) }

    /// Take the earliest event if it is due at or before `until` (one look at the two
    /// tops, where `peek_time` then `pop` looked twice).
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let (key, from_links) = self.top()?;
        if (key >> 64) as u64 > until.ns() {
            return None;
        }
        let (key, ev) = if from_links { self.links.pop() } else { self.others.pop() }?;
        self.popped += 1;
        Some((SimTime((key >> 64) as u64), ev))
    }
    pub fn len(&self) -> usize { self.links.len() + self.others.len() }
    pub fn is_empty(&self) -> bool { self.len() == 0 }
    /// Events handled so far.
    pub fn handled(&self) -> u64 { self.popped }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_queue_gives_memory_back_and_keeps_its_entries() {
        let mut q: std::collections::VecDeque<u32> = (0..1000).collect();
        let full = q.capacity();
        // Wrap the ring so the shrink must move both halves.
        for i in 0..900 {
            q.pop_front();
            q.push_back(1000 + i);
            shrink_sparse(&mut q, 32);
        }
        assert_eq!(q.capacity(), full, "full: nothing to give back");
        while q.len() > 200 {
            q.pop_front();
            shrink_sparse(&mut q, 32);
        }
        assert!(q.capacity() <= 2 * (full / 4) + 1 && q.capacity() >= 200, "at a quarter it keeps twice its length: {}", q.capacity());
        assert!(q.iter().copied().eq(1700..1900), "same entries, same order");
        while q.len() > 1 {
            q.pop_front();
            shrink_sparse(&mut q, 32);
        }
        assert_eq!(q.capacity(), 32, "never below the floor");
        let mut small: std::collections::VecDeque<u32> = std::collections::VecDeque::with_capacity(16);
        small.push_back(1);
        shrink_sparse(&mut small, 32);
        assert!(small.capacity() >= 16, "a queue at or under the floor is left alone");
    }

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

    #[test]
    fn pops_in_time_then_insertion_order() {
        // Against a sort of (time, insertion index), on a pseudo-random schedule with
        // many ties, link arrivals and other events mixed (the two heaps), and pops
        // interleaved with pushes.
        let ev = |n: u32, link: bool| if link { Event::LinkArrive { link: n, epoch: 0 } } else { Event::ConnStart { conn: n } };
        let mut q = EventQueue::new();
        let mut model: Vec<(u64, u32, bool)> = Vec::new();
        let (mut x, mut n) = (12345u64, 0u32);
        for round in 0..4000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = round / 3 + (x >> 60);
            let link = (x >> 40) & 1 == 1;
            q.schedule(SimTime(t), ev(n, link));
            model.push((t, n, link));
            n += 1;
            if x >> 63 == 1 {
                model.sort();
                let (t, c, link) = model.remove(0);
                assert_eq!(q.peek_time(), Some(SimTime(t)));
                assert_eq!(q.pop(), Some((SimTime(t), ev(c, link))));
            }
        }
        model.sort();
        for (t, c, link) in model {
            assert_eq!(q.pop(), Some((SimTime(t), ev(c, link))));
        }
        assert!(q.pop().is_none());
        assert!(q.peek_time().is_none());
    }

    #[test]
    fn a_link_holds_one_arrival_and_a_displaced_one_still_pops_at_its_time() {
        // The engine's use: each link direction's head arrival is re-keyed as it pops
        // (the next packet), and a change of the link's timing schedules a new arrival
        // with a new epoch while the old one is pending: both pop, in key order.
        let mut rng = crate::rng::Rng::stream(11, "links");
        let mut q = EventQueue::new();
        let mut model: Vec<(u64, u64, Event)> = Vec::new();
        let (mut seq, mut now) = (0u64, 0u64);
        let mut epoch = [0u32; 37];
        let mut pending = [false; 37];
        for _ in 0..30_000 {
            let r = rng.below(10);
            if r < 4 || model.is_empty() {
                // A new head on an idle link, or a re-timing of a busy one (new epoch).
                let l = rng.below(37) as usize;
                if pending[l] {
                    epoch[l] += 1;
                }
                pending[l] = true;
                let ev = Event::LinkArrive { link: l as u32, epoch: epoch[l] };
                let at = now + rng.below(40);
                q.schedule(SimTime(at), ev);
                model.push((at, seq, ev));
                seq += 1;
            } else if r < 5 {
                let ev = Event::Timer { conn: seq as u32, sub: 0, kind: TimerKind::Rto };
                let at = now + rng.below(60);
                q.schedule(SimTime(at), ev);
                model.push((at, seq, ev));
                seq += 1;
            } else {
                model.sort_by_key(|&(at, s, _)| (at, s));
                let (at, _, want) = model.remove(0);
                assert_eq!(q.peek_time(), Some(SimTime(at)));
                if at > 0 {
                    assert_eq!(q.pop_until(SimTime(at - 1)), None, "not due yet");
                }
                let (t, ev) = q.pop_until(SimTime(at)).unwrap();
                assert_eq!((t, ev), (SimTime(at), want));
                now = at;
                if let Event::LinkArrive { link, epoch: e } = ev {
                    let l = link as usize;
                    if e == epoch[l] {
                        pending[l] = false;
                        // The handler re-keys the link at once with its next head.
                        if rng.below(2) == 0 {
                            pending[l] = true;
                            let at = now + rng.below(40);
                            q.schedule(SimTime(at), ev);
                            model.push((at, seq, ev));
                            seq += 1;
                        }
                    }
                }
            }
            assert_eq!(q.len(), model.len());
        }
        model.sort_by_key(|&(at, s, _)| (at, s));
        for (at, _, want) in model {
            assert_eq!(q.pop(), Some((SimTime(at), want)));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }

    #[test]
    fn the_queue_pops_in_time_then_insertion_order_under_random_use() {
        // Against a sorted reference: pushes at random times (ties included) interleaved
        // with pops, link arrivals and timers in their two heaps.
        let mut rng = crate::rng::Rng::stream(7, "heap");
        let mut q = EventQueue::new();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for _ in 0..20_000 {
            if rng.below(3) > 0 || model.is_empty() {
                let at = now + rng.below(50);
                let ev = if rng.below(2) == 0 { Event::LinkArrive { link: seq as u32, epoch: 0 } } else { Event::AppRead { conn: seq as u32 } };
                q.schedule(SimTime(at), ev);
                model.push((at, seq));
                seq += 1;
            } else {
                model.sort();
                let (at, id) = model.remove(0);
                let (t, ev) = q.pop().unwrap();
                assert_eq!(t, SimTime(at));
                let got = match ev {
                    Event::LinkArrive { link, .. } => link as u64,
                    Event::AppRead { conn } => conn as u64,
                    _ => unreachable!(),
                };
                assert_eq!(got, id);
                now = at;
            }
        }
        assert_eq!(q.len(), model.len());
    }
}
