//! A subflow's output: the segments the scheduler queued on a subflow, cut into skbs
//! and GSO packets as the kernel does (`tcp_write_xmit`, `tcp_mss_split_point`),
//! within cwnd, pacing and the receive window; and the tail loss probe.

use super::*;

impl Connection {
    /// Transmit subflow `i`'s retransmissions and queued data as its cwnd and pacer allow.
    #[inline(always)]
    pub(super) fn drain(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        // Nothing to retransmit (`next_retransmit` finds nothing) and nothing queued: the
        // loop below would send nothing. Checked first, before the windows (issue 16: a
        // push drains every subflow, 8 at a k = 8 FatTree's connections).
        let s = &self.subflows[i];
        if s.queue.is_empty() && s.tx.sb.lost_out <= s.tx.sb.retrans_out {
            return;
        }
        // With a write queue of skbs: the segments of one GSO packet so far, and the most
        // one may hold.
        let (nagle, skbs) = (self.policy.subflow_nagle, self.policy.skb_write_queue);
        let (mut piece, max_segs) = if skbs { (0u32, self.subflows[i].tx.tso_segs()) } else { (0, 0) };
        while self.subflows[i].tx.can_send(now) {
            if let Some(idx) = self.subflows[i].tx.next_retransmit() {
                let (seq, len, dsn) = self.subflows[i].tx.retransmit(now, idx);
                self.emit_data(now, i, seq, len, dsn, true, false, out);
            } else if let Some(&(_, len, ..)) = self.subflows[i].queue.front() {
                // Subflows that run Nagle (upstream MPTCP pushes with the subflow's
                // `nonagle`, 0 by default: `mptcp_push_release` -> `tcp_push`); the last skb
                // of the write queue is the one it can hold.
                if nagle && self.subflows[i].queue.len() == 1 && self.subflows[i].tx.nagle_holds(len) {
                    break;
                }
                let Some((dsn, len, marked, skb_end)) = self.subflows[i].pop_queued() else { break };
                let seq = self.subflows[i].tx.send_new(now, len, dsn);
                let psh = if skbs { self.gso_psh(now, i, &mut piece, max_segs, dsn + len as u64, marked, skb_end) } else { marked };
                self.emit_data(now, i, seq, len, dsn, false, psh, out);
            } else {
                break;
            }
        }
    }

    /// Whether the new segment just sent on subflow `i` (ending at DSN `end`; `marked` by
    /// `tcp_mark_push`; `skb_end`: the last of its skb) leaves with PSH, as Linux 6.x puts
    /// it on the wire. `tcp_write_xmit` takes one skb at a time (`tcp_send_head`) and sends
    /// it in pieces of at most `max_segs` (`tcp_tso_segs`) segments, fewer where the cwnd,
    /// the peer's window or Nagle stops the next segment or the skb ends (its last
    /// segment, the next data another mapping, or a push's marked tail): a GSO packet
    /// never spans two skbs (`tcp_mss_split_point`, `tso_fragment`). `__tcp_transmit_skb` sets
    /// PSH on every piece of more than one segment ("Force a PSH flag on all (GSO)
    /// packets", Linux >= 4.9) and GSO keeps it on the piece's last segment
    /// (`tcp_gso_segment`). A one-segment piece carries the mark of its skb, if any.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gso_psh(&self, now: SimTime, i: usize, piece: &mut u32, max_segs: u32, end: u64, marked: bool, skb_end: bool) -> bool {
        *piece += 1;
        let s = &self.subflows[i];
        let ends = marked
            || skb_end
            || *piece >= max_segs
            || !s.tx.can_send(now)
            || match s.queue.front() {
                None => true,
                Some(&(dsn, len, ..)) => {
                    dsn != end || (s.queue.len() == 1 && s.tx.nagle_holds(len))
                }
            };
        if !ends {
            return false;
        }
        let psh = *piece > 1 || marked;
        *piece = 0;
        psh
    }

    /// Execute `Action::Push`: subflow `i` takes up to `bytes` (whole segments) of the
    /// send head, rewound data first, then new data, and sends what its cwnd allows.
    /// Returns whether it took anything.
    pub(super) fn push_on(&mut self, now: SimTime, i: usize, bytes: u64, out: &mut Vec<Packet>) -> bool {
        if i >= self.subflows.len() || self.subflows[i].state != SubState::Established {
            return false;
        }
        let mss = self.cfg.tcp.mss;
        // `mptcp_check_allowed_size`: a subflow whose `snd_wnd` is below the MPTCP window
        // left at the data's sequence gets that window (MPTCP_MIB_SNDWNDSHARED).
        let at = self.snd.reinject_head().map_or(self.snd.dsn_nxt, |r| r.0);
        // An skb holds at most `size_goal` bytes (`mptcp_sendmsg_frag` copies up to
        // `info->size_goal - skb->len`, then opens another).
        let goal = up::size_goal(self.subflows[i].tx.max_window, mss);
        if self.policy.skb_write_queue {
            // The last push left PSH on the write queue's tail skb (`tcp_push` ->
            // `tcp_mark_push`). `mptcp_sendmsg_frag` appends to that skb only if it has
            // room (`size_goal - skb->len > 0`) and its mapping continues unfrozen
            // (`mptcp_skb_can_collapse_to`); then the mark moves to the new end, set again
            // below. Otherwise it sets `eor`, `tcp_build_frag` opens a new skb and the old
            // one keeps its mark.
            let s = &mut self.subflows[i];
            let (frozen, full) = (s.tail_frozen, s.tail_skb_len >= goal);
            if let Some(back) = s.queue.back_mut() {
                if back.2 && !frozen && !full && back.0 + back.1 as u64 == at {
                    back.3 = false;
                }
            }
        }
        let tx = &mut self.subflows[i].tx;
        tx.snd_wnd = tx.snd_wnd.max(self.snd.rwnd_edge.saturating_sub(at));
        let (mut taken, mut first) = (0u64, None);
        // New data continues the last skb if that skb is unsent, unfrozen and ends where
        // the data starts (`mptcp_skb_can_collapse_to`; a short one grows through
        // `grow_tail`); otherwise the push starts a new skb (`mptcp_alloc_tx_skb`).
        let mut same_skb = {
            let s = &self.subflows[i];
            s.queue.back().is_some_and(|&(d, l, new, ..)| new && !s.tail_frozen && d + l as u64 == self.snd.dsn_nxt)
        };
        let mut opened = 0u32;
        while taken < bytes {
            let (dsn, len, new) = if let Some((d, l, _)) = self.snd.reinject_head() {
                self.snd.reinject.pop_front();
                self.snd.mark_sent_on(d, i);
                self.snd.clear_reinject_flag(d);
                self.subflows[i].sched.reinjected_segs += 1;
                self.stats.reinjections += 1;
                (d, l, false)
            } else if let Some(grown) = self.grow_tail(i, mss, bytes - taken) {
                // Appended to the unsent tail skb: no new queue entry.
                first = first.or(Some(grown.0));
                taken += grown.1 as u64;
                same_skb = true;
                continue;
            } else if let Some(l) = self.snd.next_new_len(mss.min((bytes - taken).min(u32::MAX as u64) as u32)) {
                // The push ends exactly at `bytes` (a data frag's end: `mptcp_sendmsg_frag`
                // copies no further than the frag), so its last skb may be short.
                (self.snd.take_new(l, i, now), l, true)
            } else {
                break;
            };
            first = first.or(Some(dsn));
            let s = &mut self.subflows[i];
            if new {
                if !same_skb || s.tail_skb_len + len as u64 > goal {
                    // The queue's last entry ends its skb.
                    if let Some(back) = s.queue.back_mut() {
                        back.4 = true;
                    }
                    s.tail_skb_start = dsn;
                    s.tail_skb_len = 0;
                    s.tail_frozen = false;
                    opened += 1;
                }
                s.tail_skb_len += len as u64;
            } else {
                // Rewound data continues an skb only where it continues the mapping.
                if let Some(back) = s.queue.back_mut() {
                    if back.2 || back.0 + back.1 as u64 != dsn {
                        back.4 = true;
                    }
                }
                opened += 1;
            }
            same_skb = new;
            s.queue.push_back((dsn, len, new, false, false));
            s.queued_bytes += len as u64;
            taken += len as u64;
        }
        let Some(first) = first else { return false };
        // `mptcp_push_release` -> `tcp_push` -> `tcp_mark_push`: the last skb of the
        // subflow's write queue carries PSH.
        if let Some(back) = self.subflows[i].queue.back_mut() {
            back.3 = true;
        }
        self.record_sched(now, i, "push", first, taken.min(u32::MAX as u64) as u32);
        let tx = &mut self.subflows[i].tx;
        if tx.restart_on_entail {
            for _ in 0..opened {
                if !tx.idle_restart_check(now) {
                    break;
                }
            }
        }
        self.drain(now, i, out);
        true
    }

    /// Upstream `mptcp_sendmsg_frag`: new data pushed to a subflow whose last queued skb is
    /// unsent, continues its mapping, is under the MSS (a segment Nagle holds) and was not
    /// split from a partly sent skb (`tail_frozen`) is appended to that skb
    /// (`mptcp_skb_can_collapse_to`, `tcp_skb_can_collapse_to`).
    /// Returns (the skb's DSN, bytes added).
    pub(super) fn grow_tail(&mut self, i: usize, mss: u32, limit: u64) -> Option<(u64, u32)> {
        if !self.policy.skb_write_queue {
            return None;
        }
        let &(dsn, len, new, ..) = self.subflows[i].queue.back()?;
        if !new || len >= mss || dsn + len as u64 != self.snd.dsn_nxt || self.subflows[i].tail_frozen {
            return None;
        }
        let add = self.snd.next_new_len((mss - len).min(limit.min(u32::MAX as u64) as u32))?;
        if !self.snd.extend_last(add, i) {
            return None;
        }
        let s = &mut self.subflows[i];
        if let Some(back) = s.queue.back_mut() {
            back.1 += add;
        }
        s.queued_bytes += add as u64;
        s.tail_skb_len += add as u64;
        Some((dsn, add))
    }

    /// Linux `tcp_send_loss_probe` on subflow `i`: one new segment of its queue if the
    /// peer's window takes it (past cwnd and Nagle: `tcp_write_xmit(..., TCP_NAGLE_OFF,
    /// push_one = 2)`), else the last segment again.
    pub(super) fn send_loss_probe(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        let s = &mut self.subflows[i];
        if s.queue.front().is_some_and(|&(_, len, ..)| s.tx.snd_wnd_allows(len)) {
            let Some((dsn, len, psh, _)) = s.pop_queued() else { return };
            let seq = s.tx.probe_new(now, len, dsn);
            self.emit_data(now, i, seq, len, dsn, false, psh, out);
        } else if let Some((seq, len, dsn)) = s.tx.probe_last(now) {
            self.emit_data(now, i, seq, len, dsn, true, false, out);
        }
    }

    #[inline]
    pub(super) fn emit_data(&mut self, now: SimTime, i: usize, seq: u32, len: u32, dsn: u64, retrans: bool, psh: bool, out: &mut Vec<Packet>) {
        let hdr = self.data_header();
        let s = &self.subflows[i];
        let mut p = Packet::new(PacketKind::Data, self.id, i as u16, s.route_fwd, len + hdr);
        p.seq = seq;
        p.len = len;
        p.dsn = dsn;
        p.ts = now;
        p.retrans = retrans;
        p.psh = psh;
        self.stats.data_segs_sent += 1;
        self.sent_mask |= sub_bit(i);
        out.push(p);
    }
}
