//! Redundant scheduler of the out-of-tree Linux MPTCP, `net/mptcp/mptcp_redundant.c`
//! (module version 0.90, Erbshaeusser and Froemmgen), reference schedulers.md §4.3.
//!
//! Every subflow walks the meta queue at its own pace: it remembers the last segment
//! scheduled on it (`redsched_priv.skb`) and next takes the segment after that one. A
//! segment already sent on another subflow goes out as a copy (`reinject = -1`: it
//! does not consume the connection-level window); the meta send head goes out as new
//! data. The search starts at `next_subflow`, the subflow after the last one used, so
//! the subflows take turns.
//!
//! Two kernel releases differ, chosen by the `kernel` option:
//! - v0.95 (Linux 4.19, the default): the meta write queue holds only unsent data, so a
//!   subflow without a remembered segment starts at the send head (it skips data in
//!   flight on other subflows), and nothing more is copied once everything has been
//!   sent once.
//! - v0.94 (Linux 4.14): the write queue also holds the sent, un-DATA_ACKed data, so such
//!   a subflow starts at the oldest un-DATA_ACKed segment, and copies go on until
//!   everything is DATA_ACKed. A subflow whose remembered segment is the last one in the
//!   queue gets nothing (`skb_queue_is_last`).

use super::{Action, MetaSeg, MinRtt, SchedView, Scheduler, Segment};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedundantKernel {
    V094,
    V095,
}

/// What a subflow would send next.
#[derive(Clone, Copy, Debug)]
enum Candidate {
    /// The meta send head (new data; `path_mask == 0`).
    Head,
    /// A segment already sent on some subflow.
    Copy(MetaSeg),
}

pub struct Redundant {
    kernel: RedundantKernel,
    /// Per subflow: the last segment scheduled on it, as (dsn, end) (`redsched_priv.skb`
    /// and `skb_end_seq`).
    last: Vec<Option<(u64, u64)>>,
    /// `redsched_cb.next_subflow`: where the next search starts (None: the list head).
    next_subflow: Option<usize>,
}

impl Redundant {
    pub fn new(kernel: RedundantKernel) -> Self { Redundant { kernel, last: Vec::new(), next_subflow: None } }

    /// `redsched_next_skb_from_queue`.
    fn candidate(&self, v: &SchedView, last: Option<(u64, u64)>, head_len: u64) -> Option<Candidate> {
        let m = &v.meta;
        let head = (m.unsent > 0).then_some(Candidate::Head);
        match self.kernel {
            RedundantKernel::V095 => {
                let Some((dsn, _)) = last else { return head };
                // The remembered segment was scheduled but is still unsent: again.
                if dsn >= m.next_dsn {
                    return head;
                }
                v.segs.next_after(dsn).map(|s| Candidate::Copy(*s)).or(head)
            }
            RedundantKernel::V094 => {
                let Some((dsn, _)) = last else { return v.segs.iter().next().map(|s| Candidate::Copy(*s)).or(head) };
                if dsn >= m.next_dsn {
                    // The remembered segment is the send head: nothing follows it when
                    // the unsent data is that one segment (`skb_queue_is_last`).
                    return if m.unsent > head_len { head } else { None };
                }
                match v.segs.next_after(dsn) {
                    Some(s) => Some(Candidate::Copy(*s)),
                    None => head,
                }
            }
        }
    }
}

impl Scheduler for Redundant {
    fn name(&self) -> &'static str { "redundant" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        let m = &v.meta;
        if self.last.len() < v.subflows.len() {
            self.last.resize(v.subflows.len(), None);
        }
        // Nothing to send: the reinjection queue and the meta write queue are empty.
        let write_queue_empty = match self.kernel {
            RedundantKernel::V095 => m.unsent == 0,
            RedundantKernel::V094 => m.unsent == 0 && v.segs.is_empty(),
        };
        if m.reinject.is_none() && write_queue_empty {
            return;
        }
        // Reinjections first, on the default scheduler's subflow; none: nothing at all.
        if let Some((_, _, mask)) = m.reinject {
            if let Ok(Some(sub)) = MinRtt::pick(v.subflows, v.order, mask) {
                out.push(Action::Send { sub, seg: Segment::Reinject });
            }
            return;
        }
        // Active subflows that could send at all (`redsched_get_active_valid_sks`).
        let active_valid = v.order.iter().filter(|&&i| !v.subflows[i].backup && v.subflows[i].established).count();
        let mss = v.order.iter().map(|&i| v.subflows[i].mss).find(|&x| x > 0).unwrap_or(1448) as u64;
        let head_len = if m.new_data { m.next_len as u64 } else { m.unsent.min(mss) };
        let n = v.order.len();
        // Start at `next_subflow`; wrap around to the list head (Linux's two loops).
        let start = self.next_subflow.and_then(|s| v.order.iter().position(|&i| i == s)).unwrap_or(0);
        for k in 0..n {
            let pos = (start + k) % n;
            let i = v.order[pos];
            // `redsched_correct_skb_pointers`: forget a segment that is DATA_ACKed.
            if self.last[i].is_some_and(|(_, end)| end <= m.data_una) {
                self.last[i] = None;
            }
            let Some(cand) = self.candidate(v, self.last[i], head_len) else { continue };
            let s = &v.subflows[i];
            // `redsched_use_subflow`: available; a copy only on an active subflow; new
            // data on a backup only when no active subflow can send.
            let usable = s.available()
                && match cand {
                    Candidate::Copy(_) => !s.backup,
                    Candidate::Head => !s.backup || active_valid == 0,
                };
            if !usable {
                continue;
            }
            self.last[i] = Some(match cand {
                Candidate::Head => (m.next_dsn, m.next_dsn + head_len),
                Candidate::Copy(seg) => (seg.dsn, seg.dsn + seg.len as u64),
            });
            self.next_subflow = v.order.get(pos + 1).copied();
            match cand {
                Candidate::Copy(seg) => out.push(Action::Send { sub: i, seg: Segment::Copy { dsn: seg.dsn, len: seg.len } }),
                // Linux remembers the head even when `mptcp_write_xmit` then finds that
                // the peer's window holds it back; it is scheduled again next time.
                Candidate::Head if m.new_data => out.push(Action::Send { sub: i, seg: Segment::New }),
                Candidate::Head => {}
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{MetaSegs, MetaView, SubflowView};
    use super::*;
    use crate::units::SimTime;

    /// A tiny meta sender: `total` segments of `len` bytes, sent as the scheduler says,
    /// never DATA_ACKed. Returns the segments each subflow carried, in order.
    fn drive(kernel: RedundantKernel, subs: &[SubflowView], order: &[usize], total: u64, len: u32) -> Vec<Vec<u64>> {
        let mut s = Redundant::new(kernel);
        let mut segs: Vec<MetaSeg> = vec![];
        let mut carried = vec![vec![]; subs.len()];
        let mut next = 0u64;
        for _ in 0..1000 {
            let unsent = (total * len as u64).saturating_sub(next);
            let meta = MetaView { new_data: unsent > 0, next_dsn: next, next_len: if unsent > 0 { len } else { 0 }, unsent, data_una: 0, ..MetaView::default() };
            let mut out = vec![];
            s.schedule(&SchedView { now: SimTime::from_secs(1), subflows: subs, order, meta, segs: MetaSegs { front: &segs, back: &[] }, mem: &[] }, &mut out);
            let Some(&Action::Send { sub, seg }) = out.first() else { break };
            match seg {
                Segment::New => {
                    segs.push(MetaSeg::new(next, len, 1 << sub));
                    carried[sub].push(next / len as u64);
                    next += len as u64;
                }
                Segment::Copy { dsn, .. } => {
                    let k = segs.iter().position(|x| x.dsn == dsn).unwrap();
                    segs[k].path_mask |= 1 << sub;
                    carried[sub].push(dsn / len as u64);
                }
                Segment::Reinject => unreachable!(),
            }
        }
        carried
    }

    #[test]
    fn v094_sends_every_segment_on_every_subflow() {
        // schedulers.md §4.3 test: 2 subflows with ample cwnd, 10 segments.
        let subs = [sub(10, 1000, 0), sub(50, 1000, 0)];
        let c = drive(RedundantKernel::V094, &subs, &[0, 1], 10, 1000);
        assert_eq!(c[0], (0..10).collect::<Vec<_>>());
        assert_eq!(c[1], (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn v095_starts_a_fresh_subflow_at_the_send_head_and_stops_when_all_is_sent() {
        // Subflow 0 sends segment 0; subflow 1, with nothing remembered, starts at the
        // send head (segment 1): it never carries segment 0. Once the last segment is
        // sent the meta write queue is empty and no copy follows.
        let subs = [sub(10, 1000, 0), sub(50, 1000, 0)];
        let c = drive(RedundantKernel::V095, &subs, &[0, 1], 10, 1000);
        assert_eq!(c[0], (0..9).collect::<Vec<_>>());
        assert_eq!(c[1], (1..10).collect::<Vec<_>>());
    }

    #[test]
    fn subflows_take_turns_and_a_full_cwnd_lets_the_other_go_ahead() {
        // Subflow 1 (next in turn after each send of subflow 0) has no cwnd room: the
        // search wraps around and subflow 0 sends everything.
        let subs = [sub(10, 1000, 0), sub(50, 10, 10)];
        let c = drive(RedundantKernel::V095, &subs, &[0, 1], 5, 1000);
        assert_eq!(c[0], (0..5).collect::<Vec<_>>());
        assert!(c[1].is_empty());
    }

    #[test]
    fn a_dataacked_segment_is_forgotten_and_backups_only_get_new_data_without_actives() {
        let mut s = Redundant::new(RedundantKernel::V095);
        let subs = [sub(10, 1000, 0), SubflowView { backup: true, ..sub(50, 1000, 0) }];
        let segs = [MetaSeg::new(0, 1000, 1), MetaSeg::new(1000, 1000, 1)];
        let meta = MetaView { new_data: true, next_dsn: 2000, next_len: 1000, unsent: 5000, data_una: 0, ..MetaView::default() };
        let v = SchedView { now: SimTime::from_secs(1), subflows: &subs, order: &[1, 0], meta, segs: MetaSegs { front: &segs, back: &[] }, mem: &[] };
        let mut out = vec![];
        s.schedule(&v, &mut out);
        // The backup (first in list order) is skipped for new data while subflow 0 works.
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::New }]);
        // Subflow 0 remembers dsn 2000..3000; once DATA_ACKed it starts at the head again.
        s.last[0] = Some((0, 1000));
        let meta = MetaView { data_una: 1000, ..meta };
        let v = SchedView { meta, order: &[0, 1], ..v };
        out.clear();
        s.next_subflow = None;
        s.schedule(&v, &mut out);
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::New }], "dsn 0 is DATA_ACKed: subflow 0 starts at the head, not at the copy of 1000");
    }
}
