//! An ACK at the sender: SACK blocks into the scoreboard, the cumulative ACK, RTT samples,
//! loss detection, the congestion state machine, the delivery-rate sample and the
//! controller (Linux `tcp_ack`, `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`).

use super::*;

impl SubflowTx {
    pub(super) fn seg_index(&self, seq: u32) -> Result<usize, usize> { self.sb.index_of(self.snd_una, seq) }

    /// Process a cumulative ACK and SACK blocks. `coupling` is the sibling view for
    /// coupled controllers (empty otherwise).
    pub fn on_ack(&mut self, now: SimTime, ack: u32, sacks: &[(u32, u32)], coupling: &Coupling) -> AckResult {
        let mut res = AckResult::default();
        if after(ack, self.snd_nxt) {
            self.sb.forget_blocks();
            return res; // acknowledges data never sent: ignore
        }
        let mut sack_rtt: Option<SimTime> = None;
        // Linux `ca_rtt_us`: RTT of the most recently sent newly delivered packet.
        let mut ca_rtt: Option<SimTime> = None;
        let mut rate: Option<(Seg, SimTime)> = None;
        let lost_before = self.lost_total;
        let prior_in_flight = self.in_flight();
        // `tcp_ack`: an old ACK (below snd_una) or one with nothing outstanding before it
        // (`no_queue`) skips `tcp_cong_control` and so the pacing-rate update.
        let (prior_packets, prior_snd_una) = (self.sb.packets_out, self.snd_una);
        // 1. SACK blocks: mark segments fully covered (RFC 2018/6675 scoreboard).
        // Each newly delivered segment (SACKed here, cumulatively acked below) advances
        // RACK (`tcp_sacktag_one`, `tcp_clean_rtx_queue`) and may start the rate sample.
        let rack_on = self.cfg.loss_detection == LossDetection::Rack;
        let min_rtt = self.rtt.min_rtt();
        let (latest, rack, first_tx_at) = (&mut self.latest_delivered_sent_at, &mut self.rack, &mut self.first_tx_at);
        let newly_sacked = self.sb.sack(self.snd_una, self.snd_nxt, ack, sacks, |s| {
            if s.flags & EVER_RETRANS == 0 {
                if sack_rtt.is_none() {
                    sack_rtt = Some(now - s.sent_at);
                }
                ca_rtt = Some(now - s.sent_at);
            }
            *latest = (*latest).max(s.sent_at);
            if rack_on {
                rack.advance(min_rtt, now, &s);
            }
            rate_on_delivered(first_tx_at, s, &mut rate);
        });
        // 2. Cumulative ACK.
        let mut acked_pkts = 0u32;
        let mut seq_rtt: Option<SimTime> = None;
        let mut retrans_acked = false;
        let mut cum_ca_rtt: Option<SimTime> = None;
        if after(ack, self.snd_una) {
            let acked = self.sb.cum_ack(ack, |s| {
                if s.flags & EVER_RETRANS != 0 {
                    retrans_acked = true;
                } else {
                    if seq_rtt.is_none() {
                        seq_rtt = Some(now - s.sent_at);
                    }
                    cum_ca_rtt = Some(now - s.sent_at);
                }
                *latest = (*latest).max(s.sent_at);
                if rack_on {
                    rack.advance(min_rtt, now, s);
                }
                rate_on_delivered(first_tx_at, *s, &mut rate);
            });
            acked_pkts = acked.delivered;
            res.bytes_acked = acked.bytes;
            self.snd_una = ack;
            self.st.snd_una = ack;
            res.snd_una_advanced = true;
            self.stats.bytes_acked += res.bytes_acked;
        }
        let delivered = acked_pkts + newly_sacked;
        res.delivered_pkts = delivered;
        self.delivered += delivered as u64;
        // 3. RTT: from the oldest newly acked never-retransmitted segment (Karn), else SACK.
        let rtt = if retrans_acked { None } else { seq_rtt }.or(sack_rtt);
        // Linux tcp_clean_rtx_queue: a new SACK's last sample wins over the cumulative one.
        let ca_rtt = ca_rtt.or(if retrans_acked { None } else { cum_ca_rtt });
        if let Some(m) = rtt {
            self.rtt.sample(m, self.snd_una, self.snd_nxt);
            self.rto = self.rtt.rto();
            self.rto_backoffs = 0;
            self.st.srtt = self.rtt.srtt();
            self.st.min_rtt = self.rtt.min_rtt();
            self.stats.srtt_sum_ms += self.st.srtt.ms_f64();
            self.stats.srtt_samples += 1;
        }
        res.rtt_sample = rtt;
        if delivered > 0 {
            // Linux pkts_acked gets `rs->rtt_us`, the most recent packet's RTT.
            self.cc.on_rtt_sample(now, &mut self.st, ca_rtt, delivered);
        }
        // 3b. Linux tcp_process_tlp_ack: what became of the outstanding loss probe.
        if let Some(high) = self.tlp_high_seq {
            if !before(ack, high) {
                if !self.tlp_retrans {
                    self.tlp_high_seq = None; // a probe of new data was acked
                } else if after(ack, high) {
                    // The ACK went past the probe: it repaired a loss. One cwnd reduction
                    // (tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction, tcp_try_keep_open).
                    self.stats.loss_probe_recoveries += 1;
                    self.probe_cwnd_reduction(now, coupling);
                } else if !res.snd_una_advanced && newly_sacked == 0 {
                    // A pure duplicate ACK: the original and the probe both arrived (what
                    // the probe's DSACK says in Linux; the receiver here sends no DSACK).
                    self.tlp_high_seq = None;
                }
            }
        }
        // 4. Loss detection.
        let mut newly_lost = false;
        let mut reo_armed = false;
        match self.cfg.loss_detection {
            LossDetection::DupThresh => {
                if self.sb.sacked_out > 0 {
                    newly_lost |= self.mark_lost();
                }
                if self.sb.retrans_out > 0 && delivered > 0 {
                    newly_lost |= self.mark_lost_retrans();
                }
            }
            // Linux tcp_identify_packet_loss -> tcp_rack_mark_lost: scan only when RACK
            // advanced; what is not yet overdue arms the reordering timer instead of the
            // RTO (FLAG_SET_XMIT_TIMER cleared), at most one RTO ahead, 2 ms over.
            LossDetection::Rack => {
                if std::mem::take(&mut self.rack.advanced) {
                    let (lost, wait) = self.rack_detect_loss(now);
                    newly_lost = lost;
                    if let Some(w) = wait {
                        self.rto_deadline = Some(now + (w + RACK_TIMEOUT_MIN).min(self.rto));
                        self.xmit_timer = XmitTimer::Reo;
                        reo_armed = true;
                    }
                }
            }
        }
        // 5. Congestion state machine (Linux tcp_fastretrans_alert, simplified).
        match self.st.ca_state {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                if self.sb.lost_out > 0 {
                    self.enter_recovery(coupling);
                } else if self.sb.sacked_out > 0 {
                    self.set_state(CaState::Disorder, coupling);
                } else {
                    self.set_state(CaState::Open, coupling);
                }
            }
            CaState::Recovery => {
                if !before(self.snd_una, self.high_seq) {
                    // tcp_end_cwnd_reduction: cwnd = ssthresh.
                    // (A controller with its own cong_control keeps its cwnd.)
                    if self.st.ssthresh < INFINITE_SSTHRESH && !self.cc.has_cong_control() {
                        self.st.cwnd = self.st.ssthresh.max(1);
                    }
                    self.cc.on_event(now, &mut self.st, CaEvent::CompleteCwr, coupling);
                    self.set_state(if self.sb.sacked_out > 0 { CaState::Disorder } else { CaState::Open }, coupling);
                }
            }
            CaState::Loss => {
                if !before(self.snd_una, self.high_seq) {
                    self.set_state(CaState::Open, coupling);
                }
            }
        }
        // 6. Delivery-rate sample (Linux tcp_rate_gen).
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_at = now;
        }
        let mut rs = RateSample { acked_sacked: delivered, losses: (self.lost_total - lost_before) as u32, prior_in_flight, rtt: ca_rtt, ..Default::default() };
        if let Some((p, send_elapsed)) = rate {
            rs.prior_delivered = p.tx_delivered(self.delivered);
            rs.is_app_limited = p.flags & APP_LIMITED != 0;
            rs.delivered = self.delivered - rs.prior_delivered;
            let ack_elapsed = now.saturating_sub(p.tx_delivered_at);
            let iv = send_elapsed.max(ack_elapsed);
            // Shorter than min_rtt: ACK compression made it too optimistic (Linux).
            rs.interval = if iv < self.st.min_rtt { None } else { Some(iv) };
            // Linux 4.9+ tcp_rate_gen: keep the sample unless it is app-limited and below
            // the one kept (what `tcpi_delivery_rate` reports).
            if let Some(iv) = rs.interval.filter(|&iv| iv > SimTime::ZERO) {
                let keep = match self.rate_delivered {
                    None => true,
                    Some((d, i, _)) => !rs.is_app_limited || rs.delivered as u128 * i.ns() as u128 >= d as u128 * iv.ns() as u128,
                };
                if keep {
                    self.rate_delivered = Some((rs.delivered, iv, rs.is_app_limited));
                }
            }
        }
        // 7. cwnd: the controller's own control, else reduction during recovery, else
        // the controller's growth (Linux tcp_cong_control).
        self.st.in_flight = self.in_flight();
        let sample = AckSample {
            now,
            acked: delivered,
            ack_seq: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            cwnd_limited: self.cwnd_limited_on_ack(prior_in_flight),
            paced: false,
            delivered_total: self.delivered,
            delivered_at: self.delivered_at,
            lost_total: self.lost_total,
            rs,
        };
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.st, &sample, coupling);
            if std::mem::take(&mut self.st.request_app_limited) {
                self.app_limited = (self.delivered + self.in_flight() as u64).max(1);
            }
        } else if self.st.ca_state == CaState::Recovery {
            if delivered > 0 {
                match self.cfg.recovery {
                    Recovery::Prr => self.prr(delivered, res.snd_una_advanced && !newly_lost),
                    Recovery::NewReno => self.st.cwnd = self.st.ssthresh.max(1),
                }
            }
        } else if delivered > 0 && res.snd_una_advanced {
            // Linux tcp_may_raise_cwnd: grow only on ACKs that acknowledge new data
            // (FLAG_DATA_ACKED), by all packets delivered (acked + SACKed).
            self.cc.on_ack(&mut self.st, &sample, coupling);
        }
        self.st.cwnd = self.st.cwnd.max(crate::cc::MIN_CWND);
        if prior_packets > 0 && !before(ack, prior_snd_una) && !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
        // 8. RTO timer: restart when new data is acked, stop when nothing is outstanding
        // (Linux FLAG_SET_XMIT_TIMER -> tcp_rearm_rto, unless RACK armed its timer).
        if self.sb.packets_out == 0 {
            self.clear_xmit_timer();
        } else if res.snd_una_advanced && !reo_armed {
            // tcp_set_xmit_timer: the loss probe where it may be scheduled, else the RTO.
            if !(self.cfg.tail_loss_probe && self.schedule_loss_probe(now, true)) {
                self.rearm_rto(now);
            }
        }
        res
    }
}

/// Linux `tcp_rate_skb_delivered`: sample the most recently sent delivered packet.
fn rate_on_delivered(first_tx_at: &mut SimTime, seg: Seg, rs: &mut Option<(Seg, SimTime)>) {
    if seg.flags & RATE_DONE != 0 {
        return;
    }
    let take = match rs {
        None => true,
        Some((p, _)) => seg.delivered_after(p),
    };
    if take {
        // Send elapsed: from the interval's first send to this packet's send.
        *first_tx_at = seg.sent_at;
        *rs = Some((seg, seg.sent_at.saturating_sub(seg.tx_first_tx_at)));
    }
}
