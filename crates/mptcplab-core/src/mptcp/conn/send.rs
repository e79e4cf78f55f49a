//! The sending end's MPTCP level: the application's writes into the send buffer and
//! the scheduler's decisions (Linux: `__mptcp_push_pending`; out-of-tree:
//! `mptcp_write_xmit`), carried out on the subflows.

use super::*;
use crate::mptcp::scheduler::{has_space, Candidate, MinRtt};

impl Connection {
    /// Send what the windows allow: subflow retransmissions, queued data, then what the
    /// scheduler picks.
    pub fn push(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let written_before = self.snd.written;
        if let (true, Some(chunk)) = (self.snd.frag_charge, self.app.poll_chunk()) {
            // The kernel's order: the ACK that frees buffer space pushes what is already
            // written (`__mptcp_data_acked` -> `__mptcp_check_push`, softirq); the writer it
            // wakes (`sk_stream_write_space`) writes afterwards, in process context, and its
            // `mptcp_sendmsg` pushes again.
            self.push_written(now, written_before, out);
            self.write_polled(now, chunk);
            if self.snd.written > written_before {
                self.push_written(now, written_before, out);
            }
            return;
        }
        if self.snd.frag_charge {
            // Wake a sleeping writer if the buffer is writeable again (`sk_stream_write_space`).
            self.snd.update_nospace(self.app.wants_more(self.snd.written));
        }
        let n = self.app.poll_write(now, self.snd.written, self.snd.free_space());
        self.snd.write(n);
        if self.snd.frag_charge {
            self.snd.update_nospace(self.app.wants_more(self.snd.written));
        }
        self.push_written(now, written_before, out);
    }

    /// The part of `push` after the application's write: send what is written and what the
    /// windows allow. `written_before`: the stream's length before this push's write.
    pub(super) fn push_written(&mut self, now: SimTime, written_before: u64, out: &mut Vec<Packet>) {
        // A subflow with nothing outstanding gets no ACK to refresh its window: give it the
        // connection's (stands in for Linux's zero-window probe). Otherwise the window of
        // the subflow a push sends on is raised (`push_on`).
        if self.policy.idle_subflows_take_meta_window {
            let meta_wnd = self.snd.rwnd_edge.saturating_sub(self.snd.data_una);
            for s in self.subflows.iter_mut() {
                if s.tx.sb.packets_out == 0 {
                    s.tx.snd_wnd = s.tx.snd_wnd.max(meta_wnd);
                }
            }
        }
        // (Scratch vectors are used in place: nothing called from `push` pushes again.)
        self.sent_mask = 0;
        // Tests and debug builds check the mask against the segment counts.
        #[cfg(any(test, debug_assertions))]
        let sent_before: Vec<u64> = self.subflows.iter().map(|s| s.tx.stats.segs_sent).collect();
        // Subflow-level retransmissions and pre-scheduled data.
        for i in 0..self.subflows.len() {
            if self.subflows[i].state == SubState::Established {
                self.drain(now, i, out);
            }
        }
        let meta_timer = self.policy.meta_retransmit_timer;
        if meta_timer {
            // The kernel recomputes the MPTCP retransmit interval in
            // `mptcp_subflow_get_send`, which runs only when something is pushed: the
            // application wrote (`mptcp_sendmsg` -> `__mptcp_push_pending`) or an ACK
            // opened the window past snd_nxt with data waiting (`ack_update_msk` ->
            // `__mptcp_check_push`). While the window stays shut the interval keeps the
            // value from the last push, not TCP_RTO_MIN.
            let rewound = self.snd.reinject_head().is_some();
            let waiting = rewound || self.snd.unsent() > 0;
            if waiting && (self.snd.written > written_before || rewound || self.snd.rwnd_edge > self.snd.dsn_nxt) {
                self.set_meta_timeout(now);
            }
        }
        // Connection-level scheduling.
        let mss = self.cfg.tcp.mss;
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 100_000 {
                break; // a scheduler that keeps asking to send nothing useful
            }
            let reinject = self.snd.reinject_head();
            let next = self.snd.next_new_len(mss);
            let new_data = next.is_some();
            // New data waits only because the peer's window is closed.
            let window_limited = !new_data && self.snd.unsent() > 0;
            let sndbuf_full = self.app_blocked();
            // (Data in flight alone: a redundant scheduler may still copy it.)
            if reinject.is_none() && !new_data && !window_limited && !sndbuf_full && self.snd.segs.is_empty() {
                break;
            }
            // minRTT's choice for new data reads four facts per subflow: read them straight
            // from the subflows instead of building every view (the views' other fields
            // serve its other branches, the other schedulers and the trace), and a
            // subflow's window only when its SRTT would win (`pick_new_by`). The same
            // choice as `pick`: `MinRtt::schedule` sends new data on it, or
            // nothing, and records no status. It comes before the check below, which it
            // makes on its own: a candidate with space (`has_space`) can send now, so when
            // none can, it picks none and the loop ends as the check would end it.
            if reinject.is_none() && new_data && !self.obs.trace_sched && matches!(self.sched, AnyScheduler::MinRtt(_)) {
                let want = next.unwrap_or(mss) as u64;
                let subs = &self.subflows;
                let pick = MinRtt::pick_new_by(self.walk.order(), |i| subs[i].head(), |i| subs[i].candidate(now, want).has_space);
                match pick {
                    Ok(Some(sub)) if self.send_on(now, sub, Segment::New, out) => continue,
                    _ => break,
                }
            }
            // Every decision below needs a subflow that can send now (minRTT's
            // `get_available_subflow`): skip the scheduler when none can. A scheduler
            // that queues data on subflows (upstream) is asked regardless.
            if !self.subflows.iter().any(|s| s.state == SubState::Established && !s.pf && s.tx.can_send(now)) && !self.sched.queues_data() {
                break;
            }
            self.build_views(now, next.unwrap_or(mss) as u64);
            let una = self.snd.segs.front().map(|s| (s.dsn, s.len, s.path_mask));
            let snd = &self.snd;
            let meta = MetaView {
                new_data,
                next_dsn: snd.dsn_nxt,
                next_len: next.unwrap_or(0),
                window_limited,
                reinject,
                una,
                sndbuf_full,
                data_una: snd.data_una,
                snd_wnd: snd.rwnd_edge.saturating_sub(snd.data_una),
                unsent: snd.unsent(),
                queued_bytes: snd.written - snd.data_una,
                packets_out: snd.segs.len() as u32,
                window_free: snd.rwnd_edge.saturating_sub(snd.dsn_nxt),
            };
            let (front, back) = snd.segs.as_slices();
            self.actions.clear();
            self.sched.schedule(&SchedView { now, subflows: &self.views, order: self.walk.order(), meta, segs: MetaSegs { front, back }, mem: &self.mem }, &mut self.actions);
            self.sched.drain_status_notes(&mut self.notes);
            if !self.notes.is_empty() {
                self.apply_status_notes(now);
            }
            let mut sent = false;
            for k in 0..self.actions.len() {
                match self.actions[k] {
                    Action::Send { sub, seg } => sent |= self.send_on(now, sub, seg, out),
                    Action::Enqueue { sub, bytes } => {
                        let len = bytes.min(mss).min(self.snd.next_new_len(mss).unwrap_or(0));
                        if len > 0 && sub < self.subflows.len() {
                            let dsn = self.snd.take_new(len, sub, now);
                            self.subflows[sub].queue.push_back((dsn, len, true, false, false));
                            self.subflows[sub].queued_bytes += len as u64;
                            self.record_sched(now, sub, "enqueue", dsn, len);
                            sent = true;
                        }
                    }
                    Action::Penalise { sub } => {
                        if let Some(s) = self.subflows.get_mut(sub) {
                            penalise(&mut s.tx.st, s.tx.cfg.base_kernel);
                            s.sched.penalised += 1;
                            self.stats.penalisations += 1;
                            self.record_sched(now, sub, "penalise", 0, 0);
                        }
                    }
                    Action::Push { sub, bytes } => sent |= self.push_on(now, sub, bytes, out),
                    Action::Wait => {}
                }
            }
            if !sent {
                break;
            }
        }
        // `__mptcp_push_pending`: data was pushed (a round before the last sent) and the
        // MPTCP retransmit timer is not pending -> arm it.
        if meta_timer && guard > 1 && self.up.rtx_deadline.is_none() {
            self.up.reset_timer(now);
        }
        let nospace = self.app_blocked();
        let meta_has_data = self.snd.unsent() > 0 || !self.snd.reinject.is_empty();
        let sent_mask = self.sent_mask;
        for (i, s) in self.subflows.iter_mut().enumerate() {
            #[cfg(any(test, debug_assertions))]
            assert_eq!(sent_mask & sub_bit(i) != 0, s.tx.stats.segs_sent != sent_before[i], "sent_mask of subflow {i}");
            if s.state == SubState::Established {
                s.tx.validate_after_push(now, sent_mask & sub_bit(i) != 0, !s.queue.is_empty(), nospace);
                // Nothing to send and cwnd room: delivery-rate samples are app-limited.
                if !meta_has_data && s.queue.is_empty() {
                    s.tx.check_app_limited();
                }
                // Held back only by the pacer: wake up when it allows the next packet.
                if s.tx.has_cwnd_space() && !s.tx.pacing_ok(now) && (meta_has_data || !s.queue.is_empty() || s.tx.sb.lost_out > s.tx.sb.retrans_out) {
                    s.pace_deadline = Some(s.tx.next_send_at);
                    self.timer_scope |= sub_bit(i);
                }
            }
        }
        self.note_app_progress(now);
    }

    /// A writer that polls before each write (`Bulk::poll_chunk`, the kernel backend's: a
    /// Python socket with a timeout polls before every `send`). `mptcp_poll` reports the
    /// socket writeable only when `sk_stream_is_writeable` (free >= wmem / 2), and sets
    /// SOCK_NOSPACE when it is not (`mptcp_check_writeable`); a writeable socket's
    /// non-blocking `send` copies the rest of the current chunk as far as the buffer takes
    /// it (`mptcp_sendmsg`). So the writer tops the buffer up one chunk at a time while
    /// it is writeable, and never fills it past the chunk that made it unwriteable.
    pub(super) fn write_polled(&mut self, now: SimTime, chunk: u64) {
        loop {
            if !self.app.wants_more(self.snd.written) {
                self.snd.nospace = false;
                return;
            }
            let wmem = up::msk_wmem_queued(self.snd.data_una, self.snd.written);
            if !up::msk_writeable(wmem, self.snd.sndbuf) {
                self.snd.nospace = true;
                return;
            }
            self.snd.nospace = false;
            let rest = chunk - self.snd.written % chunk;
            let n = self.app.poll_write(now, self.snd.written, self.snd.free_space().min(rest));
            if n == 0 {
                return;
            }
            self.snd.write(n);
        }
    }

    /// The application waits for send-buffer space (Linux SOCK_NOSPACE). Upstream: set when
    /// the writer finds the buffer full, cleared only when it is writeable again
    /// (`MetaSender::update_nospace`).
    pub(super) fn app_blocked(&self) -> bool {
        if self.snd.frag_charge {
            return self.snd.nospace;
        }
        self.snd.free_space() == 0 && self.app.wants_more(self.snd.written)
    }

    /// Snapshot the subflows for the scheduler; `want` is the size of the next segment.
    /// (`Subflow::candidate` reads the same fields for minRTT's fast path.)
    pub(super) fn build_views(&mut self, now: SimTime, want: u64) {
        self.views.clear();
        let rates = self.sched.needs_rates();
        let sndbufs = self.up.model_sndbuf;
        for s in self.subflows.iter() {
            let t = &s.tx;
            self.views.push(SubflowView {
                // `mptcp_is_def_unavailable`: not established, pre-established, or pf;
                // upstream `mptcp_subflow_active`: join complete and not stale (= pf).
                established: s.state == SubState::Established && !s.pf,
                backup: s.backup,
                srtt: t.st.srtt,
                rttvar: t.rtt.rttvar(),
                cwnd: t.st.cwnd,
                ssthresh: t.st.ssthresh,
                in_flight: t.in_flight(),
                ca_state: t.st.ca_state,
                mss: t.cfg.mss,
                queued_bytes: s.queued_bytes,
                pacing_ok: t.pacing_ok(now),
                // v0.89 `mptcp_is_available`: write_seq + min(len, mss) must stay within
                // the subflow's own window end, snd_una + snd_wnd (schedulers.md §4.1).
                wnd_ok: t.outstanding_bytes() + s.queued_bytes + want <= t.snd_wnd,
                packets_out: t.sb.packets_out,
                outstanding_bytes: t.outstanding_bytes(),
                // Rate and mode the congestion control measures (AR&P, seed 004 §V).
                // Only for schedulers that read them (`Scheduler::needs_rates`).
                pacing_rate_bps: if rates { t.pacing_rate().map_or(0.0, |r| r.bits_per_sec()) } else { 0.0 },
                sk_pacing_rate: t.sk_pacing_rate,
                bw_bps: match &t.cc {
                    crate::cc::AnyCc::Bbr(b) if rates => b.bw_pps() * t.cfg.mss as f64 * 8.0,
                    _ => 0.0,
                },
                delivery_rate_bps: if rates { t.delivery_rate_bytes_per_sec() * 8.0 } else { 0.0 },
                min_rtt: t.st.min_rtt,
                cc_mode: if rates { t.cc.mode() } else { "" },
            });
        }
        if sndbufs {
            self.mem.clear();
            for s in self.subflows.iter() {
                let t = &s.tx;
                self.mem.push(SubflowMem { wmem_queued: up::wmem_queued(t.outstanding_bytes() + s.queued_bytes, t.sb.packets_out as u64 + s.queue.len() as u64), sndbuf: s.up.sndbuf });
            }
        }
    }

    /// Execute one `Send`. Returns whether a packet left.
    pub(super) fn send_on(&mut self, now: SimTime, i: usize, seg: Segment, out: &mut Vec<Packet>) -> bool {
        if i >= self.subflows.len() || self.subflows[i].state != SubState::Established || self.subflows[i].pf || !self.subflows[i].tx.can_send(now) {
            return false;
        }
        let mss = self.cfg.tcp.mss;
        let (dsn, len) = match seg {
            Segment::New => {
                let Some(len) = self.snd.next_new_len(mss) else { return false };
                // Subflows that run Nagle (see `drain`): a short segment behind an
                // unacknowledged short one is not built yet, so it can grow.
                if self.policy.subflow_nagle && self.subflows[i].tx.nagle_holds(len) {
                    return false;
                }
                (self.snd.take_new(len, i, now), len)
            }
            Segment::Reinject => {
                let Some((d, l, _)) = self.snd.reinject_head() else { return false };
                self.snd.reinject.pop_front();
                self.snd.mark_sent_on(d, i);
                if self.policy.meta_retransmit_timer {
                    // Sent again after a rewind (the MPTCP retransmit timer's test).
                    self.snd.clear_reinject_flag(d);
                }
                self.stats.reinjections += 1;
                (d, l)
            }
            Segment::Copy { dsn, len } => {
                if dsn + len as u64 <= self.snd.data_una {
                    return false;
                }
                self.snd.mark_sent_on(dsn, i);
                self.stats.opportunistic_retrans += 1;
                (dsn, len)
            }
        };
        let c = &mut self.subflows[i].sched;
        let kind = match seg {
            Segment::New => {
                c.new_segs += 1;
                "new"
            }
            Segment::Reinject => {
                c.reinjected_segs += 1;
                "reinject"
            }
            Segment::Copy { .. } => {
                c.copied_segs += 1;
                "copy"
            }
        };
        self.record_sched(now, i, kind, dsn, len);
        let seq = self.subflows[i].tx.send_new(now, len, dsn);
        self.emit_data(now, i, seq, len, dsn, false, false, out);
        true
    }
}

/// The penalisation of `mptcp_rcv_buf_optimization`: halve cwnd (at least 1) and
/// ssthresh (at least 2). v0.9x on 4.x (mptcp_sched.c) halves ssthresh only out of slow
/// start (`prior_cwnd >= snd_ssthresh`); v0.89 on 3.14 (mptcp_output.c) whenever it is
/// set (`snd_ssthresh != TCP_INFINITE_SSTHRESH`), in slow start too.
pub(super) fn penalise(st: &mut crate::cc::CcState, base: BaseKernel) {
    let prior = st.cwnd;
    st.cwnd = (st.cwnd >> 1).max(1);
    let halve = match base {
        BaseKernel::Linux3_14 => st.ssthresh < crate::cc::INFINITE_SSTHRESH,
        BaseKernel::Linux4 => prior >= st.ssthresh,
    };
    if halve {
        st.ssthresh = (st.ssthresh >> 1).max(2);
    }
}

impl Subflow {
    /// `Candidate`'s `(established, backup, srtt)`: what minRTT reads before the window.
    #[inline]
    pub(super) fn head(&self) -> (bool, bool, SimTime) { (self.state == SubState::Established && !self.pf, self.backup, self.tx.st.srtt) }

    /// What minRTT's selectors read of the subflow, as `build_views` would put it in its
    /// `SubflowView` (`SubflowView::candidate`); `want`: the next segment's size.
    #[inline]
    pub(super) fn candidate(&self, now: SimTime, want: u64) -> Candidate {
        let t = &self.tx;
        let wnd_ok = t.outstanding_bytes() + self.queued_bytes + want <= t.snd_wnd;
        Candidate {
            established: self.state == SubState::Established && !self.pf,
            backup: self.backup,
            has_space: has_space(t.st.ca_state, t.in_flight(), self.queued_bytes, t.cfg.mss, t.st.cwnd, t.pacing_ok(now), wnd_ok),
            srtt: t.st.srtt,
        }
    }
}
