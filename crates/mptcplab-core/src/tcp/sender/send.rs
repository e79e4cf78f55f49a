//! Sending: new data and retransmissions leave, with their delivery-rate stamps (Linux
//! `tcp_rate_skb_sent`), Nagle, and the restart after idle (RFC 2861, `tcp_cwnd_restart`).

use super::*;

impl SubflowTx {
    pub(super) fn rate_stamp(&self) -> RateStamp {
        RateStamp { delivered: self.delivered, delivered_at: self.delivered_at, first_tx_at: self.first_tx_at, app_limited: self.app_limited != 0 }
    }

    /// Linux `tcp_rate_check_app_limited`: the sender has nothing to send, cwnd room,
    /// and no loss to repair. Samples of packets sent from now until that much has been
    /// delivered are marked app-limited.
    pub fn check_app_limited(&mut self) {
        let inf = self.in_flight();
        if inf < self.st.cwnd && self.sb.lost_out == 0 {
            self.app_limited = (self.delivered + inf as u64).max(1);
        }
    }

    /// Index of the first segment marked lost and not yet retransmitted.
    #[inline]
    pub fn next_retransmit(&mut self) -> Option<usize> { self.sb.next_retransmit() }

    pub(super) fn before_send(&mut self, now: SimTime) {
        if self.sb.packets_out == 0 {
            // Linux `tcp_rate_skb_sent`: a send with nothing in flight starts a new
            // delivery-rate interval.
            self.first_tx_at = now;
            self.delivered_at = now;
            // RFC 2861 restart after idle (Linux tcp_cwnd_restart) and CA_EVENT_TX_START.
            if self.cfg.slow_start_after_idle && !self.restart_on_entail && now.saturating_sub(self.last_send) > self.rto && self.stats.segs_sent > 0 {
                self.halve_for_idle(now.saturating_sub(self.last_send));
                self.cc.on_event(now, &mut self.st, CaEvent::CwndRestart, &Coupling::alone());
            }
            self.cc.on_event(now, &mut self.st, CaEvent::TxStart, &Coupling::alone());
        }
        self.last_send = now;
        if let Some(rate) = self.pacing_rate() {
            // Space departures by the packet's serialisation time at the pacing rate.
            let wire = self.cfg.mss + crate::mptcp::conn::TCP_HEADER_BYTES;
            self.next_send_at = self.next_send_at.max(now) + rate.tx_time(wire);
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
            self.xmit_timer = XmitTimer::Rto;
        }
        if self.st.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
    }

    /// `tcp_cwnd_restart`'s cut (tcp_output.c, every release): ssthresh keeps the old
    /// cwnd's `tcp_current_ssthresh`, and cwnd halves once per RTO of `idle`, not below
    /// min(initial cwnd, cwnd).
    pub(super) fn halve_for_idle(&mut self, mut idle: SimTime) {
        let restart = self.cfg.initial_cwnd.min(self.st.cwnd);
        let mut cwnd = self.st.cwnd;
        self.st.ssthresh = self.st.current_ssthresh();
        while idle > self.rto && cwnd > restart {
            cwnd >>= 1;
            idle = idle.saturating_sub(self.rto);
        }
        self.st.cwnd = cwnd.max(restart);
    }

    /// Linux >= 4.x `tcp_slow_start_after_idle_check` (include/net/tcp.h): with nothing in
    /// flight, a congestion control without `cong_control` (not BBR), and longer than the
    /// RTO since data last left (`lsndtime`), `tcp_cwnd_restart`: the cut
    /// (`halve_for_idle`) and a restarted RFC 2861 clock (`snd_cwnd_stamp`,
    /// `snd_cwnd_used`). Nothing here moves `lsndtime`, so every call before data leaves
    /// cuts again: Linux calls it for each skb `tcp_skb_entail` queues and for each window
    /// update that finds data queued (`restart_on_entail`). Returns whether it restarted.
    pub fn idle_restart_check(&mut self, now: SimTime) -> bool {
        if !self.cfg.slow_start_after_idle || self.sb.packets_out > 0 || self.cc.has_cong_control() || self.stats.segs_sent == 0 {
            return false;
        }
        let idle = now.saturating_sub(self.last_send);
        if idle <= self.rto {
            return false;
        }
        self.cc.on_event(now, &mut self.st, CaEvent::CwndRestart, &Coupling::alone());
        self.halve_for_idle(idle);
        self.snd_cwnd_stamp = now;
        self.snd_cwnd_used = 0;
        true
    }

    /// Send `len` new bytes mapped to data sequence `dsn`. Returns the subflow sequence.
    /// Nagle's test with Minshall's variant (`tcp_nagle_check`, RFC 896; Linux): a
    /// sub-MSS segment waits while packets are out and an earlier sub-MSS segment is
    /// unacknowledged.
    pub fn nagle_holds(&self, len: u32) -> bool {
        len < self.cfg.mss && self.sb.packets_out > 0 && crate::tcp::seq::after(self.snd_sml, self.snd_una)
    }

    pub fn send_new(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        let seq = self.send_new_unprobed(now, len, dsn);
        // tcp_write_xmit: a send of new data (re)schedules the loss probe; where it may
        // not, a pending probe becomes the RTO (tcp_event_new_data_sent).
        if self.cfg.tail_loss_probe && !self.schedule_loss_probe(now, false) && self.xmit_timer == XmitTimer::Probe {
            self.rearm_rto(now);
        }
        seq
    }

    pub(super) fn send_new_unprobed(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        self.before_send(now);
        let seq = self.snd_nxt;
        let mut seg = Seg::new(seq, len, dsn, now);
        seg.stamp_rate(self.rate_stamp());
        self.sb.push(seg);
        self.snd_nxt = seq.wrapping_add(len);
        if len < self.cfg.mss {
            self.snd_sml = self.snd_nxt;
        }
        self.st.snd_nxt = self.snd_nxt;
        self.stats.segs_sent += 1;
        self.stats.bytes_sent += len as u64;
        seq
    }

    /// Retransmit segment `idx` (from `next_retransmit`). Returns (seq, len, dsn).
    pub fn retransmit(&mut self, now: SimTime, idx: usize) -> (u32, u32, u64) {
        let out = self.resend(now, idx);
        self.sb.mark_retransmitted(idx);
        // Linux `tcp_xmit_retransmit_queue` (3.x, 4.x and 6.x alike): retransmitting the
        // head of the retransmission queue restarts the retransmission timer, so a long
        // recovery that keeps repairing the head does not run into an RTO.
        // A pending RACK reordering timer stays.
        if idx == 0 && !(self.xmit_timer == XmitTimer::Reo && self.rto_deadline.is_some()) {
            self.rto_deadline = Some(now + self.rto);
            self.xmit_timer = XmitTimer::Rto;
        }
        out
    }

    /// Segment `idx` leaves again (`__tcp_retransmit_skb`): a new send time and rate
    /// stamp, EVER_RETRANS, counted as sent and retransmitted. Returns (seq, len, dsn).
    pub(super) fn resend(&mut self, now: SimTime, idx: usize) -> (u32, u32, u64) {
        self.before_send(now);
        let stamp = self.rate_stamp();
        let s = &mut self.sb.segs[idx];
        s.stamp_rate(stamp);
        s.flags |= EVER_RETRANS;
        s.sent_at = now;
        let out = (s.seq, s.len, s.dsn);
        self.stats.segs_sent += 1;
        self.stats.segs_retrans += 1;
        self.stats.bytes_sent += out.1 as u64;
        self.stats.bytes_retrans += out.1 as u64;
        out
    }
}
