//! Round-robin scheduler of the out-of-tree Linux MPTCP, `net/mptcp/mptcp_rr.c`
//! (v0.95, module version 0.89), reference schedulers.md §4.2.
//!
//! Each subflow has a `quota` of segments sent in the current round. New data goes to a
//! subflow that is part-way through its burst, else to a subflow with an empty quota;
//! when every subflow considered has used its burst, all quotas are reset.
//!
//! Departures, forced by the simulator's action model:
//! - Linux hands the segment to the chosen subflow even when its pacer or its own window
//!   holds it back; it waits in the subflow's write queue. Here new data then goes to
//!   the subflow's queue (`Action::Enqueue`) and leaves when the subflow's cwnd and pacer
//!   allow (the simulator does not hold queued data for the subflow's own window; the
//!   connection-level window was checked when it was queued). A reinjection that cannot
//!   leave now waits in the reinjection queue instead.
//! - Linux can hand over one TSO segment of up to `num_segments` MSS at once; here each
//!   call sends one MSS and the quota counts it, so a burst takes several calls but ends
//!   at the same quota.

use super::{Action, SchedView, Scheduler, Segment, SubflowView};
use crate::cc::CaState;

pub struct RoundRobin {
    /// `num_segments`: burst length per subflow.
    num_segments: u32,
    /// `cwnd_limited`: skip subflows without cwnd space while choosing.
    cwnd_limited: bool,
    /// Per subflow `rrsched_priv.quota` (an `unsigned char` in Linux; it never exceeds
    /// `num_segments` here because each call sends at most one MSS).
    quota: Vec<u32>,
}

impl RoundRobin {
    pub fn new(num_segments: u32, cwnd_limited: bool) -> Self { RoundRobin { num_segments: num_segments.max(1), cwnd_limited, quota: Vec::new() } }

    /// `mptcp_rr_is_available(sk, skb, zero_wnd_test = false, cwnd_test)`: established
    /// (not pre-established), not in Loss, and with `cwnd_test`: a free cwnd slot and
    /// `write_seq - snd_nxt <= (cwnd - in_flight)·mss` (strict `>` makes it unavailable;
    /// minRTT uses its own test). No subflow-window test on this path (Linux checks it
    /// only for zero-window probes).
    pub fn available(s: &SubflowView, cwnd_test: bool) -> bool {
        if !s.established || s.ca_state == CaState::Loss {
            return false;
        }
        if !cwnd_test {
            return true;
        }
        if s.in_flight >= s.cwnd {
            return false;
        }
        let space = (s.cwnd - s.in_flight) as u64 * s.mss as u64;
        s.queued_bytes <= space
    }

    /// `rr_get_available_subflow`: the last available subflow (list order) that has not
    /// carried the segment; if every available one has, the last of those (Linux then
    /// clears the segment's path mask).
    pub fn pick(subs: &[SubflowView], order: &[usize], path_mask: u64) -> Option<usize> {
        let (mut best, mut used) = (None, None);
        for &i in order {
            if !Self::available(&subs[i], true) {
                continue;
            }
            if path_mask & (1 << i) != 0 {
                used = Some(i);
            } else {
                best = Some(i);
            }
        }
        best.or(used)
    }

    /// The quota scan of `mptcp_rr_next_segment`: returns the chosen subflow. Resets the
    /// quotas when every subflow considered has used its burst.
    fn choose(&mut self, v: &SchedView) -> Option<usize> {
        let n = self.num_segments;
        let mut reset_done = false;
        loop {
            let (mut iter, mut full) = (0u32, 0u32);
            let mut choice = None;
            for &i in v.order {
                if !Self::available(&v.subflows[i], self.cwnd_limited) {
                    continue;
                }
                iter += 1;
                let q = self.quota[i];
                // A subflow part-way through its burst keeps the turn.
                if q > 0 && q < n {
                    return Some(i);
                }
                // An unused subflow: the last one in list order wins.
                if q == 0 {
                    choice = Some(i);
                }
                if q >= n {
                    full += 1;
                }
            }
            // Linux keeps `iter` and `full_subs` across its `goto retry`, so the reset
            // happens at most once per call.
            if iter > 0 && iter == full && !reset_done {
                for &i in v.order {
                    if Self::available(&v.subflows[i], self.cwnd_limited) {
                        self.quota[i] = 0;
                    }
                }
                reset_done = true;
                continue;
            }
            return choice;
        }
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &'static str { "roundrobin" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if self.quota.len() < v.subflows.len() {
            self.quota.resize(v.subflows.len(), 0);
        }
        // Reinjections first, on any available subflow (no fall-through to new data
        // when none is: `if (!*subsk) return NULL`).
        if let Some((_, _, mask)) = v.meta.reinject {
            if let Some(sub) = Self::pick(v.subflows, v.order, mask) {
                if v.subflows[sub].can_transmit_now() {
                    out.push(Action::Send { sub, seg: Segment::Reinject });
                }
            }
            return;
        }
        // The meta send queue's head exists (`tcp_send_head`), whether or not the peer's
        // window lets it go.
        if v.meta.unsent == 0 {
            return;
        }
        let Some(sub) = self.choose(v) else { return };
        // The chosen subflow must pass the cwnd test even when `cwnd_limited` is off.
        if !Self::available(&v.subflows[sub], true) {
            return;
        }
        if v.meta.new_data {
            if v.subflows[sub].can_transmit_now() {
                out.push(Action::Send { sub, seg: Segment::New });
            } else {
                out.push(Action::Enqueue { sub, bytes: v.meta.next_len });
            }
        }
        // `quota += 1` (one MSS). Linux counts the segment before `mptcp_write_xmit`
        // tests the connection-level window, so a segment that the peer's window then
        // holds back still uses a turn: each push while window-limited moves the
        // rotation on by one.
        self.quota[sub] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn run(s: &mut RoundRobin, subs: &[SubflowView], order: &[usize], meta: super::super::MetaView) -> Vec<Action> {
        let mut out = vec![];
        s.schedule(&view(subs, order, meta), &mut out);
        out
    }

    fn sent_on(out: &[Action]) -> Option<usize> {
        out.iter().find_map(|a| match a {
            Action::Send { sub, seg: Segment::New } => Some(*sub),
            _ => None,
        })
    }

    #[test]
    fn two_subflows_with_room_alternate_starting_with_the_last_in_list_order() {
        // schedulers.md §4.2 test: num_segments 1, unlimited cwnd.
        let subs = [sub(10, 1000, 0), sub(50, 1000, 0)];
        let mut s = RoundRobin::new(1, true);
        let seq: Vec<usize> = (0..6).map(|_| sent_on(&run(&mut s, &subs, &[0, 1], new_data(0, 1448))).unwrap()).collect();
        assert_eq!(seq, vec![1, 0, 1, 0, 1, 0]);
        // The kernel's list is newest first: with order [1, 0] subflow 0 starts.
        let mut s = RoundRobin::new(1, true);
        let seq: Vec<usize> = (0..4).map(|_| sent_on(&run(&mut s, &subs, &[1, 0], new_data(0, 1448))).unwrap()).collect();
        assert_eq!(seq, vec![0, 1, 0, 1]);
    }

    #[test]
    fn bursts_of_num_segments_stay_on_one_subflow() {
        let subs = [sub(10, 1000, 0), sub(50, 1000, 0)];
        let mut s = RoundRobin::new(3, true);
        let seq: Vec<usize> = (0..9).map(|_| sent_on(&run(&mut s, &subs, &[0, 1], new_data(0, 1448))).unwrap()).collect();
        assert_eq!(seq, vec![1, 1, 1, 0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn a_full_cwnd_is_skipped_when_cwnd_limited_and_waited_for_otherwise() {
        // Subflow 1 (last in list order, so first choice) has a full cwnd.
        let subs = [sub(10, 10, 0), sub(50, 10, 10)];
        let mut s = RoundRobin::new(1, true);
        assert_eq!(sent_on(&run(&mut s, &subs, &[0, 1], new_data(0, 1448))), Some(0));
        assert_eq!(sent_on(&run(&mut s, &subs, &[0, 1], new_data(0, 1448))), Some(0), "the only subflow considered gets every turn");
        let mut strict = RoundRobin::new(1, false);
        assert!(run(&mut strict, &subs, &[0, 1], new_data(0, 1448)).is_empty(), "strict rotation waits for subflow 1");
    }

    #[test]
    fn a_window_limited_push_still_uses_a_turn() {
        let subs = [sub(10, 1000, 0), sub(50, 1000, 0)];
        let mut s = RoundRobin::new(1, true);
        let blocked = super::super::MetaView { new_data: false, window_limited: true, unsent: 5000, ..new_data(0, 0) };
        assert!(run(&mut s, &subs, &[0, 1], blocked).is_empty());
        // Subflow 1's turn went by: subflow 0 sends next.
        assert_eq!(sent_on(&run(&mut s, &subs, &[0, 1], new_data(0, 1448))), Some(0));
    }

    #[test]
    fn a_paced_subflow_takes_its_turn_as_queued_data() {
        // Subflow 1's pacer holds it back: Linux still hands it the segment (it waits in
        // the subflow's queue), and the next segment goes to subflow 0.
        let subs = [sub(10, 1000, 0), SubflowView { pacing_ok: false, ..sub(50, 1000, 0) }];
        let mut s = RoundRobin::new(1, true);
        assert_eq!(run(&mut s, &subs, &[0, 1], new_data(0, 1448)), vec![Action::Enqueue { sub: 1, bytes: 1448 }]);
        assert_eq!(sent_on(&run(&mut s, &subs, &[0, 1], new_data(1448, 1448))), Some(0));
    }

    #[test]
    fn reinjections_prefer_the_last_subflow_that_has_not_carried_them() {
        let subs = [sub(10, 10, 0), sub(50, 10, 0), sub(30, 10, 0)];
        assert_eq!(RoundRobin::pick(&subs, &[0, 1, 2], 0b100), Some(1));
        assert_eq!(RoundRobin::pick(&subs, &[0, 1, 2], 0b111), Some(2), "all used: the last available");
        let mut s = RoundRobin::new(1, true);
        let meta = super::super::MetaView { reinject: Some((0, 1448, 0b010)), ..new_data(2896, 1448) };
        assert_eq!(run(&mut s, &subs, &[0, 1, 2], meta), vec![Action::Send { sub: 2, seg: Segment::Reinject }]);
    }
}
