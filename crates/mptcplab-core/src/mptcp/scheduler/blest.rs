//! BLEST, "Blocking Estimation-based MPTCP Scheduler" (Ferlin, Alay, Mehani, Boreli,
//! IFIP Networking 2016), as the out-of-tree Linux MPTCP implements it in
//! `net/mptcp/mptcp_blest.c` (v0.95 branch, module version 0.95); reference
//! schedulers.md §4.4.
//!
//! BLEST takes minRTT's subflow. When that is not the fastest subflow, it estimates how
//! much the fast subflow could send while the segment lingers on the slow one, and
//! waits for the fast subflow when that volume would not fit in the connection-level
//! send window left after the slow subflow's data. The estimate is scaled by `lambda`,
//! which grows after retransmission events and shrinks otherwise.
//!
//! Units are Linux's: `srtt_us` is 8 × SRTT in µs; arithmetic is in `u32` where the
//! kernel's is (it wraps), so that the choices are the kernel's.
//!
//! Departures:
//! - Linux calls the subflow choice with no segment when the application is blocked on a
//!   full send buffer and nothing is left to send; `skb->len` is then a NULL
//!   dereference in `blest_get_available_subflow` if the choice is a slow subflow. Here
//!   the segment length is 0 in that case.
//! - `last_rbuf_opti` starts at 0 (the kernel stamps the subflow's creation), and the
//!   lambda timer starts at the first scheduling call (the kernel: the first subflow's
//!   creation).
//! - The retransmission event that raises lambda is recorded whenever the penalisation
//!   branch is reached, also when the scenario turns penalisation off.

use super::{rcv_buf_optimization, Action, MinRtt, MinRttOptions, PenaliseScope, SchedView, Scheduler, Segment};
use crate::cc::INFINITE_SSTHRESH;
use crate::units::SimTime;

/// BLEST's module parameters (all `unsigned char` in Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlestOptions {
    /// Initial lambda × 10.
    pub lambda: u8,
    pub min_lambda: u8,
    pub max_lambda: u8,
    /// lambda × 1000 decrease per update without a retransmission event.
    pub dyn_lambda_good: u8,
    /// lambda × 1000 increase per update after a retransmission event.
    pub dyn_lambda_bad: u8,
}

impl Default for BlestOptions {
    /// The kernel's defaults.
    fn default() -> Self { BlestOptions { lambda: 12, min_lambda: 10, max_lambda: 13, dyn_lambda_good: 10, dyn_lambda_bad: 40 } }
}

pub struct Blest {
    pub opts: MinRttOptions,
    params: BlestOptions,
    /// `blestsched_cb.lambda_1000` (an `s16`), in [min_lambda·100, max_lambda·100] after
    /// the first update.
    lambda_1000: i32,
    last_lambda_update: Option<SimTime>,
    retrans_flag: bool,
    /// Per subflow: lifetime extremes of `srtt_us` (`blestsched_priv`).
    min_srtt_us: Vec<u32>,
    max_srtt_us: Vec<u32>,
    last_rbuf_opti: Vec<SimTime>,
}

impl Blest {
    pub fn new(opts: MinRttOptions, params: BlestOptions) -> Self {
        Blest { opts, params, lambda_1000: params.lambda as i32 * 100, last_lambda_update: None, retrans_flag: false, min_srtt_us: Vec::new(), max_srtt_us: Vec::new(), last_rbuf_opti: Vec::new() }
    }

    /// Lambda × 1000, for tests and traces.
    pub fn lambda_1000(&self) -> i32 { self.lambda_1000 }

    /// `blestsched_update_lambda`: at most once per `min_srtt(slow)`, +dyn_lambda_bad
    /// after a retransmission event, else −dyn_lambda_good; clamp to [min, max]·100.
    fn update_lambda(&mut self, now: SimTime, slow: usize) {
        let last = *self.last_lambda_update.get_or_insert(now);
        if now.saturating_sub(last) < SimTime::from_us((self.min_srtt_us[slow] >> 3) as u64) {
            return;
        }
        if self.retrans_flag {
            self.lambda_1000 += self.params.dyn_lambda_bad as i32;
        } else {
            self.lambda_1000 -= self.params.dyn_lambda_good as i32;
        }
        self.retrans_flag = false;
        self.lambda_1000 = self.lambda_1000.min(self.params.max_lambda as i32 * 100).max(self.params.min_lambda as i32 * 100);
        self.last_lambda_update = Some(now);
    }

    /// `blestsched_estimate_linger_time` of the slow subflow, in `srtt_us` units:
    /// `inflight = packets_in_flight + 1`; `X = max_srtt` if `inflight >= cwnd`, else
    /// `min_srtt + (max_srtt − min_srtt)·inflight/cwnd`; at least the current srtt.
    fn linger_time(&self, v: &SchedView, s: usize) -> u32 {
        let sf = &v.subflows[s];
        let inflight = sf.in_flight.wrapping_add(1);
        let cwnd = sf.cwnd;
        let estimate = if inflight >= cwnd {
            self.max_srtt_us[s]
        } else {
            let slope = self.max_srtt_us[s].wrapping_sub(self.min_srtt_us[s]);
            self.min_srtt_us[s].wrapping_add(slope.wrapping_mul(inflight) / cwnd.max(1))
        };
        (sf.srtt_us8() as u32).max(estimate)
    }

    /// `blestsched_estimate_bytes`: bytes the fast subflow `f` sends during `time_8`
    /// (`srtt_us` units), Reno-like: `n = time/avg_rtt + 1` rounds with
    /// `avg_rtt = (min_srtt + max_srtt)/2`; in initial slow start (ssthresh infinite)
    /// `cwnd·(2^min(n,16) − 1)` packets, else `(c + (n−1)/2)·n` with
    /// `c = max(cwnd, ssthresh + 1)`; times `mss·lambda`.
    fn estimate_bytes(&self, v: &SchedView, f: usize, time_8: u32) -> u32 {
        let fs = &v.subflows[f];
        let avg_rtt = ((self.min_srtt_us[f] as u64 + self.max_srtt_us[f] as u64) / 2) as u32;
        // `avg_rtt == 0`: 1 round (the kernel's sanity case).
        let mut num_rtts = time_8.checked_div(avg_rtt).map_or(1, |n| n.wrapping_add(1));
        let packets = if fs.ssthresh == INFINITE_SSTHRESH {
            num_rtts = num_rtts.min(16);
            fs.cwnd.wrapping_mul((1u32 << num_rtts) - 1)
        } else {
            let ca_cwnd = fs.cwnd.max(fs.ssthresh.wrapping_add(1));
            ca_cwnd.wrapping_add(num_rtts.wrapping_sub(1) / 2).wrapping_mul(num_rtts)
        };
        // `div_u64((u64)packets * mss_cache * lambda_1000, 1000)`, returned as u32.
        ((packets as u64).wrapping_mul(fs.mss as u64).wrapping_mul(self.lambda_1000.max(0) as u64) / 1000) as u32
    }

    /// `blest_get_available_subflow` for a segment of `len` bytes sent on `path_mask`.
    /// `Ok(None)`: no subflow can send; `Err(())`: wait for the fast subflow (or, as
    /// minRTT, for an unused temporarily unavailable one).
    fn get_subflow(&mut self, v: &SchedView, len: u32, path_mask: u64) -> Result<Option<usize>, ()> {
        let n = v.subflows.len();
        if self.min_srtt_us.len() < n {
            self.min_srtt_us.resize(n, u32::MAX);
            self.max_srtt_us.resize(n, 0);
        }
        // The fastest subflow that may send (cwnd not considered), and the srtt extremes.
        let mut minsk = None;
        let mut min_srtt = u32::MAX;
        for &i in v.order {
            let s = &v.subflows[i];
            if !s.established {
                continue;
            }
            let srtt = s.srtt_us8() as u32;
            self.min_srtt_us[i] = self.min_srtt_us[i].min(srtt);
            self.max_srtt_us[i] = self.max_srtt_us[i].max(srtt);
            if srtt < min_srtt {
                min_srtt = srtt;
                minsk = Some(i);
            }
        }
        // minRTT's choice; its `Err` is a forced wait for an unused subflow.
        let Some(best) = MinRtt::pick(v.subflows, v.order, path_mask)? else { return Ok(None) };
        let Some(f) = minsk else { return Ok(Some(best)) };
        if best == f {
            return Ok(Some(best));
        }
        // About to use the slower subflow `best`.
        self.update_lambda(v.now, best);
        let linger = self.linger_time(v, best);
        let fast_bytes = self.estimate_bytes(v, f, linger);
        // The slow subflow's data and this segment hold the meta window until acked.
        let s = &v.subflows[best];
        let slow_inflight_bytes = (s.outstanding_bytes + s.queued_bytes) as u32;
        let slow_bytes = len.wrapping_add(slow_inflight_bytes);
        let snd_wnd = v.meta.snd_wnd.min(u32::MAX as u64) as u32;
        let avail_space = snd_wnd.saturating_sub(slow_bytes);
        if fast_bytes > avail_space {
            return Err(());
        }
        Ok(Some(best))
    }

    fn rcv_buf_optimization(&mut self, v: &SchedView, sk: usize, penal: bool, out: &mut Vec<Action>) {
        if rcv_buf_optimization(v, sk, penal, self.opts, PenaliseScope::All, &mut self.last_rbuf_opti, out) {
            self.retrans_flag = true;
        }
    }
}

impl Scheduler for Blest {
    fn name(&self) -> &'static str { "blest" }

    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        let m = &v.meta;
        // `__mptcp_blest_next_segment`: reinjection queue head, else the send head.
        if let Some((_, len, mask)) = m.reinject {
            match self.get_subflow(v, len, mask) {
                Ok(Some(sub)) => out.push(Action::Send { sub, seg: Segment::Reinject }),
                Ok(None) => {}
                Err(()) => out.push(Action::Wait),
            }
            return;
        }
        if m.unsent > 0 {
            let mss = v.order.iter().map(|&i| v.subflows[i].mss).next().unwrap_or(1448);
            let len = if m.new_data { m.next_len } else { m.unsent.min(mss as u64) as u32 };
            let sub = match self.get_subflow(v, len, 0) {
                Ok(Some(sub)) => sub,
                Ok(None) => return,
                Err(()) => {
                    out.push(Action::Wait);
                    return;
                }
            };
            if m.new_data {
                out.push(Action::Send { sub, seg: Segment::New });
            } else {
                // The peer's window holds the head back: retransmit the blocking segment
                // and penalise (penal = 1).
                self.rcv_buf_optimization(v, sub, true, out);
            }
            return;
        }
        if m.sndbuf_full {
            // Linux passes no segment here (see the module notes): length 0.
            if let Ok(Some(sub)) = self.get_subflow(v, 0, 0) {
                self.rcv_buf_optimization(v, sub, false, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{MetaView, SubflowView};
    use super::*;

    fn blest() -> Blest { Blest::new(MinRttOptions { opportunistic_retransmission: true, penalisation: true }, BlestOptions::default()) }

    #[test]
    fn the_fast_volume_follows_the_reference_vector() {
        // schedulers.md §4.4: f cwnd 10, ssthresh 20, mss 1000, avg rtt 20 ms, X = 60 ms
        // => n = 4, c = 21, packets = (21 + 1)·4 = 88, fast_bytes = 88 000 · 1.2.
        let mut b = blest();
        let f = SubflowView { ssthresh: 20, mss: 1000, ..sub(20, 10, 0) };
        let subs = [f];
        b.min_srtt_us = vec![20_000 * 8];
        b.max_srtt_us = vec![20_000 * 8];
        let v = view(&subs, &[0], new_data(0, 1000));
        assert_eq!(b.estimate_bytes(&v, 0, 60_000 * 8), 105_600);
        // Initial slow start: cwnd·(2^n − 1) = 10·15 packets.
        let subs = [SubflowView { ssthresh: INFINITE_SSTHRESH, ..f }];
        let v = view(&subs, &[0], new_data(0, 1000));
        assert_eq!(b.estimate_bytes(&v, 0, 60_000 * 8), 150 * 1000 * 12 / 10);
    }

    #[test]
    fn the_slow_subflow_is_skipped_when_the_fast_volume_overflows_the_window() {
        // Fast subflow 0 has a full cwnd, so minRTT picks slow subflow 1. With a 64 KB
        // meta window the fast volume (105 600 B) does not fit: wait.
        let f = SubflowView { ssthresh: 20, mss: 1000, ..sub(20, 10, 10) };
        let s = SubflowView { ssthresh: 20, mss: 1000, ..sub(60, 10, 0) };
        let subs = [f, s];
        let mut b = blest();
        b.min_srtt_us = vec![20_000 * 8, 60_000 * 8];
        b.max_srtt_us = vec![20_000 * 8, 60_000 * 8];
        let meta = MetaView { snd_wnd: 64_000, ..new_data(0, 1000) };
        let mut out = vec![];
        b.schedule(&view(&subs, &[0, 1], meta), &mut out);
        assert_eq!(out, vec![Action::Wait]);
        // A 1 MB window leaves room: send on the slow subflow.
        let meta = MetaView { snd_wnd: 1_000_000, ..new_data(0, 1000) };
        out.clear();
        b.schedule(&view(&subs, &[0, 1], meta), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 1, seg: Segment::New }]);
    }

    #[test]
    fn blest_sends_on_the_slow_subflow_exactly_when_the_fast_volume_fits_the_window_left() {
        // Fast subflow 0 (20 ms, cwnd full) and slow subflow 1 (60 ms, 3 packets out of
        // 1448 B): minRTT picks the slow one. Linger time 60 ms (min = max srtt), so the
        // fast volume is 105 600 B (the vector above); the slow side holds this 1000 B
        // segment and its 3·1448 B out. `blest_get_available_subflow`: wait iff
        // fast_bytes > snd_wnd − slow_bytes.
        let f = SubflowView { ssthresh: 20, mss: 1000, ..sub(20, 10, 10) };
        let s = SubflowView { ssthresh: 20, ..sub(60, 10, 3) };
        let subs = [f, s];
        let fast_bytes = 105_600u64;
        let slow_bytes = 1000 + 3 * 1448;
        let decide = |snd_wnd: u64| {
            let mut b = blest();
            b.min_srtt_us = vec![20_000 * 8, 60_000 * 8];
            b.max_srtt_us = vec![20_000 * 8, 60_000 * 8];
            let mut out = vec![];
            b.schedule(&view(&subs, &[0, 1], MetaView { snd_wnd, ..new_data(0, 1000) }), &mut out);
            assert_eq!(b.estimate_bytes(&view(&subs, &[0, 1], new_data(0, 1000)), 0, 60_000 * 8) as u64, fast_bytes);
            out
        };
        // The window left equals the fast volume: it fits, send on the slow subflow.
        assert_eq!(decide(fast_bytes + slow_bytes), vec![Action::Send { sub: 1, seg: Segment::New }]);
        // One byte less: it does not, wait for the fast subflow.
        assert_eq!(decide(fast_bytes + slow_bytes - 1), vec![Action::Wait]);
        // With room on the fast subflow BLEST takes it, whatever the window.
        let subs_room = [SubflowView { in_flight: 5, ..f }, s];
        let mut b = blest();
        let mut out = vec![];
        b.schedule(&view(&subs_room, &[0, 1], MetaView { snd_wnd: 1000, ..new_data(0, 1000) }), &mut out);
        assert_eq!(out, vec![Action::Send { sub: 0, seg: Segment::New }]);
    }

    #[test]
    fn the_linger_time_interpolates_between_the_srtt_extremes() {
        let mut b = blest();
        let s = SubflowView { ssthresh: 20, ..sub(50, 10, 4) };
        let subs = [s];
        b.min_srtt_us = vec![40_000 * 8];
        b.max_srtt_us = vec![80_000 * 8];
        let v = view(&subs, &[0], new_data(0, 1000));
        // inflight 5 of cwnd 10: 40 + 40·5/10 = 60 ms (above the 50 ms srtt).
        assert_eq!(b.linger_time(&v, 0), 60_000 * 8);
        let subs = [SubflowView { in_flight: 9, ..s }];
        let v = view(&subs, &[0], new_data(0, 1000));
        assert_eq!(b.linger_time(&v, 0), 80_000 * 8, "a full cwnd lingers max_srtt");
    }

    #[test]
    fn lambda_falls_without_retransmissions_rises_after_one_and_stays_in_bounds() {
        let mut b = blest();
        b.min_srtt_us = vec![0, 100_000 * 8];
        b.update_lambda(SimTime::from_secs(1), 1); // starts the timer
        assert_eq!(b.lambda_1000(), 1200);
        b.update_lambda(SimTime::from_secs(1) + SimTime::from_ms(50), 1);
        assert_eq!(b.lambda_1000(), 1200, "within one min_srtt of the slow subflow");
        b.update_lambda(SimTime::from_secs(1) + SimTime::from_ms(100), 1);
        assert_eq!(b.lambda_1000(), 1190);
        b.retrans_flag = true;
        b.update_lambda(SimTime::from_secs(2), 1);
        assert_eq!(b.lambda_1000(), 1230);
        for k in 0..20 {
            b.retrans_flag = true;
            b.update_lambda(SimTime::from_secs(3 + k), 1);
        }
        assert_eq!(b.lambda_1000(), 1300);
        for k in 0..100 {
            b.update_lambda(SimTime::from_secs(30 + k), 1);
        }
        assert_eq!(b.lambda_1000(), 1000);
    }

    #[test]
    fn penalisation_halves_every_slower_holder_and_raises_the_retransmission_flag() {
        let mut b = blest();
        let subs = [sub(10, 10, 0), sub(50, 10, 10), sub(80, 10, 10)];
        let meta = MetaView { new_data: false, window_limited: true, unsent: 5000, snd_wnd: 1 << 30, una: Some((0, 1448, 0b110)), ..MetaView::default() };
        let mut out = vec![];
        b.schedule(&view(&subs, &[0, 1, 2], meta), &mut out);
        assert!(out.contains(&Action::Penalise { sub: 1 }) && out.contains(&Action::Penalise { sub: 2 }), "{out:?}");
        assert!(b.retrans_flag);
    }
}
