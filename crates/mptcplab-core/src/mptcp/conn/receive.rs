//! The receiving end of a connection: a subflow's data segments into the MPTCP
//! receive queue (reassembly by DSN, `tcp.receive_memory` admission), the reader, and
//! the ACKs with their DATA_ACK and window (Linux: `tcp_data_queue`,
//! `mptcp_data_ready`, `mptcp_cleanup_rbuf`, `__tcp_ack_snd_check`).

use super::*;

impl Connection {
    pub(super) fn on_data(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        if self.rcv.skb.is_some() {
            return self.on_data_skb(now, pkt, out);
        }
        let i = pkt.sub as usize;
        let Some(rx) = self.subflows[i].rx.as_mut() else { return };
        let o = rx.on_segment(now, pkt.seq, pkt.len);
        if o.new {
            if self.cfg.delay_samples {
                // Sender and receiver live in this one value: the first copy to arrive is
                // the one that carried the data (pkt.ts = its sending time).
                self.snd.note_arrival(pkt.dsn, i, pkt.ts);
            }
            self.rcv.on_data(pkt.dsn, pkt.len);
            if self.cfg.read_rate.is_none() {
                let n = self.rcv.unread;
                self.rcv.read(n);
            }
            self.after_delivery(now);
        }
        self.ack_as_decided(now, i, o.ack, out);
    }

    /// ACK now, or arm the delayed-ACK timer if it is not armed yet.
    #[inline(always)]
    pub(super) fn ack_as_decided(&mut self, now: SimTime, i: usize, ack: AckDecision, out: &mut Vec<Packet>) {
        match ack {
            AckDecision::Now => self.send_ack(now, i, out),
            AckDecision::Delay(d) => {
                let rx = self.subflows[i].rx.as_mut().unwrap_or_else(|| unreachable!());
                match rx.delack_deadline {
                    None => rx.delack_deadline = Some(d),
                    Some(armed) => match rx.rearm_delack(now, armed, d) {
                        Some(k) => rx.delack_deadline = Some(k),
                        None => self.send_ack(now, i, out),
                    },
                }
            }
        }
    }

    /// `tcp.receive_memory = "skb"` (mptcp/rcvmem.rs): the subflow admits the segment or
    /// drops it (M7), holds it, the MPTCP socket pulls what it may (M3, `mptcp_data_ready`)
    /// and the reader drains what is in order, pulling again (M4, `mptcp_recvmsg`).
    #[inline(never)]
    pub(super) fn on_data_skb(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.sub as usize;
        let b = self.rcv.rcvbuf;
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_mut() else { return };
        if after(pkt.seq.wrapping_add(pkt.len), rx.rcv_nxt) {
            let in_sequence = !after(pkt.seq, rx.rcv_nxt);
            match s.held.admit(b, in_sequence, rx.rcv_nxt) {
                Admission::Take => {}
                Admission::DropInSequence => {
                    self.stats.rcvq_drops += 1;
                    return self.send_ack(now, i, out);
                }
                Admission::DropOutOfOrder => {
                    self.stats.ofo_drops += 1;
                    return;
                }
            }
        }
        if after(pkt.seq.wrapping_add(pkt.len), rx.rcv_nxt) {
            rx.grow_window(pkt.len, !after(pkt.seq, rx.rcv_nxt), s.held.mem() + rcvmem::truesize(pkt.len) as u64);
        }
        let o = rx.on_segment_psh(now, pkt.seq, pkt.len, pkt.psh);
        if o.new {
            s.held.hold(pkt.seq, pkt.len, pkt.dsn);
            if self.cfg.delay_samples {
                self.snd.note_arrival(pkt.dsn, i, pkt.ts);
            }
        }
        // `tcp_data_queue` -> `tcp_data_ready` -> `mptcp_data_ready` moves the skb into the
        // MPTCP socket and wakes the reader.
        self.pull(i);
        if self.policy.ack_before_reader {
            // Linux 6.x: `tcp_ack_snd_check` runs next in the same softirq, before the woken
            // reader, so an immediate ACK's window counts the segment unread. Two segments
            // are ACKed then only if "the right edge of window advances far enough"
            // (`__tcp_ack_snd_check`: `rcv_nxt - copied_seq < sk_rcvlowat ||
            // __tcp_select_window(sk) >= tp->rcv_wnd`; a subflow's sk_rcvlowat is 0,
            // `mptcp_sockopt_sync_locked`, so only the window test counts); else the ACK
            // is delayed and the reader's `mptcp_cleanup_rbuf` sends it after the read.
            // Traced: docs/kernel.md, "Who sends the receiver's ACKs".
            // But `subflow_data_ready` (net/mptcp/subflow.c) first mandates an immediate
            // ACK (ICSK_ACK_NOW) when the MPTCP socket has nothing to read after the move
            // (`mptcp_data_avail(msk) < sk_rcvlowat`, out of order at the MPTCP level) and
            // more than rcv_mss is unacknowledged.
            let mut ack = o.ack;
            if o.window_test && self.rcv.unread > 0 {
                let l = self.subflows[i].rx.as_ref().and_then(|rx| rx.linux.as_ref());
                if let Some((cap, rcv_wnd)) = l.map(|l| (l.rcv_ssthresh, l.rcv_wnd)) {
                    if self.rcv.window_capped(cap) < rcv_wnd {
                        ack = AckDecision::Delay(o.delay_at);
                    }
                }
            }
            self.ack_as_decided(now, i, ack, out);
            // Then the woken reader, ending with `mptcp_cleanup_rbuf`.
            let copied = self.reader_reads(now);
            return self.cleanup_rbuf(now, copied, out);
        }
        // Otherwise the read, then the segment's ACK as `__tcp_ack_snd_check` decided
        // it, then the reader's cleanup.
        let copied = self.reader_reads(now);
        self.ack_as_decided(now, i, o.ack, out);
        self.cleanup_rbuf(now, copied, out);
    }

    /// The woken reader's `mptcp_recvmsg` up to its cleanup: it reads what is in order
    /// and pulls. Returns the bytes copied.
    pub(super) fn reader_reads(&mut self, now: SimTime) -> u64 {
        let read_before = self.rcv.read_total;
        self.read_and_pull();
        self.after_delivery(now);
        if let Some(m) = &self.rcv.skb {
            self.stats.rcv_rmem_max = self.stats.rcv_rmem_max.max(m.rmem);
        }
        if self.stats.rcv_stalled_at.is_none() && self.rcv.over() && self.rcv.unread == 0 {
            self.stats.rcv_stalled_at = Some(now);
        }
        self.rcv.read_total - read_before
    }

    /// Linux 6.x after the reader copied `copied` bytes (`mptcp_recvmsg` ->
    /// `mptcp_cleanup_rbuf`, net/mptcp/protocol.c): when the MPTCP socket's free space
    /// (`__mptcp_space`) is at least twice the window announced last (`old_wspace`),
    /// every subflow looks at its window; otherwise only a subflow with an ACK scheduled
    /// and more than rcv_mss unacknowledged, or a pushed segment while the MPTCP socket
    /// holds nothing (`mptcp_subflow_could_cleanup`). Each runs `__tcp_cleanup_rbuf`
    /// (net/ipv4/tcp.c): ACK when the scheduled ACK covers more than rcv_mss, or covers a
    /// pushed segment and the subflow holds nothing more; else when the window it would
    /// offer is at least twice what it offers now, and that is at most half its clamp.
    pub(super) fn cleanup_rbuf(&mut self, now: SimTime, copied: u64, out: &mut Vec<Packet>) {
        if copied == 0 {
            return;
        }
        let Some((space, rx_empty, new_window)) = self.rcv.skb.as_ref().map(|m| (m.space(), m.rmem == 0, m.window())) else { return };
        let cleanup = space > 0 && space >= 2 * self.rcv.old_wspace;
        for j in 0..self.subflows.len() {
            let s = &self.subflows[j];
            if s.state != SubState::Established {
                continue;
            }
            let Some(rx) = s.rx.as_ref() else { continue };
            let Some(l) = rx.linux.as_ref() else { continue };
            let scheduled = rx.delack_deadline.is_some();
            let unacked = rx.rcv_nxt.wrapping_sub(rx.rcv_wup);
            let past_mss = unacked > l.rcv_mss;
            if !cleanup && !(scheduled && (past_mss || (rx_empty && l.pushed != 0))) {
                continue;
            }
            // The receiver sends no data: never in ping-pong mode.
            let mut ack = scheduled && (past_mss || (l.pushed != 0 && s.held.mem() == 0));
            if !ack {
                let now_win = l.rcv_wnd.saturating_sub(unacked as u64);
                ack = 2 * now_win <= l.window_clamp() && new_window > 0 && new_window >= 2 * now_win;
            }
            if ack {
                self.send_ack(now, j, out);
            }
        }
    }

    /// The MPTCP socket takes subflow `i`'s in-order skbs until its memory is over its
    /// buffer (`__mptcp_move_skbs_from_subflow`: the test comes before each skb, so the
    /// skb that fills the hole waits like any other). Returns whether it took any.
    pub(super) fn pull(&mut self, i: usize) -> bool {
        let mut moved = false;
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_ref() else { return false };
        while let Some(h) = s.held.in_order_head(rx.rcv_nxt) {
            if self.rcv.over() {
                self.rcv.pull_stopped = true;
                break;
            }
            s.held.pop();
            self.rcv.take_skb(h.dsn, h.len, h.truesize, h.cap);
            moved = true;
        }
        moved
    }

    /// A reader that reads at once (no `read_rate`) drains the in-order data, then
    /// `__mptcp_move_skbs` walks every subflow, until nothing moves (no walk when no
    /// pull was stopped: it would find nothing).
    pub(super) fn read_and_pull(&mut self) {
        loop {
            if self.cfg.read_rate.is_none() {
                let n = self.rcv.unread;
                self.rcv.read(n);
            }
            if !self.rcv.pull_stopped {
                break;
            }
            self.rcv.pull_stopped = false;
            let mut moved = false;
            for j in 0..self.subflows.len() {
                moved |= self.pull(j);
            }
            if !moved {
                break;
            }
        }
    }

    /// Bookkeeping after data reached the application's queue.
    #[inline(always)]
    pub(super) fn after_delivery(&mut self, now: SimTime) {
        self.note_app_progress(now);
        self.stats.ooo_max_bytes = self.stats.ooo_max_bytes.max(self.rcv.ooo_bytes);
        self.stats.rcvbuf_max_bytes = self.stats.rcvbuf_max_bytes.max(self.rcv.occupancy());
        if self.completed_at.is_none() {
            if let Some(t) = self.app.total() {
                if self.rcv.read_total >= t {
                    self.completed_at = Some(now);
                }
            }
        }
    }

    pub(super) fn send_ack(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        // Linux receive memory: the subflow's header window stops at its rcv_ssthresh
        // (`__tcp_select_window`), which grows by `tcp_grow_window` per data segment; the
        // MPTCP edge this ACK announces is DATA_ACK + that window unless it was further.
        let cap = self.subflows[i].rx.as_ref().and_then(|rx| rx.linux.as_ref()).map_or(u64::MAX, |l| l.rcv_ssthresh);
        let edge = self.rcv.window_edge_capped(cap);
        self.rcv.advertised_edge = edge;
        let data_ack = self.rcv.rcv_nxt;
        self.rcv.old_wspace = edge.saturating_sub(data_ack);
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_mut() else { return };
        let mut p = Packet::new(PacketKind::Ack, self.id, i as u16, s.route_rev, 0);
        p.ack = rx.rcv_nxt;
        p.n_sack = rx.sack_blocks(&mut p.sack);
        if let (true, Some(max)) = (self.cfg.mptcp, self.policy.max_sack_blocks) {
            // `tcp_established_options` gives MPTCP's options precedence and fits SACK
            // blocks into what the 40 option bytes leave after the timestamps (12) and the
            // DSS with a 64-bit DATA_ACK (12): one block, the most recent. (The kernel
            // backend's captures: 66 027 server ACKs in seven traced runs, every one with a
            // 44-byte TCP header, i.e. timestamps + that 12-byte DSS.)
            p.n_sack = p.n_sack.min(max);
        }
        p.data_ack = data_ack;
        p.rwnd_edge = edge;
        p.ts = now;
        rx.on_ack_sent();
        // `__tcp_select_window` (mptcp_space) with less than half the window free ends
        // the quick ACKs.
        if self.rcv.skb.as_ref().is_some_and(|m| m.below_half()) {
            rx.end_quickack();
        }
        if let Some(l) = rx.linux.as_mut() {
            l.rcv_wnd = edge.saturating_sub(data_ack);
        }
        p.wire_bytes = TCP_HEADER_BYTES + if self.cfg.mptcp { 12 } else { 0 } + if p.n_sack > 0 { 2 + 8 * p.n_sack as u32 } else { 0 };
        self.stats.acks_sent += 1;
        out.push(p);
    }

    /// The application read `max` bytes; send a window update when the window opened
    /// by at least two segments (Linux `tcp_cleanup_rbuf`), or with Linux receive memory
    /// as `mptcp_cleanup_rbuf` decides (`cleanup_rbuf`).
    pub fn app_read(&mut self, now: SimTime, max: u64, out: &mut Vec<Packet>) {
        self.timer_scope = u64::MAX;
        let read_before = self.rcv.read_total;
        self.rcv.read(max);
        if self.rcv.skb.is_some() {
            // `mptcp_recvmsg` -> `__mptcp_move_skbs`: reading made room.
            for j in 0..self.subflows.len() {
                self.pull(j);
            }
        }
        self.note_app_progress(now);
        if let Some(t) = self.app.total() {
            if self.completed_at.is_none() && self.rcv.read_total >= t {
                self.completed_at = Some(now);
            }
        }
        if self.rcv.skb.is_some() {
            return self.cleanup_rbuf(now, self.rcv.read_total - read_before, out);
        }
        let edge = self.rcv.window_edge();
        if edge >= self.rcv.advertised_edge + 2 * self.cfg.tcp.mss as u64 {
            if let Some(i) = self.subflows.iter().position(|s| s.rx.is_some() && s.state == SubState::Established) {
                self.send_ack(now, i, out);
            }
        }
    }

    /// Tell the application how far its data has come (a stream logs its frames).
    #[inline]
    pub(super) fn note_app_progress(&mut self, now: SimTime) {
        self.app.note_progress(now, self.snd.written, self.snd.dsn_nxt, self.snd.data_una, self.rcv.read_total);
    }
}
