//! Connection-level (meta) state: the 64-bit data sequence space, the bounded shared
//! send buffer, DATA_ACK and the shared receive buffer with its out-of-order queue
//! (RFC 8684 §3.3; reference `tcp.md` §1.5).

use crate::mptcp::rcvmem::RcvMem;
use crate::mptcp::upstream;
use crate::tcp::BufferAccounting;
use crate::units::SimTime;
use std::collections::VecDeque;

/// No copy of the segment has reached the receiver yet (`MetaSeg::via`).
pub const VIA_NONE: u16 = u16::MAX;

/// One mapping handed to a subflow and not yet DATA_ACKed.
#[derive(Clone, Copy, Debug)]
pub struct MetaSeg {
    pub dsn: u64,
    pub len: u32,
    /// Bit i set: sent on subflow i (Linux `path_mask`).
    pub path_mask: u64,
    pub reinject_queued: bool,
    /// The subflow whose copy reached the receiver first (`VIA_NONE`: none yet), recorded
    /// only by connections that collect delay samples.
    pub via: u16,
    /// When the MPTCP level took the data from the send buffer.
    pub taken_at: SimTime,
    /// When the copy that reached the receiver first was sent.
    pub via_sent_at: SimTime,
}

impl MetaSeg {
    /// A mapping taken at `taken_at`, sent on the subflows of `path_mask`, not arrived yet.
    pub fn new(dsn: u64, len: u32, path_mask: u64, taken_at: SimTime) -> MetaSeg {
        MetaSeg { dsn, len, path_mask, reinject_queued: false, via: VIA_NONE, taken_at, via_sent_at: SimTime::ZERO }
    }
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
        MetaSender { written: 0, data_una: 0, dsn_nxt: 0, sndbuf, rwnd_edge: rwnd, max_rwnd: rwnd, segs: VecDeque::new(), reinject: VecDeque::new(), frag_charge: false, nospace: false, fill_window: false }
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
        self.segs.push_back(MetaSeg::new(dsn, len, 1 << sub, now));
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
                s.via_sent_at = sent_at;
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
            }
            while let Some(&(d, l)) = self.reinject.front() {
                if d + l as u64 > data_ack {
                    break;
                }
                self.reinject.pop_front();
            }
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

/// Receive side: in-order delivery, out-of-order queue, bounded shared buffer.
pub struct MetaReceiver {
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted, disjoint and not touching. Arrivals are
    /// mostly in increasing order, so a deque with appends at the back is the fast case.
    ooo: VecDeque<(u64, u64)>,
    pub ooo_bytes: u64,
    pub rcvbuf: u64,
    /// Delivered in order but not yet read by the application.
    pub unread: u64,
    pub read_total: u64,
    edge: u64,
    pub duplicate_bytes: u64,
    pub beyond_window: u64,
    /// Upstream (`mptcp_data_queue_ofo`): an out-of-order skb that ends beyond the right
    /// edge the receiver has advertised (`msk->rcv_wnd_sent`) is dropped at the MPTCP
    /// level after its subflow has ACKed it (`MPTCP_MIB_NODSSWINDOW`, "NoDSSInWindow");
    /// only an MPTCP-level retransmission brings it back. Off: such data is an error.
    pub drop_ofo_beyond_edge: bool,
    /// Skbs dropped that way.
    pub nodss_window: u64,
    accounting: BufferAccounting,
    mss: u64,
    /// `tcp.receive_memory = "skb"`: the MPTCP socket's skbs and the window they leave
    /// (then `rcvbuf` is its `sk_rcvbuf` in truesize bytes).
    pub skb: Option<RcvMem>,
    /// The right edge the last ACK announced (DATA_ACK + window).
    pub advertised_edge: u64,
    /// `msk->old_wspace`: the window the last ACK announced (edge - DATA_ACK).
    pub old_wspace: u64,
    /// `tcp.receive_memory = "skb"`: a pull stopped at the gate with in-order data left
    /// in a subflow since the last walk over every subflow. Only then can a walk move
    /// anything (a subflow's data comes into order only by its own arrivals, each
    /// followed by its own pull).
    pub pull_stopped: bool,
}

/// The largest window a SYN or SYN-ACK can carry: its window field is never scaled
/// (RFC 7323 §2.2).
pub const SYN_WINDOW_MAX: u64 = 65_535;

impl MetaReceiver {
    pub fn new(rcvbuf: u64) -> Self { Self::with_accounting(rcvbuf, BufferAccounting::Payload, 1448) }

    pub fn with_accounting(rcvbuf: u64, accounting: BufferAccounting, mss: u32) -> Self {
        let mut r = MetaReceiver { rcv_nxt: 0, ooo: VecDeque::new(), ooo_bytes: 0, rcvbuf, unread: 0, read_total: 0, edge: 0, duplicate_bytes: 0, beyond_window: 0, drop_ofo_beyond_edge: false, nodss_window: 0, accounting, mss: mss as u64, skb: None, advertised_edge: 0, old_wspace: 0, pull_stopped: false };
        r.window_edge();
        r
    }

    /// Hold skbs as Linux 6.x does (`tcp.receive_memory = "skb"`): `rcvbuf` becomes the
    /// MPTCP socket's `sk_rcvbuf` and the window follows its memory from the start.
    pub fn set_skb_memory(&mut self, m: RcvMem) {
        self.rcvbuf = m.sk_rcvbuf;
        self.skb = Some(m);
        self.edge = 0;
        self.handshake_edge();
    }

    /// Linux receive memory: the edge the MP_CAPABLE SYN-ACK announces, and where the
    /// MPTCP edge (`rcv_wnd_sent`) starts. A SYN-ACK's window field is never scaled (RFC
    /// 7323 §2.2), so it offers the memory window but at most 65 535 B
    /// (`tcp_select_initial_window` leaves rcv_wnd above that at these buffers: the kernel
    /// backend's SYN-ACKs carry 65 535); the ACKs after it move the edge by their
    /// rcv_ssthresh-capped windows (`window_edge_capped`).
    pub fn handshake_edge(&mut self) -> u64 {
        let window = self.skb.as_ref().map_or(u64::MAX, |m| m.window()).min(SYN_WINDOW_MAX);
        self.edge = self.edge.max(self.rcv_nxt + window);
        self.edge
    }

    /// The edge announced last, without recomputing it (an MP_JOIN SYN-ACK carries no
    /// DSS, so the sender's MPTCP window never reads its window: `ack_update_msk`).
    pub fn edge(&self) -> u64 { self.edge }

    /// The receive window scale a capture shows for this receiver: `RcvMem`'s under
    /// `skb` memory, else the 7 of Linux's default tcp_rmem[2] (6 MiB).
    pub fn pcap_wscale(&self) -> u8 { self.skb.as_ref().map_or(7, |m| m.rcv_wscale as u8) }

    /// Buffer occupancy in payload bytes (unread in-order data + out-of-order queue).
    pub fn occupancy(&self) -> u64 { self.unread + self.ooo_bytes }

    /// Right edge of the advertised window. The window is the free buffer space,
    /// `rcvbuf - (unread + out-of-order)`, relative to DATA_ACK (reference `tcp.md` §1.5;
    /// Linux `__tcp_select_window` on the meta socket, RFC 8684 §3.3.4), and the edge
    /// never moves left (RFC 793, RFC 8684 §3.3.5): out-of-order data shrinks the
    /// window it sits in, as in Linux.
    #[inline]
    pub fn window_edge(&mut self) -> u64 { self.window_edge_capped(u64::MAX) }

    /// The edge an ACK announces when its subflow's header window is at most `cap`
    /// bytes (Linux 6.18 `__tcp_select_window`: free_space = min(free_space,
    /// tp->rcv_ssthresh), aligned up to the window scale; `mptcp_set_rwin` keeps the
    /// MPTCP edge where it was when that is further right). `u64::MAX`: no cap.
    #[inline]
    pub fn window_edge_capped(&mut self, cap: u64) -> u64 {
        let e = self.rcv_nxt + self.window_capped(cap);
        self.edge = self.edge.max(e);
        self.edge
    }

    /// The window an ACK would offer now with its subflow's header window at most `cap`
    /// (`__tcp_select_window`), before the edge's never-move-left rule.
    #[inline]
    pub fn window_capped(&self, cap: u64) -> u64 {
        let held = self.unread + self.ooo_bytes;
        if let Some(m) = &self.skb {
            // The MPTCP socket's window (`mptcp_space`), whose right edge every subflow
            // advertises and which never moves left (`mptcp_set_rwin`: rcv_wnd_sent),
            // at most `cap` aligned up to the window scale.
            let w = m.window();
            if cap == u64::MAX { w } else { w.min(cap.div_ceil(1 << m.rcv_wscale) << m.rcv_wscale) }
        } else {
            match self.accounting {
            BufferAccounting::Payload => self.rcvbuf.saturating_sub(held),
            BufferAccounting::Linux => {
                let free = self.rcvbuf.saturating_sub(2 * held) / 2;
                if free < self.mss.min(self.rcvbuf / 2) { 0 } else { free }
            }
            }
        }
    }

    /// A data segment arrived on some subflow. Returns bytes newly delivered in order.
    #[inline]
    pub fn on_data(&mut self, dsn: u64, len: u32) -> u64 {
        let end = dsn + len as u64;
        if end <= self.rcv_nxt {
            self.duplicate_bytes += len as u64;
            return 0;
        }
        if end > self.edge {
            if self.drop_ofo_beyond_edge {
                // In sequence (`map_seq == ack_seq`, or older) it is taken whatever the
                // edge; out of order it is dropped.
                if dsn > self.rcv_nxt {
                    self.nodss_window += 1;
                    return 0;
                }
            } else {
                self.beyond_window += 1;
            }
        }
        if dsn <= self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            // Pull contiguous out-of-order data.
            while let Some(&(s, e)) = self.ooo.front() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.pop_front();
                self.ooo_bytes -= e - s;
                if e > self.rcv_nxt {
                    self.rcv_nxt = e;
                }
            }
            let delivered = self.rcv_nxt - before;
            self.unread += delivered;
            return delivered;
        }
        // Out of order. Fast path: at or beyond the end of the last range.
        if let Some(last) = self.ooo.back_mut() {
            if dsn >= last.0 && dsn <= last.1 {
                if end > last.1 {
                    self.duplicate_bytes += last.1 - dsn;
                    self.ooo_bytes += end - last.1;
                    last.1 = end;
                } else {
                    self.duplicate_bytes += len as u64;
                }
                return 0;
            }
        }
        // General case: merge with every range that overlaps or touches [dsn, end).
        let i = self.ooo.partition_point(|&(_, e)| e < dsn);
        let mut j = i;
        let (mut s, mut e) = (dsn, end);
        let mut covered = 0;
        while j < self.ooo.len() && self.ooo[j].0 <= end {
            let (rs, re) = self.ooo[j];
            covered += re.min(end).saturating_sub(rs.max(dsn));
            s = s.min(rs);
            e = e.max(re);
            self.ooo_bytes -= re - rs;
            j += 1;
        }
        self.duplicate_bytes += covered;
        self.ooo.drain(i..j);
        self.ooo.insert(i, (s, e));
        self.ooo_bytes += e - s;
        0
    }

    /// The application reads up to `max` bytes.
    pub fn read(&mut self, max: u64) -> u64 {
        let n = self.unread.min(max);
        self.unread -= n;
        self.read_total += n;
        if let Some(m) = self.skb.as_mut() {
            m.consumed(self.rcv_nxt - self.unread);
        }
        n
    }

    /// Under `skb`: the MPTCP socket takes one skb from a subflow (`__mptcp_move_skb`).
    /// Returns the bytes newly in order.
    pub fn take_skb(&mut self, dsn: u64, len: u32, truesize: u32, cap: u32) -> u64 {
        if self.drop_ofo_beyond_edge && dsn > self.rcv_nxt && dsn + len as u64 > self.edge {
            self.nodss_window += 1;
            return 0; // `mptcp_drop`: freed, never charged
        }
        let before = self.rcv_nxt;
        let delivered = self.on_data(dsn, len);
        if let Some(m) = self.skb.as_mut() {
            m.enter(dsn, len, truesize, cap, before, self.rcv_nxt);
        }
        delivered
    }

    /// Under `skb`: the MPTCP socket is over its buffer, so no subflow's data is pulled.
    pub fn over(&self) -> bool { self.skb.as_ref().is_some_and(|m| m.over()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux 6.18 with its receive memory: an ACK's window is at most its subflow's
    /// rcv_ssthresh, rounded up to the window scale (`__tcp_select_window`), and the MPTCP
    /// edge never moves left (`mptcp_set_rwin`: rcv_wnd_sent). Traced on the kernel, the
    /// cap bounded 85 of 299 advances of the edge and 81 % of its movement (docs/kernel.md,
    /// "What moves the kernel's window edge", item 1).
    #[test]
    fn an_acks_window_stops_at_its_subflows_rcv_ssthresh_and_the_edge_never_moves_left() {
        let mut r = MetaReceiver::with_accounting(200_000, BufferAccounting::Payload, 1424);
        r.set_skb_memory(crate::mptcp::rcvmem::RcvMem::new(326_114, true, 1424));
        let unit = 1u64 << r.skb.as_ref().unwrap().rcv_wscale;
        assert!(unit > 1, "a 326 114-B buffer scales its window");
        assert_eq!(r.edge(), 65_535, "the SYN-ACK offers at most 65 535 B, unscaled");
        assert_eq!(r.window_edge(), 201_276, "the memory window, ALIGN4(158 x 326 114 / 256)");
        // 150 000 B delivered and read: the memory is empty again.
        r.rcv_nxt = 150_000;
        let capped = 150_000 + 100_001u64.div_ceil(unit) * unit;
        assert_eq!(r.window_edge_capped(100_001), capped);
        assert_eq!(r.window_edge_capped(50_000), capped, "a smaller cap leaves the edge where it was");
        assert_eq!(r.window_edge_capped(300_000), 150_000 + 201_276, "a cap above the memory window does nothing");
        assert_eq!(r.window_edge_capped(u64::MAX), 150_000 + 201_276);
    }

    /// Upstream `mptcp_data_queue_ofo`: out-of-order data ending past the advertised edge
    /// (`rcv_wnd_sent`) is dropped and counted (NoDSSInWindow); in-sequence data is taken
    /// wherever it ends (`__mptcp_move_skb`: `map_seq == ack_seq`).
    #[test]
    fn upstream_drops_out_of_order_data_past_the_advertised_edge_but_takes_in_sequence_data() {
        let mut r = MetaReceiver::new(10_000);
        r.drop_ofo_beyond_edge = true;
        assert_eq!(r.window_edge(), 10_000);
        assert_eq!(r.on_data(9_500, 1000), 0);
        assert_eq!((r.nodss_window, r.ooo_bytes), (1, 0), "dropped, not held");
        assert_eq!(r.on_data(8_000, 1000), 0);
        assert_eq!(r.ooo_bytes, 1000, "inside the edge: held");
        assert_eq!(r.on_data(0, 8000), 9000);
        // In sequence and past the edge: taken.
        assert_eq!(r.on_data(9_000, 1500), 1500);
        assert_eq!((r.rcv_nxt, r.nodss_window, r.beyond_window), (10_500, 1, 0));
        // The same without the upstream rule is an invariant breach, counted.
        let mut o = MetaReceiver::new(10_000);
        o.window_edge();
        o.on_data(9_500, 1000);
        assert_eq!((o.nodss_window, o.beyond_window), (0, 1));
    }

    #[test]
    fn the_receiver_delivers_each_byte_once_in_order() {
        let mut r = MetaReceiver::new(10_000);
        assert_eq!(r.on_data(1000, 1000), 0);
        assert_eq!(r.on_data(3000, 1000), 0);
        assert_eq!(r.ooo_bytes, 2000);
        assert_eq!(r.on_data(3000, 1000), 0); // duplicate
        assert_eq!(r.duplicate_bytes, 1000);
        assert_eq!(r.on_data(0, 1000), 2000);
        assert_eq!(r.on_data(2000, 1000), 2000);
        assert_eq!((r.rcv_nxt, r.ooo_bytes), (4000, 0));
        assert_eq!(r.on_data(0, 1000), 0);
        // Overlapping and bridging ranges count only new bytes.
        r.on_data(6000, 1000);
        r.on_data(8000, 1000);
        r.on_data(5500, 3000);
        assert_eq!(r.ooo_bytes, 3500);
        assert_eq!(r.ooo_range_containing(7000), Some(9000));
        assert_eq!(r.ooo_range_containing(9000), None);
        assert_eq!(r.on_data(4000, 1500), 5000);
        assert_eq!((r.rcv_nxt, r.ooo_bytes), (9000, 0));
    }

    #[test]
    fn the_window_edge_accounts_for_unread_data_and_never_shrinks() {
        let mut r = MetaReceiver::new(5000);
        assert_eq!(r.window_edge(), 5000);
        r.on_data(0, 1000);
        assert_eq!(r.window_edge(), 5000); // 1000 unread
        r.read(1000);
        assert_eq!(r.window_edge(), 6000);
        r.on_data(2000, 1000); // out of order: inside the window, edge unchanged
        assert_eq!(r.window_edge(), 6000);
        // In-order data advances DATA_ACK, but the window excludes the out-of-order bytes:
        // edge = 2000 + 5000 - 1000 = 6000, not 7000.
        r.on_data(1000, 1000);
        r.read(u64::MAX);
        assert_eq!(r.rcv_nxt, 3000);
        r.on_data(4000, 1000);
        assert_eq!(r.window_edge(), 3000 + 5000 - 1000);
        assert!(r.occupancy() <= r.rcvbuf);
    }

    #[test]
    fn linux_accounting_charges_twice_the_payload_and_advertises_half() {
        let mut r = MetaReceiver::with_accounting(200_000, BufferAccounting::Linux, 1448);
        assert_eq!(r.window_edge(), 100_000);
        r.on_data(10_000, 10_000); // 10 KB out of order: costs 20 KB
        r.on_data(0, 1_000);
        r.read(u64::MAX);
        // rcv_nxt 1000, held 10 KB -> free (200 - 20) / 2 = 90 KB; the edge may not shrink.
        assert_eq!(r.window_edge(), 100_000.max(1_000 + 90_000));
        r.on_data(1_000, 9_000);
        r.read(u64::MAX);
        assert_eq!(r.window_edge(), 20_000 + 100_000);
    }

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

impl MetaReceiver {
    /// End of the out-of-order range containing `pos`, if any.
    pub fn ooo_range_containing(&self, pos: u64) -> Option<u64> {
        let i = self.ooo.partition_point(|&(s, _)| s <= pos);
        if i == 0 {
            return None;
        }
        let (_, e) = self.ooo[i - 1];
        (e > pos).then_some(e)
    }
}
