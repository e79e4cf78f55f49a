//! Loss detection and recovery: RACK (RFC 8985) or the duplicate-ACK threshold with
//! FACK-style marking, PRR (RFC 6937) or NewReno, the reordering timer and the RTO with
//! backoff (Linux `tcp_rack_*`, `tcp_mark_head_lost`, `tcp_cwnd_reduction`,
//! `tcp_retransmit_timer`).

use super::*;

/// RACK's state (Linux `tcp_sock.rack`): the send time and end of the most recently sent
/// segment delivered, the RTT of the last delivery sample, and whether it moved since
/// the last loss scan.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RackState {
    pub(super) mstamp: SimTime,
    pub(super) end_seq: u32,
    pub(super) rtt: SimTime,
    pub(super) advanced: bool,
}

impl RackState {
    /// Linux `tcp_rack_advance`: a segment sent at `s.sent_at` was just delivered. A
    /// retransmission delivered sooner than min_rtt after it left was the original's
    /// delivery and does not count.
    pub(super) fn advance(&mut self, min_rtt: SimTime, now: SimTime, s: &Seg) {
        let rtt = now.saturating_sub(s.sent_at);
        // tcp_min_rtt is ~0U before the first sample.
        if s.flags & EVER_RETRANS != 0 && (min_rtt == SimTime::ZERO || rtt < min_rtt) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        let end = s.seq.wrapping_add(s.len);
        if rack_sent_after(s.sent_at, self.mstamp, end, self.end_seq) {
            self.mstamp = s.sent_at;
            self.end_seq = end;
        }
    }
}


/// Linux `TCP_TIMEOUT_MIN_US`: RACK's reordering timer waits this much past the window.
pub(super) const RACK_TIMEOUT_MIN: SimTime = SimTime::from_us(2_000);

/// Linux `tcp_skb_sent_after`: sent later, or at the same time with a later end.
#[inline]
fn rack_sent_after(t1: SimTime, t2: SimTime, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && after(seq1, seq2))
}

impl SubflowTx {
    /// Linux `tcp_rack_reo_wnd`. No reordering is ever seen here (paths keep order and
    /// DSACK is not modelled: `reord_seen` = 0, `reo_wnd_steps` = 1), so the window is 0
    /// in recovery or once DupThresh segments are SACKed, else min(min_rtt / 4, srtt).
    pub(super) fn rack_reo_wnd(&self) -> SimTime {
        if self.st.ca_state >= CaState::Recovery || self.sb.sacked_out >= self.cfg.dupthresh {
            return SimTime::ZERO;
        }
        let min_rtt = self.rtt.min_rtt();
        let quarter = if min_rtt == SimTime::ZERO { SimTime::MAX } else { SimTime::from_us(min_rtt.us() / 4) };
        quarter.min(SimTime::from_us(self.st.srtt.us()))
    }

    /// Linux `tcp_rack_detect_loss`: every segment still in flight that was sent before
    /// the most recently sent delivered one, and has waited the RACK RTT plus the
    /// reordering window, is lost. Walks Linux's time-sorted list as its two sorted
    /// parts: originals never marked lost (sequence order is send order) and
    /// retransmissions (`retrans_fifo`). Returns whether any was marked, and the longest
    /// wait left for those sent before but not yet overdue.
    pub(super) fn rack_detect_loss(&mut self, now: SimTime) -> (bool, Option<SimTime>) {
        let limit = self.rack.rtt + self.rack_reo_wnd();
        let (mstamp, rack_end) = (self.rack.mstamp, self.rack.end_seq);
        let mut wait: Option<SimTime> = None;
        let mut first_lost: Option<usize> = None;
        let mut any = false;
        let mut prefix = true;
        let mut i = self.sb.rack_hint;
        while i < self.sb.segs.len() {
            let s = self.sb.segs[i];
            if s.flags & (SACKED | LOST) == 0 {
                if !rack_sent_after(mstamp, s.sent_at, rack_end, s.seq.wrapping_add(s.len)) {
                    break;
                }
                let elapsed = now.saturating_sub(s.sent_at);
                if elapsed >= limit {
                    self.sb.segs[i].flags |= LOST;
                    self.sb.lost_out += 1;
                    self.lost_total += 1;
                    first_lost.get_or_insert(i);
                    any = true;
                } else {
                    wait = wait.max(Some(limit - elapsed));
                    prefix = false;
                }
            }
            if prefix {
                self.sb.rack_hint = i + 1;
            }
            i += 1;
        }
        let mut k = 0;
        while k < self.sb.retrans_fifo.len() {
            let idx = match self.seg_index(self.sb.retrans_fifo[k]) {
                Ok(idx) if self.sb.segs[idx].flags & (RETRANS | SACKED) == RETRANS => idx,
                _ => {
                    self.sb.retrans_fifo.remove(k); // acked, SACKed or lost meanwhile
                    continue;
                }
            };
            let s = self.sb.segs[idx];
            if !rack_sent_after(mstamp, s.sent_at, rack_end, s.seq.wrapping_add(s.len)) {
                break;
            }
            let elapsed = now.saturating_sub(s.sent_at);
            if elapsed >= limit {
                // Lost again: due for another retransmission (it stays LOST).
                self.sb.segs[idx].flags &= !RETRANS;
                self.sb.retrans_out -= 1;
                self.lost_total += 1;
                first_lost = Some(first_lost.map_or(idx, |f| f.min(idx)));
                any = true;
                self.sb.retrans_fifo.remove(k);
            } else {
                wait = wait.max(Some(limit - elapsed));
                k += 1;
            }
        }
        if let Some(f) = first_lost {
            self.sb.retx_hint = self.sb.retx_hint.min(f);
        }
        (any, wait)
    }

    /// The transmit timer is due: an RTO, RACK's reordering timer or the loss probe.
    pub fn on_xmit_timer(&mut self, now: SimTime, coupling: &Coupling) -> TimerOutcome {
        match self.xmit_timer {
            XmitTimer::Rto => {
                if self.on_rto(now, coupling) { TimerOutcome::Rto } else { TimerOutcome::Nothing }
            }
            XmitTimer::Reo => self.on_reo_timeout(now, coupling),
            // tcp_send_loss_probe: at most one outstanding probe; else the connection
            // sends it (`probe_new` or `probe_last`).
            XmitTimer::Probe => {
                if self.sb.packets_out == 0 {
                    self.clear_xmit_timer();
                    TimerOutcome::Nothing
                } else if self.tlp_high_seq.is_some() {
                    self.rearm_rto(now);
                    TimerOutcome::Nothing
                } else {
                    TimerOutcome::Probe
                }
            }
        }
    }

    /// Linux `tcp_rack_reo_timeout`: mark what is now overdue; if anything was, enter
    /// recovery (with one PRR step, `tcp_cwnd_reduction(sk, 1, ...)`) and retransmit.
    /// Then `tcp_rearm_rto` with the REO timer still pending: the RTO from the head's send
    /// time, which is now if the head is retransmitted (`SubflowTx::retransmit`).
    pub(super) fn on_reo_timeout(&mut self, now: SimTime, coupling: &Coupling) -> TimerOutcome {
        self.sb.forget_blocks();
        if self.sb.packets_out == 0 {
            self.clear_xmit_timer();
            return TimerOutcome::Nothing;
        }
        self.rearm_rto(now);
        let (lost, _) = self.rack_detect_loss(now);
        if !lost {
            return TimerOutcome::Nothing;
        }
        if self.st.ca_state != CaState::Recovery {
            self.enter_recovery(coupling);
            if !self.cc.has_cong_control() && self.cfg.recovery == Recovery::Prr {
                self.prr(1, false);
            }
        }
        TimerOutcome::Reo
    }

    /// Linux `tcp_cwnd_reduction` (PRR, RFC 6937), reference `tcp.md` §1.3.
    pub(super) fn prr(&mut self, newly_acked_sacked: u32, ssrb: bool) {
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.st.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
            let prior = self.st.prior_cwnd.max(1) as i64;
            (ssthresh * self.prr_delivered as i64 + prior - 1) / prior - self.prr_out as i64
        } else if ssrb {
            // PRR-SSRB.
            delta.min((self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64) + 1)
        } else {
            // PRR-CRB.
            delta.min(newly_acked_sacked as i64)
        };
        sndcnt = sndcnt.max(if self.prr_out == 0 { 1 } else { 0 });
        self.st.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    pub(super) fn enter_recovery(&mut self, coupling: &Coupling) {
        self.tlp_high_seq = None; // tcp_init_cwnd_reduction
        self.st.prior_cwnd = self.st.cwnd;
        self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        self.high_seq = self.snd_nxt;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.stats.recoveries += 1;
        self.set_state(CaState::Recovery, coupling);
        if self.cfg.recovery == Recovery::NewReno && !self.cc.has_cong_control() {
            self.st.cwnd = self.st.ssthresh;
        }
    }

    /// RFC 6675 `IsLost`: a segment with at least DupThresh SACKed segments above it is
    /// lost. Linux `tcp_mark_head_lost` with `reordering` = 3. Amortised O(1) per segment.
    pub(super) fn mark_lost(&mut self) -> bool {
        let n = self.sb.mark_lost(self.cfg.dupthresh);
        self.lost_total += n as u64;
        n > 0
    }

    /// A retransmission sent before a segment that has since been delivered was lost
    /// again (paths here never reorder). Linux 4.x `tcp_mark_lost_retrans` / RACK.
    pub(super) fn mark_lost_retrans(&mut self) -> bool {
        let n = self.sb.mark_lost_retrans(self.snd_una, self.latest_delivered_sent_at);
        self.lost_total += n as u64;
        n > 0
    }

    /// The retransmission timer fired (Linux `tcp_retransmit_timer` -> `tcp_enter_loss`).
    /// Returns false if there was nothing outstanding.
    pub fn on_rto(&mut self, now: SimTime, coupling: &Coupling) -> bool {
        self.sb.forget_blocks();
        if self.sb.packets_out == 0 {
            self.rto_deadline = None;
            return false;
        }
        self.stats.rto_count += 1;
        self.tlp_high_seq = None;
        let first = self.st.ca_state <= CaState::Disorder || !before(self.snd_una, self.high_seq) || (self.st.ca_state == CaState::Loss && self.rto_backoffs == 0);
        if first {
            self.st.prior_cwnd = self.st.cwnd;
            self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        }
        // Every segment not SACKed is lost; nothing is in flight any more.
        self.lost_total += self.sb.mark_all_lost() as u64;
        self.st.cwnd = 1;
        self.st.cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.set_state(CaState::Loss, coupling);
        self.cc.on_event(now, &mut self.st, CaEvent::Loss, coupling);
        self.rto = self.rto.mul(2).min(RTO_MAX);
        self.rto_backoffs += 1;
        self.rto_deadline = Some(now + self.rto);
        self.xmit_timer = XmitTimer::Rto;
        true
    }

    /// Linux `tcp_rearm_rto`: an RTO from now, or, replacing a pending RACK timer, what
    /// is left of the RTO since the head was sent (`tcp_rto_delta_us`).
    pub(super) fn rearm_rto(&mut self, now: SimTime) {
        let other_pending = self.xmit_timer != XmitTimer::Rto && self.rto_deadline.is_some();
        self.rto_deadline = Some(match (other_pending, self.sb.segs.front()) {
            (true, Some(head)) => (head.sent_at + self.rto).max(now + SimTime::from_us(1)),
            _ => now + self.rto,
        });
        self.xmit_timer = XmitTimer::Rto;
    }

    /// Nothing outstanding: no transmit timer (`inet_csk_clear_xmit_timer`).
    pub(super) fn clear_xmit_timer(&mut self) {
        self.rto_deadline = None;
        self.xmit_timer = XmitTimer::Rto;
    }
}
