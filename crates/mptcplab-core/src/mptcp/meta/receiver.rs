//! The receiving end's connection level: in-order delivery by data sequence number, the
//! out-of-order queue, the shared receive buffer (payload or Linux accounting, or the
//! MPTCP socket's skb memory) and the window edge each ACK announces (RFC 8684 §3.3;
//! reference `tcp.md` §1.5).

use crate::mptcp::rcvmem::RcvMem;
use crate::tcp::BufferAccounting;
use std::collections::VecDeque;

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
}
