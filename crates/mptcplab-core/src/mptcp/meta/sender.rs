//! The sending end's connection level: the data sequence space the application writes
//! into, the bounded shared send buffer (payload bytes, or the upstream stack's frag
//! charge), the mappings handed to subflows and not yet DATA_ACKed, and the reinjection
//! queue (RFC 8684 §3.3.1; reference `tcp.md` §1.5).

use crate::mptcp::upstream;
use crate::units::SimTime;
use std::collections::VecDeque;

/// No copy of the segment has reached the receiver yet (`MetaSeg::via`).
pub const VIA_NONE: u16 = u16::MAX;

/// One mapping handed to a subflow and not yet DATA_ACKed. 24 bytes: the times that only
/// delay samples read live beside it, in `MetaSender::times` (issue 14: walked on every
/// DATA_ACK, the queue of 1 000 connections was 12 MB at 48 bytes a mapping).
#[derive(Clone, Copy, Debug)]
pub struct MetaSeg {
    pub dsn: u64,
    /// Bit i set: sent on subflow i (Linux `path_mask`).
    pub path_mask: u64,
    pub len: u32,
    /// The subflow whose copy reached the receiver first (`VIA_NONE`: none yet), recorded
    /// only by connections that collect delay samples.
    pub via: u16,
    pub reinject_queued: bool,
}

impl MetaSeg {
    /// A mapping sent on the subflows of `path_mask`, not arrived yet.
    pub fn new(dsn: u64, len: u32, path_mask: u64) -> MetaSeg {
        MetaSeg { dsn, len, path_mask, reinject_queued: false, via: VIA_NONE }
    }
}

/// A mapping's times, for delay samples (`MetaSender::times`).
#[derive(Clone, Copy, Debug)]
pub struct SegTimes {
    /// When the MPTCP level took the data from the send buffer.
    pub taken_at: SimTime,
    /// When the copy that reached the receiver first was sent.
    pub via_sent_at: SimTime,
}

pub struct MetaSender {
    /// Bytes the application has written (the data sequence space used so far).
    pub written: u64,
    pub data_una: u64,
    /// Next data sequence number never handed to a subflow.
    pub dsn_nxt: u64,
    pub sndbuf: u64,
    /// Right edge of the peer's connection-level receive window.
    pub rwnd_edge: u64,
    /// Largest window the peer ever advertised (for sender-side SWS avoidance).
    pub max_rwnd: u64,
    pub segs: VecDeque<MetaSeg>,
    /// With `record_times` (the connection collects delay samples): each mapping's times,
    /// in step with `segs` (same length, same order). Empty otherwise.
    pub times: VecDeque<SegTimes>,
    pub record_times: bool,
    pub reinject: VecDeque<(u64, u32)>,
    /// Linux 6.x accounting (`stack::SendMemory::Frags`): `sndbuf` is the MPTCP socket's
    /// `sk_sndbuf` against its `sk_wmem_queued` (payload plus data-frag headers), a writer
    /// fills whole page frags, and a blocked writer waits until the buffer is writeable
    /// again (`upstream::msk_write_limit`, `msk_writeable`). Otherwise `sndbuf` bounds
    /// the payload written and not DATA_ACKed.
    pub frag_charge: bool,
    /// `SOCK_NOSPACE` under `frag_charge`: the writer sleeps in `sk_stream_wait_memory`.
    pub nospace: bool,
    /// Upstream: no MPTCP-level silly-window avoidance. `mptcp_sendmsg_frag` caps a frag
    /// at the window left (`mptcp_check_allowed_size`), so a window that opens by 4 B
    /// sends 4 B (measured: note M5).
    pub fill_window: bool,
}

impl MetaSender {
    pub fn new(sndbuf: u64, rwnd: u64) -> Self {
        MetaSender { written: 0, data_una: 0, dsn_nxt: 0, sndbuf, rwnd_edge: rwnd, max_rwnd: rwnd, segs: VecDeque::new(), times: VecDeque::new(), record_times: false, reinject: VecDeque::new(), frag_charge: false, nospace: false, fill_window: false }
    }

    /// The highest data sequence the buffer can hold now: `sndbuf` bytes past `data_una`,
    /// or under `frag_charge` the end of the page frag where the charge reaches `sndbuf`.
    pub fn write_limit(&self) -> u64 {
        if self.frag_charge {
            upstream::msk_write_limit(self.data_una, self.sndbuf)
        } else {
            self.data_una + self.sndbuf
        }
    }

    /// Free space in the send buffer (it holds what is written and not DATA_ACKed).
    pub fn free_space(&self) -> u64 {
        // `mptcp_send_limit`: nothing while the writer sleeps or once `sk_wmem_queued >=
        // sk_sndbuf`; else up to the end of the page frag where it reaches `sk_sndbuf`.
        if self.frag_charge && (self.nospace || upstream::msk_wmem_queued(self.data_una, self.written) >= self.sndbuf) {
            return 0;
        }
        self.write_limit().saturating_sub(self.written)
    }

    /// Under `frag_charge`: a writer that wants more and finds no space goes to sleep
    /// (`wait_for_memory` in `mptcp_sendmsg` sets `SOCK_NOSPACE`); one asleep is woken
    /// once the buffer is writeable (`sk_stream_write_space`).
    pub fn update_nospace(&mut self, wants_more: bool) {
        let wmem = upstream::msk_wmem_queued(self.data_una, self.written);
        if self.nospace {
            self.nospace = !upstream::msk_writeable(wmem, self.sndbuf);
        } else if wants_more && wmem >= self.sndbuf {
            self.nospace = true;
        }
    }

    /// The application wrote `n` bytes.
    pub fn write(&mut self, n: u64) { self.written += n.min(self.free_space()); }

    pub fn unsent(&self) -> u64 { self.written - self.dsn_nxt }

    /// Size of the next new segment, limited by the MSS, the data and the peer's window.
    /// Sender-side SWS avoidance (RFC 1122 §4.2.3.4): a short segment only when at least
    /// half the largest advertised window is open.
    pub fn next_new_len(&self, mss: u32) -> Option<u32> {
        let want = self.unsent().min(mss as u64);
        if want == 0 {
            return None;
        }
        let space = self.rwnd_edge.saturating_sub(self.dsn_nxt);
        if space >= want {
            Some(want as u32)
        } else if space > 0 && (self.fill_window || space * 2 >= self.max_rwnd) {
            Some(space as u32)
        } else {
            None
        }
    }


    /// The MPTCP level takes `len` new bytes from the send buffer for subflow `sub`.
    pub fn take_new(&mut self, len: u32, sub: usize, now: SimTime) -> u64 {
        let dsn = self.dsn_nxt;
        self.dsn_nxt += len as u64;
        self.segs.push_back(MetaSeg::new(dsn, len, 1 << sub));
        if self.record_times {
            self.times.push_back(SegTimes { taken_at: now, via_sent_at: SimTime::ZERO });
        }
        dsn
    }

    /// Grow the last mapping, taken for subflow `sub` alone and not sent yet, by `len` new
    /// bytes (the caller checked that it ends at `dsn_nxt`). False when it cannot.
    pub fn extend_last(&mut self, len: u32, sub: usize) -> bool {
        match self.segs.back_mut() {
            Some(s) if s.path_mask == 1 << sub && !s.reinject_queued && s.dsn + s.len as u64 == self.dsn_nxt => {
                s.len += len;
                self.dsn_nxt += len as u64;
                true
            }
            _ => false,
        }
    }

    /// A copy of the segment starting at `dsn`, sent on subflow `sub` at `sent_at`,
    /// reached the receiver; the first such copy is the one that carried it.
    pub fn note_arrival(&mut self, dsn: u64, sub: usize, sent_at: SimTime) {
        if let Some(i) = self.seg_index(dsn) {
            let s = &mut self.segs[i];
            if s.via == VIA_NONE {
                s.via = sub as u16;
                if let Some(t) = self.times.get_mut(i) {
                    t.via_sent_at = sent_at;
                }
            }
        }
    }

    pub fn seg_index(&self, dsn: u64) -> Option<usize> { self.segs.binary_search_by(|s| s.dsn.cmp(&dsn)).ok() }

    pub fn mark_sent_on(&mut self, dsn: u64, sub: usize) {
        if let Some(i) = self.seg_index(dsn) {
            self.segs[i].path_mask |= 1 << sub;
        }
    }

    /// DATA_ACK and window update from any subflow.
    #[inline]
    pub fn on_data_ack(&mut self, data_ack: u64, rwnd_edge: u64) -> u64 {
        let mut acked = 0;
        if data_ack > self.data_una {
            acked = data_ack - self.data_una;
            self.data_una = data_ack;
            while let Some(s) = self.segs.front() {
                if s.dsn + s.len as u64 > data_ack {
                    break;
                }
                self.segs.pop_front();
                if self.record_times {
                    self.times.pop_front();
                }
            }
            while let Some(&(d, l)) = self.reinject.front() {
                if d + l as u64 > data_ack {
                    break;
                }
                self.reinject.pop_front();
            }
            crate::sim::shrink_sparse(&mut self.segs, 32);
            crate::sim::shrink_sparse(&mut self.times, 32);
        }
        if rwnd_edge > self.rwnd_edge {
            self.rwnd_edge = rwnd_edge;
            self.max_rwnd = self.max_rwnd.max(rwnd_edge - self.data_una);
        }
        acked
    }

    /// Queue data of a failed subflow for another one (Linux `mptcp_reinject_data`).
    pub fn queue_reinject(&mut self, dsn: u64, len: u32) {
        if dsn + len as u64 <= self.data_una {
            return;
        }
        if let Some(i) = self.seg_index(dsn) {
            if !self.segs[i].reinject_queued {
                self.segs[i].reinject_queued = true;
                self.reinject.push_back((dsn, len));
            }
        }
    }

    /// Upstream `__mptcp_retransmit_pending_data`: every mapping not yet DATA_ACKed is
    /// to be sent again, oldest first, before any new data (the send head moves back to
    /// the oldest frag of the retransmission queue).
    pub fn rewind_all(&mut self) {
        self.reinject.clear();
        for s in self.segs.iter_mut() {
            s.reinject_queued = true;
            self.reinject.push_back((s.dsn, s.len));
        }
    }

    /// The mapping at `dsn` left the reinjection queue: it may be queued again.
    pub fn clear_reinject_flag(&mut self, dsn: u64) {
        if let Some(i) = self.seg_index(dsn) {
            self.segs[i].reinject_queued = false;
        }
    }

    /// Pop the next reinjection that is still useful.
    #[inline]
    pub fn reinject_head(&mut self) -> Option<(u64, u32, u64)> {
        while let Some(&(d, l)) = self.reinject.front() {
            if d + l as u64 <= self.data_una {
                self.reinject.pop_front();
                continue;
            }
            let mask = self.seg_index(d).map_or(0, |i| self.segs[i].path_mask);
            return Some((d, l, mask));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_upstream_accounting_the_writer_sleeps_until_data_acks_free_a_third() {
        use crate::mptcp::upstream::{locked_sndbuf, msk_wmem_queued, DFRAG_DATA_BYTES as D};
        let mut s = MetaSender::new(locked_sndbuf(100_000), 1 << 30);
        s.frag_charge = true;
        // 200 000 bytes of sk_sndbuf: the writer fills 7 frags (229 096 payload bytes;
        // 6 frags charge 196 608 < 200 000).
        s.write(u64::MAX);
        assert_eq!(s.written, 7 * D);
        assert_eq!(s.free_space(), 0);
        s.update_nospace(true);
        assert!(s.nospace, "full: the writer sleeps (SOCK_NOSPACE)");
        // DATA_ACK of two frags: 5 frags charged (163 840) > 2/3 of 200 000: still asleep.
        s.on_data_ack(2 * D, 1 << 30);
        s.update_nospace(true);
        assert!(s.nospace);
        assert_eq!(s.free_space(), 0, "asleep: nothing written although wmem < sndbuf");
        // One more frag: 131 072 charged, 68 928 free >= 65 536: woken, fills again.
        s.on_data_ack(3 * D, 1 << 30);
        s.update_nospace(true);
        assert!(!s.nospace);
        s.write(u64::MAX);
        assert_eq!(s.written, 10 * D);
        assert!(msk_wmem_queued(s.data_una, s.written) >= s.sndbuf);
        // Payload accounting (the default) is untouched: the buffer bounds the payload.
        let mut p = MetaSender::new(200_000, 1 << 30);
        p.write(u64::MAX);
        assert_eq!(p.written, 200_000);
    }

    #[test]
    fn the_last_mapping_grows_only_while_it_is_one_subflows_and_the_newest() {
        let mut s = MetaSender::new(1 << 20, 1 << 20);
        s.write(10_000);
        let d = s.take_new(4, 1, SimTime::ZERO);
        assert!(s.extend_last(1420, 1), "the tail skb of subflow 1 takes the next bytes");
        assert_eq!((s.segs.back().unwrap().dsn, s.segs.back().unwrap().len, s.dsn_nxt), (d, 1424, 1424));
        assert!(!s.extend_last(10, 0), "another subflow's data starts a new mapping");
        s.take_new(100, 0, SimTime::ZERO);
        s.segs.back_mut().unwrap().path_mask |= 1 << 1;
        assert!(!s.extend_last(10, 0), "a mapping sent on two subflows is frozen");
        assert_eq!(s.dsn_nxt, 1524);
    }

    #[test]
    fn the_sender_respects_buffer_window_and_mss() {
        let mut s = MetaSender::new(4000, 2500);
        s.write(10_000);
        assert_eq!(s.written, 4000);
        assert_eq!(s.free_space(), 0);
        assert_eq!(s.next_new_len(1448), Some(1448));
        s.take_new(1448, 0, SimTime::ZERO);
        // 1052 bytes of window left < half of 2500: no short segment (SWS avoidance).
        assert_eq!(s.next_new_len(1448), None);
        assert!(s.unsent() > 0 && s.next_new_len(1448).is_none(), "window-limited");
        s.on_data_ack(1448, 1448 + 2500);
        assert_eq!(s.segs.len(), 0);
        s.write(10_000);
        assert_eq!(s.written, 1448 + 4000);
        // A window smaller than one MSS is used whole.
        let mut tiny = MetaSender::new(4000, 1000);
        tiny.write(4000);
        assert_eq!(tiny.next_new_len(1448), Some(1000));
        tiny.take_new(1000, 0, SimTime::ZERO);
        assert_eq!(tiny.next_new_len(1448), None);
    }
}
