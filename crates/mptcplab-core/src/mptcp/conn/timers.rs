//! The connection's timers: which deadlines the engine must schedule, and what each
//! does when it fires (a subflow's RTO, delayed ACK, pacing, join; the MPTCP retransmit
//! timer, `mptcp_retransmit_timer`, and stale subflows, upstream only).

use super::*;

/// A timer event at `now`: forget it as scheduled (`poll_timers` may ask again), and take
/// `deadline` when it is due (true).
#[inline]
pub(super) fn take_due(event_at: &mut Option<SimTime>, deadline: &mut Option<SimTime>, now: SimTime) -> bool {
    if *event_at == Some(now) {
        *event_at = None;
    }
    if deadline.is_some_and(|d| d <= now) {
        *deadline = None;
        return true;
    }
    false
}

impl Connection {
    /// Deadlines the engine must have events for: of the subflows in `timer_scope`
    /// (the others' deadlines have not moved since the last poll), and the extra timers.
    #[inline]
    pub fn poll_timers(&mut self, reqs: &mut Vec<TimerRequest>) {
        let n = self.subflows.len();
        let mut scope = std::mem::replace(&mut self.timer_scope, 0) & if n >= 64 { u64::MAX } else { sub_bit(n) - 1 };
        #[cfg(any(test, debug_assertions))]
        self.assert_out_of_scope_timers_scheduled(scope);
        while scope != 0 {
            let i = scope.trailing_zeros() as usize;
            scope &= scope - 1;
            let s = &mut self.subflows[i];
            if let Some(d) = s.rto_timer_deadline() {
                if s.rto_event_at.map_or(true, |e| e > d) {
                    s.rto_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::Rto));
                }
            }
            if let Some(d) = s.pace_deadline {
                if s.pace_event_at.map_or(true, |e| e > d) {
                    s.pace_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::Pace));
                }
            }
            if let Some(d) = s.rx.as_ref().and_then(|r| r.delack_deadline) {
                if s.delack_event_at.map_or(true, |e| e > d) {
                    s.delack_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::DelAck));
                }
            }
        }
        if !self.extra_timers {
            return;
        }
        if self.join_jitter.is_some() {
            for (i, s) in self.subflows.iter_mut().enumerate() {
                if let Some(d) = s.join_at {
                    if s.join_event_at.map_or(true, |e| e > d) {
                        s.join_event_at = Some(d);
                        reqs.push((d, i as u16, TimerKind::Join));
                    }
                }
            }
        }
        if let Some(d) = self.up.rtx_deadline {
            if self.up.rtx_event_at.map_or(true, |e| e > d) {
                self.up.rtx_event_at = Some(d);
                reqs.push((d, 0, TimerKind::MetaRtx));
            }
        }
        // Only a stream has an application timer.
        if self.app_timer {
            if let Some(d) = self.app.poll_timeout() {
                if self.app_event_at.map_or(true, |e| e > d) {
                    self.app_event_at = Some(d);
                    reqs.push((d, 0, TimerKind::App));
                }
            }
        }
    }

    /// Tests and debug builds: a subflow left out of `timer_scope` has an event at or
    /// before each of its deadlines already, so polling it would have asked for nothing.
    #[cfg(any(test, debug_assertions))]
    fn assert_out_of_scope_timers_scheduled(&self, scope: u64) {
        let covered = |d: Option<SimTime>, e: Option<SimTime>| d.is_none_or(|d| e.is_some_and(|e| e <= d));
        for (i, s) in self.subflows.iter().enumerate() {
            if scope & sub_bit(i) != 0 {
                continue;
            }
            let rto = s.rto_timer_deadline();
            assert!(covered(rto, s.rto_event_at), "conn {} subflow {i}: RTO deadline {rto:?} moved out of scope (event {:?})", self.id, s.rto_event_at);
            assert!(covered(s.pace_deadline, s.pace_event_at), "conn {} subflow {i}: pacing deadline moved out of scope", self.id);
            let delack = s.rx.as_ref().and_then(|r| r.delack_deadline);
            assert!(covered(delack, s.delack_event_at), "conn {} subflow {i}: delayed-ACK deadline moved out of scope", self.id);
        }
    }

    /// A timer of subflow `i` may have expired.
    #[inline]
    pub fn on_timer(&mut self, now: SimTime, i: usize, kind: TimerKind, out: &mut Vec<Packet>) {
        self.timer_scope = u64::MAX;
        match kind {
            TimerKind::Rto => {
                let s = &mut self.subflows[i];
                if s.rto_event_at == Some(now) {
                    s.rto_event_at = None;
                }
                match s.state {
                    SubState::SynSent | SubState::PreEstablished => {
                        if s.handshake_deadline.is_some_and(|d| d <= now) {
                            s.syn_retries += 1;
                            if s.state == SubState::SynSent {
                                self.send_syn(now, i, out);
                            } else {
                                let s = &mut self.subflows[i];
                                s.tx.rto = s.tx.rto.mul(2).min(crate::tcp::rtt::RTO_MAX);
                                s.handshake_deadline = Some(now + s.tx.rto);
                                let p = self.ctl(PacketKind::HandshakeAck, i, true, now);
                                out.push(p);
                            }
                        }
                    }
                    SubState::Established => {
                        let due = s.tx.rto_deadline.is_some_and(|d| d <= now);
                        match if due { self.with_coupling(i, |tx, c| tx.on_xmit_timer(now, c)) } else { TimerOutcome::Nothing } {
                            TimerOutcome::Rto => {
                                // Without reinjection here, the MPTCP retransmit timer and
                                // stale subflows take over.
                                if self.cfg.mptcp && self.policy.reinject_on_subflow_rto {
                                    self.on_subflow_rto(now, i);
                                }
                                self.push(now, out);
                            }
                            // RACK marked segments lost: retransmit them.
                            TimerOutcome::Reo => self.push(now, out),
                            TimerOutcome::Probe => self.send_loss_probe(now, i, out),
                            TimerOutcome::Nothing => {}
                        }
                    }
                    SubState::Idle => {}
                }
            }
            TimerKind::DelAck => {
                let s = &mut self.subflows[i];
                if s.delack_event_at == Some(now) {
                    s.delack_event_at = None;
                }
                if s.rx.as_ref().and_then(|r| r.delack_deadline).is_some_and(|d| d <= now) {
                    if let Some(rx) = s.rx.as_mut() {
                        rx.delack_fired();
                    }
                    self.send_ack(now, i, out);
                }
            }
            TimerKind::Pace => {
                let s = &mut self.subflows[i];
                if take_due(&mut s.pace_event_at, &mut s.pace_deadline, now) {
                    self.push(now, out);
                }
            }
            TimerKind::App => {
                if self.app_event_at == Some(now) {
                    self.app_event_at = None;
                }
                if self.app.poll_timeout().is_some_and(|d| d <= now) {
                    self.app.handle_timeout(now);
                    self.push(now, out);
                }
            }
            TimerKind::Join => {
                let s = &mut self.subflows[i];
                if take_due(&mut s.join_event_at, &mut s.join_at, now) && s.state == SubState::Idle {
                    self.send_syn(now, i, out);
                }
            }
            TimerKind::MetaRtx => {
                if take_due(&mut self.up.rtx_event_at, &mut self.up.rtx_deadline, now) {
                    self.meta_retrans(now, out);
                    self.push(now, out);
                }
            }
        }
    }

    /// The subflow holds data at TCP level (`!tcp_rtx_and_write_queues_empty`).
    pub(super) fn holds_data(&self, i: usize) -> bool { self.subflows[i].tx.sb.packets_out > 0 || !self.subflows[i].queue.is_empty() }

    /// Upstream `__mptcp_retrans` (protocol.c), run when the MPTCP retransmit timer fires.
    /// `mptcp_subflow_get_retrans` walks the subflows oldest first: one that still holds
    /// data counts a period without progress (`mptcp_pm_subflow_chk_stale`) and is not a
    /// candidate; the first idle non-backup subflow is the choice, an idle backup only if
    /// every busy subflow has gone two periods without an ACK (`min_stale_count > 1`).
    /// The choice gets the oldest un-DATA_ACKed data frag, as far as it was sent
    /// (`dfrag->already_sent`). The timer is re-armed unless there is nothing to send.
    pub(super) fn meta_retrans(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.stats.meta_rtx_fired += 1;
        let (mut pick, mut backup, mut min_stale) = (None, None, u32::MAX);
        for k in 0..self.walk.order().len() {
            let i = self.walk.order()[k];
            // `__mptcp_subflow_active`: established (join complete), stale or not.
            if self.subflows[i].state != SubState::Established {
                continue;
            }
            if self.holds_data(i) {
                let s = &mut self.subflows[i];
                if up::count_stale(&mut s.up, &mut s.pf) {
                    self.chk_stale(now, i, out);
                }
                min_stale = min_stale.min(self.subflows[i].up.stale_count as u32);
                continue;
            }
            if self.subflows[i].backup {
                backup = backup.or(Some(i));
            } else {
                pick = pick.or(Some(i));
            }
        }
        let chosen = pick.or(if min_stale > 1 { backup } else { None });
        let Some(head) = self.snd.segs.front().map(|s| s.dsn) else {
            // Nothing to retransmit: keep the timer only while data waits to be sent.
            if self.snd.unsent() > 0 && self.up.rtx_deadline.is_none() {
                self.up.reset_timer(now);
            }
            return;
        };
        if let Some(c) = chosen {
            // `mptcp_sendmsg_frag` -> `mptcp_check_allowed_size` on the chosen subflow.
            let tx = &mut self.subflows[c].tx;
            tx.snd_wnd = tx.snd_wnd.max(self.snd.rwnd_edge.saturating_sub(head));
            // The head frag's data already handed to subflows: up to the first segment
            // still waiting to be pushed again after a rewind.
            let end = up::dfrag_end(head).min(self.snd.dsn_nxt);
            let mut segs = std::mem::take(&mut self.rtx_scratch);
            segs.clear();
            segs.extend(self.snd.segs.iter().take_while(|s| s.dsn < end && !s.reinject_queued).map(|s| (s.dsn, s.len)));
            for &(d, l) in segs.iter() {
                self.snd.mark_sent_on(d, c);
                let s = &mut self.subflows[c];
                s.queue.push_back((d, l, false, false, false));
                s.queued_bytes += l as u64;
                s.sched.reinjected_segs += 1;
                self.stats.reinjections += 1;
                self.stats.meta_rtx_segs += 1;
            }
            if let (Some(&(d, _)), true) = (segs.first(), self.obs.trace_sched) {
                let len = segs.iter().map(|&(_, l)| l).sum();
                self.record_sched(now, c, "meta_retrans", d, len);
            }
            self.rtx_scratch = segs;
            self.drain(now, c, out);
        }
        if self.up.rtx_deadline.is_none() {
            self.up.reset_timer(now);
        }
        // `mptcp_check_and_set_pending`: with data waiting, the socket's release runs
        // `__mptcp_push_pending`, whose `mptcp_subflow_get_send` recomputes the interval
        // (`mptcp_set_timeout`) with the retransmission's subflow timer now armed, even
        // when the shut window lets nothing out. The deadline just set keeps the old one.
        if self.snd.unsent() > 0 {
            self.set_meta_timeout(now);
        }
    }

    /// `mptcp_pm_subflows_chk_stale` (pm.c) for subflow `i`, past `STALE_LOSS_CNT`
    /// periods without an ACK: if another active subflow has fewer than
    /// `max(STALE_LOSS_CNT − 1, 1)`, mark `i` stale and rewind every un-DATA_ACKed frag
    /// for sending again (`__mptcp_retransmit_pending_data`), then push.
    pub(super) fn chk_stale(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        let active_max = up::STALE_LOSS_CNT.saturating_sub(1).max(1);
        let alternative = self.walk.order().iter().any(|&j| {
            let t = &self.subflows[j];
            j != i && t.state == SubState::Established && !t.pf && t.up.stale_count < active_max
        });
        if !alternative {
            return;
        }
        if self.holds_data(i) {
            self.subflows[i].pf = true;
            self.stats.stale_marked += 1;
            self.update_status(now, i, "stale");
            self.snd.rewind_all();
        }
        self.push(now, out);
    }

    /// Upstream `mptcp_set_timeout`: the MPTCP retransmit interval is the longest
    /// remaining retransmit timer of the subflows that have not lost a period
    /// (`mptcp_timeout_from_subflow`: `icsk_pending && !stale_count`), else TCP_RTO_MIN.
    pub(super) fn set_meta_timeout(&mut self, now: SimTime) {
        let tout = self
            .subflows
            .iter()
            .filter(|s| s.state == SubState::Established && s.up.stale_count == 0)
            .filter_map(|s| s.tx.rto_deadline)
            .map(|d| d.saturating_sub(now))
            .max()
            .unwrap_or(SimTime::ZERO);
        self.up.set_timeout(tout);
    }
}
