//! The tail loss probe (RFC 8985 §7; Linux `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`).

use super::*;

impl SubflowTx {
    /// Linux `tcp_schedule_loss_probe` (tail loss probe, RFC 8985 §7.2): in Open or CWR
    /// with packets out, a probe 2·SRTT after now, plus `rto_min` when one packet is out
    /// (a delayed ACK) or `TCP_TIMEOUT_MIN_US` otherwise, 1 s without an RTT sample, but
    /// never later than the RTO would fire (the whole RTO when the ACK path advances it,
    /// else what is left of it since the head was sent). Returns whether it is armed.
    pub(super) fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if self.sb.packets_out == 0 || !matches!(self.st.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut timeout = if self.rtt.has_sample() {
            let srtt = self.rtt.srtt();
            srtt + srtt + if self.sb.packets_out == 1 { self.cfg.rto_min } else { RACK_TIMEOUT_MIN }
        } else {
            crate::tcp::rtt::RTO_INIT
        };
        let rto_left = if advancing_rto {
            Some(self.rto)
        } else {
            // tcp_rto_delta_us: only a positive remainder caps the probe.
            self.sb.segs.front().map(|h| (h.sent_at + self.rto).saturating_sub(now)).filter(|&d| d > SimTime::ZERO)
        };
        if let Some(d) = rto_left {
            timeout = timeout.min(d);
        }
        self.rto_deadline = Some(now + timeout);
        self.xmit_timer = XmitTimer::Probe;
        true
    }

    /// The probe that `on_xmit_timer` asked for was sent as new data (`send_new` without
    /// its probe scheduling: `tcp_write_xmit(..., push_one = 2)` forces one segment past
    /// cwnd and schedules nothing). `tcp_send_loss_probe`'s `probe_sent`.
    pub fn probe_new(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        let seq = self.send_new_unprobed(now, len, dsn);
        self.tlp_retrans = false;
        self.probe_sent(now);
        seq
    }

    /// `tcp_send_loss_probe` with nothing new to send: retransmit the last segment
    /// (`__tcp_retransmit_skb`: EVER_RETRANS, a new send time, not counted in
    /// retrans_out). Returns (seq, len, dsn), or None if there is none.
    pub fn probe_last(&mut self, now: SimTime) -> Option<(u32, u32, u64)> {
        let last = self.sb.segs.len().checked_sub(1)?;
        if self.sb.segs[last].flags & SACKED != 0 {
            self.rearm_rto(now);
            return None;
        }
        let out = self.resend(now, last);
        self.tlp_retrans = true;
        self.probe_sent(now);
        Some(out)
    }

    /// `probe_sent:` in `tcp_send_loss_probe`: remember snd_nxt, count it, and rearm the
    /// RTO from now (the probe timer is no longer pending).
    pub(super) fn probe_sent(&mut self, now: SimTime) {
        self.tlp_high_seq = Some(self.snd_nxt);
        self.stats.loss_probes += 1;
        self.rto_deadline = Some(now + self.rto);
        self.xmit_timer = XmitTimer::Rto;
    }

    /// `tcp_process_tlp_ack` on a probe that repaired a loss: `tcp_init_cwnd_reduction`,
    /// CWR, `tcp_end_cwnd_reduction` (cwnd = ssthresh) and `tcp_try_keep_open`.
    pub(super) fn probe_cwnd_reduction(&mut self, now: SimTime, coupling: &Coupling) {
        self.tlp_high_seq = None;
        self.high_seq = self.snd_nxt;
        self.st.cwnd_cnt = 0;
        self.st.prior_cwnd = self.st.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        self.set_state(CaState::Cwr, coupling);
        if !self.cc.has_cong_control() {
            if self.st.ssthresh < INFINITE_SSTHRESH {
                self.st.cwnd = self.st.ssthresh.max(1);
            }
            self.cc.on_event(now, &mut self.st, CaEvent::CompleteCwr, coupling);
        }
        let keep = if self.sb.sacked_out + self.sb.lost_out > 0 || self.sb.retrans_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_state(keep, coupling);
    }
}
