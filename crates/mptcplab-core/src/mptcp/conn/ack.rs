//! A subflow's ACK at the sending end: the subflow's scoreboard and CC, the DATA_ACK
//! and the MPTCP-level send window, send-buffer auto-tuning, and the coupled
//! controllers' view of the sibling subflows.

use super::*;

impl Connection {
    pub(super) fn on_ack(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.sub as usize;
        if self.subflows[i].state != SubState::Established {
            return;
        }
        if self.subflows[i].pf {
            // v0.95 `mptcp_data_ack`: "A valid packet came in - subflow is operational
            // again" (`tp->pf = 0` on every segment the subflow receives).
            self.subflows[i].pf = false;
            self.update_status(now, i, "ack_received");
        }
        let meta_timer = self.policy.meta_retransmit_timer;
        if meta_timer {
            // tcp_ack stamps rcv_tstamp. (A stale subflow with a new rcv_tstamp is active
            // again, `mptcp_subflow_active`: the `pf` reset above.)
            self.subflows[i].up.rcv_tstamp = now;
        }
        let res = self.with_coupling(i, |tx, c| tx.on_ack(now, pkt.ack, pkt.sack_blocks(), c));
        // The subflow keeps the window its own ACKs advertise (Linux
        // tcp_ack_update_window on the subflow: only an ACK that advances snd_una, or a
        // larger window, updates it).
        // Linux 6.x `tcp_may_update_window` also takes a zero window (`|| !nwin`).
        let nwin = pkt.rwnd_edge.saturating_sub(pkt.data_ack);
        let from_subflow = self.policy.window_from_subflow;
        let s = &mut self.subflows[i];
        let tx = &mut s.tx;
        if res.snd_una_advanced || nwin > tx.snd_wnd || (from_subflow && nwin == 0) {
            let changed = tx.snd_wnd != nwin;
            tx.snd_wnd = nwin;
            tx.max_window = tx.max_window.max(nwin);
            if changed && tx.restart_on_entail && !res.snd_una_advanced && !s.queue.is_empty() {
                tx.idle_restart_check(now);
            }
        }
        if self.cfg.delay_samples && pkt.data_ack > self.snd.data_una {
            self.record_delay_samples(now, pkt.data_ack);
        }
        // Upstream `ack_update_msk` (options.c): the MPTCP window ends at the new DATA_ACK
        // plus the subflow's `snd_wnd` as `tcp_ack` left it, which ignored a smaller
        // window on an ACK that did not advance the subflow's snd_una: after such an ACK
        // the end lies past the receiver's edge by the DATA_ACK's advance, and what is
        // sent there is dropped (`MetaReceiver::drop_ofo_beyond_edge`).
        let edge = if from_subflow { pkt.data_ack.saturating_add(self.subflows[i].tx.snd_wnd) } else { pkt.rwnd_edge };
        let acked = self.snd.on_data_ack(pkt.data_ack, edge);
        if meta_timer {
            self.clean_una(now, acked);
        }
        if self.policy.pm_start == PmStart::FullyEstablished {
            self.check_fully_established(now, i, out);
        }
        self.push(now, out);
        if self.up.model_sndbuf {
            self.expand_sndbuf(i);
        }
    }

    /// On an ACK that DATA_ACKed `acked` bytes, `__mptcp_clean_una` stops the MPTCP
    /// retransmit timer when everything written is DATA_ACKed and restarts it otherwise.
    pub(super) fn clean_una(&mut self, now: SimTime, acked: u64) {
        if acked > 0 {
            if self.snd.data_una == self.snd.dsn_nxt && self.snd.data_una == self.snd.written {
                self.up.rtx_deadline = None;
            } else {
                self.up.reset_timer(now);
            }
        }
    }

    /// The first ACK on the initial subflow makes the connection fully established
    /// (options.c `check_fully_established`: any ACK carrying a DATA_ACK), which starts the
    /// path manager (`mptcp_pm_fully_established`).
    pub(super) fn check_fully_established(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        if !self.up.pm_notified && i == self.cfg.initial_path && self.cfg.mptcp {
            self.up.pm_notified = true;
            self.pm_established(now, i, out);
        }
    }

    /// Upstream `__mptcp_sync_sndbuf`: without `SO_SNDBUF` the connection's send buffer
    /// is tcp_wmem[0] plus every subflow's `sk_sndbuf`.
    pub(super) fn sync_sndbuf(&mut self) {
        if self.cfg.send_buffer_auto {
            self.snd.sndbuf = up::TCP_WMEM[0] + self.subflows.iter().filter(|s| s.state != SubState::Idle).map(|s| s.up.sndbuf).sum::<u64>();
        }
    }

    /// Upstream `tcp_check_space` -> `tcp_new_space` after an ACK on subflow `i`: while
    /// the application waits for send-buffer space (`SOCK_NOSPACE` on the socket the
    /// subflows share) and the subflow's cwnd is not full (`tcp_should_expand_sndbuf`),
    /// `tcp_sndbuf_expand`; the connection's buffer follows (`__mptcp_sync_sndbuf`).
    pub(super) fn expand_sndbuf(&mut self, i: usize) {
        if self.up.sndbuf_locked || !self.app_blocked() {
            return;
        }
        let t = &self.subflows[i].tx;
        if t.in_flight() >= t.st.cwnd {
            return;
        }
        let want = up::sndbuf_expand(t.cfg.mss, t.st.cwnd, self.up.sndbuf_factor);
        if want > self.subflows[i].up.sndbuf {
            self.subflows[i].up.sndbuf = want;
            self.sync_sndbuf();
        }
    }

    /// Run `f` on subflow `i`'s sender with the `Coupling` view its controller needs
    /// (sibling snapshots only for coupled controllers, and only if it reads them).
    pub(super) fn with_coupling<R>(&mut self, i: usize, f: impl FnOnce(&mut SubflowTx, &Coupling) -> R) -> R {
        if !self.subflows[i].tx.cc.needs_coupling() {
            return f(&mut self.subflows[i].tx, &Coupling::alone());
        }
        // Subflow `i`'s entry is taken now, before `f` changes it; the others when the
        // controller first reads them, which `f` cannot change (it borrows only `i`).
        let mine = sibling_view(&self.subflows[i]);
        let spare = Cell::new(std::mem::take(&mut self.siblings));
        let (before, rest) = self.subflows.split_at_mut(i);
        let (me, after) = rest.split_first_mut().expect("subflow index in range");
        let (before, after) = (&*before, &*after);
        let order = self.walk.order();
        let build = || {
            let mut v = spare.take();
            v.clear();
            v.extend(order.iter().map(|&j| match j.cmp(&i) {
                std::cmp::Ordering::Less => sibling_view(&before[j]),
                std::cmp::Ordering::Equal => mine,
                std::cmp::Ordering::Greater => sibling_view(&after[j - i - 1]),
            }));
            v
        };
        let lazy = LazySiblings::new(&build);
        let meta = self.cfg.mptcp.then_some(&self.meta_cc);
        let r = f(&mut me.tx, &Coupling::lazy(self.walk.pos(i), &lazy, meta));
        self.siblings = lazy.into_views().unwrap_or_else(|| spare.take());
        r
    }
}

/// What a coupled controller sees of a subflow (`Coupling`).
fn sibling_view(s: &Subflow) -> SiblingView {
    let t = &s.tx;
    SiblingView {
        cwnd: t.st.cwnd,
        ssthresh: t.st.ssthresh,
        srtt: t.st.srtt,
        min_rtt: t.st.min_rtt,
        in_flight: t.in_flight(),
        mss: t.cfg.mss,
        established: s.state == SubState::Established,
        in_slow_start: t.st.in_slow_start(),
        ca_state: t.st.ca_state,
        vars: t.cc.export(),
    }
}
