//! The upstream Linux 6.x default MPTCP scheduler (`net/mptcp/sched.c`
//! `mptcp_sched_default_get_send` → `net/mptcp/protocol.c` `mptcp_subflow_get_send`,
//! pushed by `__mptcp_push_pending` / `__subflow_push_pending`).
//!
//! Subflow choice (`mptcp_subflow_get_send`), walking the subflows oldest first:
//! - skip a subflow that is not active (`mptcp_subflow_active`: MP_JOIN not complete,
//!   not ESTABLISHED, or stale);
//! - `pace` = the subflow's running average pacing rate `avg_pacing_rate`; if 0, it is
//!   initialised from `sk_pacing_rate`; if that is 0 too, the subflow is skipped (it
//!   still counts as an active non-backup subflow);
//! - linger time = `(sk_wmem_queued << 32) / pace`; the smallest wins, separately among
//!   non-backup and backup subflows (strict `<`: the first wins ties);
//! - backup subflows only when no non-backup subflow is active;
//! - nothing is sent when the chosen subflow's send buffer is full
//!   (`!sk_stream_memory_free`), even if another subflow has room.
//!
//! No cwnd test: data goes into the subflow's send queue and leaves as its cwnd allows.
//! No opportunistic retransmission, no penalisation (out-of-tree v0.9x features).
//!
//! Burst: `burst = min(MPTCP_SEND_BURST_SIZE, wnd_end − snd_nxt)`; the chosen subflow's
//! `avg_pacing_rate = (avg · wmem + sk_pacing_rate · burst) / (burst + wmem)`; then
//! `__subflow_push_pending` hands it the rest of the current data frag and further whole
//! frags until `snd_burst ≤ 0` or the subflow's send buffer is full (both tested only
//! between frags), so one decision moves 64–96 KB. The connection carries that out as
//! `Action::Push`.

use super::{Action, SchedView, Scheduler, SubflowView};
#[cfg(test)]
use crate::tcp::sender::pacing_rate_formula;
use crate::mptcp::upstream::{dfrag_end, wmem_queued, DFRAG_DATA_BYTES, SEND_BURST_BYTES};

/// `sk_pacing_rate` in bytes/s: a pacing controller's own rate (BBR), else the value the
/// subflow last stored (`SubflowTx::update_pacing_rate`, Linux `tcp_update_pacing_rate`
/// at the end of each ACK's `tcp_cong_control`). The stored value, not one recomputed
/// from the cwnd now: a subflow restarted after idle (`tcp_cwnd_restart`, which runs when
/// the first burst is queued, `tcp_skb_entail`) keeps its old rate until an ACK comes,
/// so the next decisions still see it as fast.
pub fn sk_pacing_rate(s: &SubflowView) -> u64 {
    if !s.cc_mode.is_empty() && s.pacing_rate_bps > 0.0 {
        return (s.pacing_rate_bps / 8.0) as u64;
    }
    s.sk_pacing_rate
}

/// `(sk_wmem_queued << 32) / pace`.
pub fn linger_time(wmem: u64, pace: u64) -> u64 { (((wmem as u128) << 32) / pace.max(1) as u128).min(u64::MAX as u128) as u64 }

/// The upstream default scheduler. State: each subflow's `avg_pacing_rate` (bytes/s).
#[derive(Default)]
pub struct Upstream {
    avg_pacing_rate: Vec<u64>,
}

impl Upstream {
    pub fn new() -> Self { Upstream::default() }

    /// The running average pacing rate of subflow `i` (0 until it is first considered).
    pub fn avg_pacing_rate(&self, i: usize) -> u64 { self.avg_pacing_rate.get(i).copied().unwrap_or(0) }

    /// `mptcp_subflow_get_send` up to the memory test: the subflow with the smallest
    /// linger time, backups only when no non-backup subflow is active; None when the
    /// choice has a full send buffer.
    pub fn get_send(&mut self, v: &SchedView) -> Option<usize> {
        if self.avg_pacing_rate.len() < v.subflows.len() {
            self.avg_pacing_rate.resize(v.subflows.len(), 0);
        }
        // (subflow, linger time) for non-backup [0] and backup [1] subflows.
        let mut best: [(Option<usize>, u64); 2] = [(None, u64::MAX); 2];
        let mut nr_active = 0u32;
        for &i in v.order {
            let s = &v.subflows[i];
            if !s.established {
                continue;
            }
            let b = s.backup as usize;
            nr_active += (!s.backup) as u32;
            let mut pace = self.avg_pacing_rate[i];
            if pace == 0 {
                pace = sk_pacing_rate(s);
                self.avg_pacing_rate[i] = pace;
                if pace == 0 {
                    continue;
                }
            }
            let linger = linger_time(v.mem(i).wmem_queued, pace);
            if best[b].0.is_none() || linger < best[b].1 {
                best[b] = (Some(i), linger);
            }
        }
        let pick = if nr_active == 0 { best[1].0 } else { best[0].0 };
        let i = pick?;
        let m = v.mem(i);
        (m.wmem_queued < m.sndbuf).then_some(i)
    }

    /// The burst update of `mptcp_subflow_get_send` and the amount
    /// `__subflow_push_pending` moves to subflow `i`, starting at data sequence `head`.
    pub fn push_bytes(&mut self, v: &SchedView, i: usize, head: u64) -> u64 {
        let s = &v.subflows[i];
        let m = v.mem(i);
        let burst = SEND_BURST_BYTES.min(v.meta.window_free);
        if burst > 0 {
            let avg = self.avg_pacing_rate[i] as u128;
            let wmem = m.wmem_queued as u128;
            let now_rate = sk_pacing_rate(s) as u128;
            self.avg_pacing_rate[i] = ((avg * wmem + now_rate * burst as u128) / (burst as u128 + wmem)) as u64;
        }
        // The rest of the head frag, then whole frags while the burst lasts and the
        // subflow's send buffer has room (tested after each frag).
        let mss = s.mss.max(1) as u64;
        let mut pos = head;
        let mut snd_burst = burst as i64;
        let mut wmem = m.wmem_queued;
        loop {
            let end = dfrag_end(pos);
            let chunk = end - pos;
            pos = end;
            snd_burst -= chunk as i64;
            wmem += wmem_queued(chunk, chunk.div_ceil(mss));
            if snd_burst <= 0 || wmem >= m.sndbuf || pos - head > 64 * DFRAG_DATA_BYTES {
                break;
            }
        }
        pos - head
    }
}

impl Scheduler for Upstream {
    fn name(&self) -> &'static str { "upstream" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        // The send head: data rewound for retransmission (`__mptcp_retransmit_pending_data`
        // moves `first_pending` back to the oldest un-DATA_ACKed frag) or new data.
        let head = match v.meta.reinject {
            Some((dsn, _, _)) => dsn,
            None if v.meta.new_data => v.meta.next_dsn,
            None => return,
        };
        let Some(i) = self.get_send(v) else { return };
        let bytes = self.push_bytes(v, i, head);
        out.push(Action::Push { sub: i, bytes });
    }

    fn needs_rates(&self) -> bool { true }
    fn queues_data(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::new_data;
    use super::super::{MetaSegs, MetaView, SubflowMem};
    use super::*;
    use crate::mptcp::upstream::{sndbuf_expand, TCP_WMEM};
    use crate::units::SimTime;

    /// An active subflow (SRTT, cwnd, packets out) holding `wmem` bytes of truesize in a
    /// 4 MiB send buffer.
    fn sub(srtt_ms: u64, cwnd: u32, packets_out: u32, wmem: u64) -> (SubflowView, SubflowMem) {
        let v = SubflowView { established: true, srtt: SimTime::from_ms(srtt_ms), cwnd, ssthresh: crate::cc::INFINITE_SSTHRESH, in_flight: packets_out, packets_out, ..SubflowView::default() };
        (stored(v), SubflowMem { wmem_queued: wmem, sndbuf: TCP_WMEM[2] })
    }

    /// `v` with the pacing rate an ACK would have stored for its cwnd, packets out and SRTT.
    fn stored(v: SubflowView) -> SubflowView { SubflowView { sk_pacing_rate: pacing_rate_formula(v.mss, v.cwnd, v.ssthresh, v.packets_out, v.srtt), ..v } }

    /// Views, send-buffer states and a walk order for `SchedView`.
    struct Fixture {
        views: Vec<SubflowView>,
        mem: Vec<SubflowMem>,
        order: Vec<usize>,
    }

    impl Fixture {
        fn new(subs: &[(SubflowView, SubflowMem)], order: &[usize]) -> Fixture { Fixture { views: subs.iter().map(|s| s.0).collect(), mem: subs.iter().map(|s| s.1).collect(), order: order.to_vec() } }
        fn view(&self, meta: MetaView) -> SchedView<'_> { SchedView { now: SimTime::from_secs(1), subflows: &self.views, order: &self.order, meta, segs: MetaSegs::default(), mem: &self.mem } }
    }

    fn pick(subs: &[(SubflowView, SubflowMem)], order: &[usize]) -> Option<usize> { Upstream::new().get_send(&Fixture::new(subs, order).view(new_data(0, 1448))) }

    #[test]
    fn pacing_rate_is_linux_default_rate_with_its_slow_start_ratio() {
        // tcp.md test vector 11: cwnd 10, mss 1448, SRTT 100 ms, in CA: 1.2 x 144 800 B/s.
        let ca = stored(SubflowView { ssthresh: 10, ..sub(100, 10, 0, 0).0 });
        assert_eq!(sk_pacing_rate(&ca), 173_760);
        // Early slow start (cwnd < ssthresh / 2): 200 %.
        assert_eq!(sk_pacing_rate(&sub(100, 10, 0, 0).0), 289_600);
        // max(cwnd, packets_out).
        assert_eq!(sk_pacing_rate(&stored(SubflowView { ssthresh: 10, ..sub(100, 10, 20, 0).0 })), 347_520);
        // The stored value, not one from the cwnd now: a cwnd cut without an ACK (restart
        // after idle) leaves the rate an ACK stored.
        let restarted = SubflowView { cwnd: 5, ..ca };
        assert_eq!(sk_pacing_rate(&restarted), 173_760);
        // BBR: its own rate, bit/s to bytes/s.
        let bbr = SubflowView { cc_mode: "probe_bw", pacing_rate_bps: 8e6, ..sub(100, 10, 0, 0).0 };
        assert_eq!(sk_pacing_rate(&bbr), 1_000_000);
    }

    #[test]
    fn the_subflow_with_the_shortest_linger_time_wins_not_the_lowest_rtt() {
        // Same cwnd: A (10 ms) paces 5x faster than B (50 ms). Equal queues -> A.
        let (a, b) = (sub(10, 10, 0, 20_000), sub(50, 10, 0, 20_000));
        assert_eq!(pick(&[a, b], &[0, 1]), Some(0));
        // A holds 6x B's bytes: linger 6/5 of B's -> B, although its RTT is 5x A's.
        assert_eq!(pick(&[sub(10, 10, 0, 120_000), b], &[0, 1]), Some(1));
        // A holds 4x: still the shorter linger -> A.
        assert_eq!(pick(&[sub(10, 10, 0, 80_000), b], &[0, 1]), Some(0));
        // Empty queues: linger 0 on both; the first in the walk wins the tie.
        let (a0, b0) = (sub(10, 10, 0, 0), sub(50, 10, 0, 0));
        assert_eq!(pick(&[a0, b0], &[1, 0]), Some(1));
        assert_eq!(pick(&[a0, b0], &[0, 1]), Some(0));
    }

    #[test]
    fn a_full_congestion_window_does_not_exclude_a_subflow() {
        // A's cwnd is full (10 in flight) but its bytes linger less than B's: A.
        let a = sub(10, 10, 10, 10 * (1448 + 832));
        let b = sub(40, 10, 0, 10 * (1448 + 832));
        assert_eq!(pick(&[a, b], &[0, 1]), Some(0));
    }

    #[test]
    fn a_full_send_buffer_on_the_choice_stops_sending_even_if_another_has_room() {
        let sndbuf = sndbuf_expand(1448, 10, 2);
        // A lingers least but its buffer is full; B has room: nothing (NULL).
        let a = (sub(1, 100, 0, 0).0, SubflowMem { wmem_queued: sndbuf, sndbuf });
        let b = sub(50, 10, 0, 1_000);
        assert!(linger_time(a.1.wmem_queued, sk_pacing_rate(&a.0)) < linger_time(b.1.wmem_queued, sk_pacing_rate(&b.0)));
        assert_eq!(pick(&[a, b], &[0, 1]), None);
    }

    #[test]
    fn backups_only_when_no_non_backup_subflow_is_active() {
        let a = sub(50, 10, 0, 50_000);
        let backup = |s: (SubflowView, SubflowMem)| (SubflowView { backup: true, ..s.0 }, s.1);
        let c = backup(sub(5, 10, 0, 0));
        // The backup lingers less, but A is active: A.
        assert_eq!(pick(&[a, c], &[0, 1]), Some(0));
        // A's buffer is full: still no backup (NULL), unlike minRTT.
        let a_full = (a.0, SubflowMem { wmem_queued: 50_000, sndbuf: 50_000 });
        assert_eq!(pick(&[a_full, c], &[0, 1]), None);
        // A not active (stale or not established): the backup.
        let a_down = (SubflowView { established: false, ..a.0 }, a.1);
        assert_eq!(pick(&[a_down, c], &[0, 1]), Some(1));
        // Two backups: the shorter linger.
        let c2 = backup(sub(5, 10, 0, 90_000));
        assert_eq!(pick(&[a_down, c2, c], &[0, 1, 2]), Some(2));
    }

    #[test]
    fn an_active_subflow_without_a_pacing_rate_is_skipped_but_still_blocks_backups() {
        // mss 0 gives sk_pacing_rate 0: skipped, yet counted in nr_active.
        let a = (stored(SubflowView { mss: 0, ..sub(10, 10, 0, 0).0 }), SubflowMem { wmem_queued: 0, sndbuf: TCP_WMEM[2] });
        let c = (SubflowView { backup: true, ..sub(5, 10, 0, 0).0 }, sub(5, 10, 0, 0).1);
        assert_eq!(pick(&[a, c], &[0, 1]), None);
    }

    #[test]
    fn the_average_pacing_rate_starts_at_the_subflow_rate_and_moves_by_the_burst_weight() {
        let mut s = Upstream::new();
        let a = sub(10, 10, 0, 65_428);
        let meta = MetaView { window_free: 1 << 30, ..new_data(0, 1448) };
        let f = Fixture::new(&[a], &[0]);
        assert_eq!(s.get_send(&f.view(meta)), Some(0));
        let r0 = sk_pacing_rate(&a.0);
        assert_eq!(s.avg_pacing_rate(0), r0);
        // The rate doubled since: avg = (r0 · wmem + 2 r0 · burst) / (burst + wmem) = 1.5 r0.
        let f = Fixture::new(&[(stored(SubflowView { cwnd: 20, ..a.0 }), a.1)], &[0]);
        s.push_bytes(&f.view(meta), 0, 0);
        assert_eq!(s.avg_pacing_rate(0), r0 + r0 / 2);
    }

    #[test]
    fn a_push_moves_the_rest_of_the_frag_and_whole_frags_until_the_burst_is_spent() {
        let mut s = Upstream::new();
        let f = Fixture::new(&[sub(10, 10, 0, 0)], &[0]);
        let meta = MetaView { window_free: 1 << 30, ..new_data(0, 1448) };
        let v = f.view(meta);
        s.get_send(&v);
        // From a frag boundary: two whole frags (65 456 >= 65 428).
        assert_eq!(s.push_bytes(&v, 0, 0), 2 * DFRAG_DATA_BYTES);
        // 100 bytes into a frag: its rest, then two more frags (the burst is not spent
        // after the rest plus one frag).
        assert_eq!(s.push_bytes(&v, 0, 100), 3 * DFRAG_DATA_BYTES - 100);
        // The rest is >= 32 699 bytes: that plus one frag spends the burst.
        assert_eq!(s.push_bytes(&v, 0, 10), 2 * DFRAG_DATA_BYTES - 10);
        // A small peer window shrinks the burst: one frag.
        assert_eq!(s.push_bytes(&f.view(MetaView { window_free: 20_000, ..meta }), 0, 0), DFRAG_DATA_BYTES);
        // A nearly full send buffer stops after the first frag.
        let tight = Fixture::new(&[(sub(10, 10, 0, 0).0, SubflowMem { wmem_queued: 0, sndbuf: 40_000 })], &[0]);
        assert_eq!(s.push_bytes(&tight.view(meta), 0, 0), DFRAG_DATA_BYTES);
    }

    #[test]
    fn the_scheduler_pushes_rewound_data_from_its_head_first() {
        let mut s = Upstream::new();
        let f = Fixture::new(&[sub(10, 10, 0, 0)], &[0]);
        let meta = MetaView { reinject: Some((40_000, 1448, 0b10)), window_free: 1 << 30, ..new_data(500_000, 1448) };
        let mut out = vec![];
        s.schedule(&f.view(meta), &mut out);
        // From 40 000: the rest of frag 1 (25 456) and two more frags.
        assert_eq!(out, vec![Action::Push { sub: 0, bytes: 130_912 - 40_000 }]);
        // Nothing to send: no decision.
        out.clear();
        s.schedule(&f.view(MetaView { window_free: 1 << 30, ..MetaView::default() }), &mut out);
        assert!(out.is_empty());
    }
}
