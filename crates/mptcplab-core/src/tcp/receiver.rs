//! Subflow receiver: cumulative ACK, SACK blocks (RFC 2018) and Linux-like delayed ACKs
//! (RFC 1122 §4.2.3.2, RFC 5681 §4.2; Linux `__tcp_ack_snd_check`, reference `tcp.md` §1.5):
//! quick-ACK for the first 16 segments, then an ACK when more than one full segment is
//! unacknowledged or when the delayed-ACK timer (40 ms) fires; an immediate ACK for
//! out-of-order data and for data that fills a hole.

use super::seq::{after, before, off};
use crate::net::packet::MAX_SACK_BLOCKS;
use crate::units::SimTime;

pub const QUICKACKS: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckDecision {
    Now,
    /// Arm (or keep) the delayed-ACK timer for this deadline.
    Delay(SimTime),
}

#[derive(Clone, Debug)]
pub struct SubflowRx {
    pub rcv_nxt: u32,
    /// `tp->rcv_wup`: rcv_nxt when the last ACK left.
    pub rcv_wup: u32,
    /// Out-of-order ranges [start, end) above rcv_nxt, sorted, disjoint, not touching.
    ooo: Vec<(u32, u32)>,
    /// The block that contains the most recent arrival (reported first, RFC 2018 §4).
    last_block: Option<(u32, u32)>,
    unacked_bytes: u32,
    quickacks: u32,
    pub delack_deadline: Option<SimTime>,
    mss: u32,
    delayed_ack: bool,
    ato: SimTime,
    pub segments_received: u64,
    pub duplicate_segments: u64,
    /// Linux 6.x's quick-ACK rules (`tcp.receive_memory = "skb"`), None otherwise.
    pub linux: Option<LinuxAcks>,
}

/// What a Linux 6.x receiver's quick ACKs depend on, for a subflow whose receive memory
/// is modelled in skbs (`tcp.receive_memory = "skb"`).
///
/// `tp->rcv_ssthresh` starts at the window the handshake offered and grows by two
/// segments per data segment until it meets the free space (`tcp_grow_window`); each
/// step asks for an immediate ACK (`icsk_ack.quick |= 1`), so the receiver ACKs every
/// segment for longer than its 16 quick ACKs. Measured on Linux 6.18
/// (scripts/research/quickack/quick.bt, docs/kernel.md): a 100 KB receive buffer,
/// rcv_ssthresh 81 088 -> 99 215 in seven segments, the quick-ACK count held at 16
/// meanwhile, 23 segments ACKed one by one. In-order data after a gap longer than the
/// receiving end's RTO restarts the quick ACKs (`tcp_event_data_recv`).
#[derive(Clone, Copy, Debug)]
pub struct LinuxAcks {
    pub rcv_ssthresh: u64,
    sk_rcvbuf: u64,
    ratio: u64,
    advmss: u64,
    /// The receiving end's own RTO (`icsk_rto`, from the handshake's RTT: it sends no
    /// data, so it never takes another sample), when the SYN-ACK left, and when
    /// in-order data last arrived (`icsk_ack.lrcvtime`).
    pub rto: Option<SimTime>,
    synack_at: SimTime,
    last_rcv: Option<SimTime>,
    /// The window the last ACK advertised (`tp->rcv_wnd`, raised to the shared MPTCP
    /// edge by `mptcp_set_rwin`) and the receiver's guess of the sender's MSS
    /// (`icsk_ack.rcv_mss`, `tcp_measure_rcv_mss`).
    pub rcv_wnd: u64,
    pub rcv_mss: u32,
    /// `icsk_ack.last_seg_size`: the last short segment's length, header jitter removed.
    last_seg_size: u32,
    /// `icsk_ack.pending`'s ICSK_ACK_PUSHED (1) and ICSK_ACK_PUSHED2 (2) bits: a short
    /// segment, or a full one with PSH, came in since the last ACK.
    pub pushed: u8,
    /// TCP option bytes of a data segment beyond the timestamps (the 24 of an MPTCP DSS
    /// with a mapping and a 64-bit DATA_ACK: 56-byte headers in the kernel backend's
    /// captures), which `tcp_measure_rcv_mss` counts in a short segment's length.
    pub data_opt_len: u32,
    /// The host's jiffy clock (HZ = 250): the offset of its ticks in ns, None when timers
    /// are exact.
    pub jiffy_phase: Option<u64>,
    /// `icsk_ack.ato` in jiffies (`tcp_event_data_recv`), the handshake's RTT and the
    /// RTO in jiffies.
    pub ato_j: u64,
    pub srtt_j: u64,
    pub rto_j: u64,
    lrcv_j: Option<u64>,
}

/// HZ = 250 on the kernel backend's host: a jiffy is 4 ms.
pub const JIFFY_NS: u64 = 4_000_000;
/// `TCP_ATO_MIN` = `TCP_DELACK_MIN` = HZ/25, `TCP_DELACK_MAX` = HZ/5, HZ/2 (jiffies).
const ATO_MIN_J: u64 = 10;
const DELACK_MAX_J: u64 = 50;
const HALF_SECOND_J: u64 = 125;

/// `ICSK_ACK_PUSHED` / `ICSK_ACK_PUSHED2` (include/net/inet_connection_sock.h).
pub const ACK_PUSHED: u8 = 1;
pub const ACK_PUSHED2: u8 = 2;
/// `TCP_MSS_DEFAULT` and `TCP_MIN_MSS` (include/net/tcp.h), `sizeof(struct tcphdr)`,
/// and `tcp_header_len` with timestamps (20 + 12).
const TCP_MSS_DEFAULT: u32 = 536;
const TCP_MIN_MSS: u32 = 88;
const TCPHDR: u32 = 20;
const TCP_HEADER_LEN_TS: u32 = 32;

impl LinuxAcks {
    /// `sk_rcvbuf` in truesize bytes, `ratio` the full segment's payload per truesize in
    /// 1/256 (`tcp_measure_rcv_mss`), `advmss` the advertised MSS, `synack_at` when the
    /// SYN-ACK left.
    pub fn new(sk_rcvbuf: u64, ratio: u64, advmss: u32, synack_at: SimTime) -> LinuxAcks {
        let advmss = advmss as u64;
        // The handshake's window: `tcp_full_space` at the default scaling ratio of 1/2
        // (TCP_DEFAULT_SCALING_RATIO), rounded down to the MSS (`tcp_select_initial_window`).
        let full0 = (sk_rcvbuf * 128) >> 8;
        let rcv_wnd0 = full0 - full0 % advmss.max(1);
        // `tcp_init_buffer_space`: window_clamp = max(2 advmss, full - advmss) (one segment
        // reserved, tcp_app_win 31), rcv_ssthresh = min(rcv_wnd, window_clamp).
        let ss0 = rcv_wnd0.min((2 * advmss).max(full0.saturating_sub(advmss)));
        // The first full segment sets the real ratio (`tcp_measure_rcv_mss`), and
        // `tcp_set_window_clamp` raises rcv_ssthresh to min(rcv_wnd, the new clamp).
        let clamp = (sk_rcvbuf * ratio) >> 8;
        LinuxAcks {
            rcv_ssthresh: ss0.max(rcv_wnd0.min(clamp)),
            sk_rcvbuf,
            ratio,
            advmss,
            rto: None,
            synack_at,
            last_rcv: None,
            rcv_wnd: 0,
            // `tcp_initialize_rcv_mss`: min(advmss, mss_cache, rcv_wnd / 2, TCP_MSS_DEFAULT),
            // at least TCP_MIN_MSS.
            rcv_mss: (advmss as u32).min((rcv_wnd0 / 2) as u32).min(TCP_MSS_DEFAULT).max(TCP_MIN_MSS),
            last_seg_size: 0,
            pushed: 0,
            data_opt_len: 0,
            jiffy_phase: None,
            ato_j: ATO_MIN_J,
            srtt_j: 0,
            rto_j: u64::MAX,
            lrcv_j: None,
        }
    }

    /// `jiffies` at `now`.
    pub fn jiffies(&self, now: SimTime) -> Option<u64> { self.jiffy_phase.map(|ph| (now.ns() + ph) / JIFFY_NS) }

    /// When the timer wheel runs a timer armed for jiffy `j` (level 0, delays under 64
    /// jiffies: `calc_index` rounds up to the next tick, j + 1).
    pub fn tick_time(&self, j: u64) -> SimTime { SimTime(((j + 1) * JIFFY_NS).saturating_sub(self.jiffy_phase.unwrap_or(0))) }

    /// `tcp_event_data_recv`'s ATO update for in-order data at `now` (jiffies). Returns
    /// whether the gap since the last in-order data exceeds the RTO (quick ACKs again).
    pub fn update_ato(&mut self, now: SimTime) -> bool {
        let Some(nj) = self.jiffies(now) else { return false };
        let mut gap = false;
        if let Some(l) = self.lrcv_j {
            let m = nj - l;
            if m <= ATO_MIN_J / 2 {
                self.ato_j = (self.ato_j >> 1) + ATO_MIN_J / 2;
            } else if m < self.ato_j {
                self.ato_j = ((self.ato_j >> 1) + m).min(self.rto_j);
            } else if m > self.rto_j {
                gap = true;
            }
        }
        self.lrcv_j = Some(nj);
        gap
    }

    /// `tcp_send_delayed_ack`'s timeout in jiffies (absolute), and the effective ato.
    pub fn delack_timeout(&self, now: SimTime) -> (u64, u64) {
        let nj = self.jiffies(now).unwrap_or(0);
        let mut ato = self.ato_j;
        if ato > ATO_MIN_J {
            let mut max_ato = if self.pushed & ACK_PUSHED != 0 { DELACK_MAX_J } else { HALF_SECOND_J };
            if self.srtt_j > 0 {
                let rtt = self.srtt_j.max(ATO_MIN_J);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX_J);
        (nj + ato, ato)
    }

    /// `tcp_window_clamp` after the first full segment set the ratio (`tcp_measure_rcv_mss`
    /// -> `tcp_set_window_clamp`): the full space, `tcp_win_from_space(sk_rcvbuf)`.
    pub fn window_clamp(&self) -> u64 { (self.sk_rcvbuf * self.ratio) >> 8 }

    /// `tcp_measure_rcv_mss` for an in-order segment of `len` payload bytes, `psh` its PSH
    /// flag (net/ipv4/tcp_input.c, Linux 6.18): a segment of at least rcv_mss sets rcv_mss
    /// (at most advmss) and, with PSH, ICSK_ACK_PUSHED ("likely the end of an application
    /// write"); a shorter one sets ICSK_ACK_PUSHED (PUSHED2 if it was set), unless it is
    /// the second in a row of one size large enough to be a segment size (then it becomes
    /// rcv_mss instead).
    pub fn measure_rcv_mss(&mut self, len: u32, psh: bool) {
        let lss = self.last_seg_size;
        self.last_seg_size = 0;
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.advmss as u32);
            if psh {
                self.pushed |= ACK_PUSHED;
            }
            return;
        }
        // The length with the whole TCP header ("invariant segment length").
        let l = len + TCP_HEADER_LEN_TS + self.data_opt_len;
        if l >= TCP_MSS_DEFAULT + TCPHDR || (l >= TCP_MIN_MSS + TCPHDR && !psh) {
            let l = l - TCP_HEADER_LEN_TS;
            self.last_seg_size = l;
            if l == lss {
                self.rcv_mss = l;
                return;
            }
        }
        if self.pushed & ACK_PUSHED != 0 {
            self.pushed |= ACK_PUSHED2;
        }
        self.pushed |= ACK_PUSHED;
    }

    /// `tcp_grow_window` for a segment of `len` new bytes with `rmem` truesize now
    /// charged to the subflow: room = min(window_clamp, tcp_space) - rcv_ssthresh; the
    /// step is max(2 advmss, 2 len) (the segment's own truesize always fits its ratio,
    /// "check #2"). Returns whether it grew.
    pub fn grow(&mut self, len: u32, rmem: u64) -> bool {
        let clamp = (self.sk_rcvbuf * self.ratio) >> 8;
        let space = (self.sk_rcvbuf.saturating_sub(rmem) * self.ratio) >> 8;
        let room = clamp.min(space).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min((2 * self.advmss).max(2 * len as u64));
        true
    }
}

/// What an arriving segment was, for the connection level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxOutcome {
    /// Not seen before at subflow level.
    pub new: bool,
    pub ack: AckDecision,
    /// The ACK is immediate only because more than one full segment is unacknowledged
    /// (`__tcp_ack_snd_check`'s first test): Linux sends it then only if "the right edge
    /// of window advances far enough", else it is delayed until `delay_at` or the reader
    /// (the MPTCP connection applies that test, `Conn::on_data_skb`).
    pub window_test: bool,
    /// When a delayed ACK would be due (now + the delayed-ACK timeout).
    pub delay_at: SimTime,
}

impl SubflowRx {
    pub fn new(irs: u32, mss: u32, delayed_ack: bool, ato: SimTime) -> Self {
        SubflowRx {
            rcv_nxt: irs,
            rcv_wup: irs,
            ooo: Vec::new(),
            last_block: None,
            unacked_bytes: 0,
            quickacks: QUICKACKS,
            delack_deadline: None,
            mss,
            delayed_ack,
            ato,
            segments_received: 0,
            duplicate_segments: 0,
            linux: None,
        }
    }

    /// The handshake completed at `now` (`tcp_synack_rtt_meas`): the receiving end's RTO
    /// from that one sample, m + max(2m, rto_min) (`tcp_rtt_estimator`'s first sample,
    /// `__tcp_set_rto`). Measured on Linux 6.18: 220 ms on a 20 ms path, 604 ms on a
    /// 200 ms one.
    pub fn handshake_done(&mut self, now: SimTime, rto_min: SimTime) {
        if let Some(l) = self.linux.as_mut().filter(|l| l.rto.is_none()) {
            let mut est = super::rtt::RttEstimator::new(rto_min);
            let m = now.saturating_sub(l.synack_at);
            est.sample(m, 0, 0);
            l.rto = Some(est.rto());
            // usecs_to_jiffies rounds up.
            l.srtt_j = m.ns().div_ceil(JIFFY_NS);
            l.rto_j = est.rto().ns().div_ceil(JIFFY_NS);
        }
    }

    /// Linux `tcp_event_data_recv` / `tcp_data_queue_ofo` -> `tcp_grow_window` (segments
    /// of at least 128 bytes in order; any out of order) before the ACK is decided: a
    /// step sets the quick-ACK count's low bit. `rmem` is the truesize charged to the
    /// subflow with this segment. No-op without `linux`.
    pub fn grow_window(&mut self, len: u32, in_order: bool, rmem: u64) {
        if let Some(g) = self.linux.as_mut() {
            if (len >= 128 || !in_order) && g.grow(len, rmem) {
                self.quickacks |= 1;
            }
        }
    }

    /// When a delayed ACK armed now fires: now + ato, or on the jiffy clock
    /// (`tcp_send_delayed_ack`: jiffies + ato, run at the next tick after it).
    pub fn delay_deadline(&self, now: SimTime) -> SimTime {
        match self.linux.as_ref().filter(|l| l.jiffy_phase.is_some()) {
            Some(l) => l.tick_time(l.delack_timeout(now).0),
            None => now + self.ato,
        }
    }

    /// A delayed ACK is asked for while one is armed (`tcp_send_delayed_ack`): on the
    /// jiffy clock, ACK now when the armed one is due within ato/4, else keep the earlier
    /// of the two. Returns the deadline to keep, or None to ACK now.
    pub fn rearm_delack(&self, now: SimTime, armed: SimTime, new: SimTime) -> Option<SimTime> {
        let Some(l) = self.linux.as_ref().filter(|l| l.jiffy_phase.is_some()) else { return Some(armed) };
        let nj = l.jiffies(now).unwrap_or(0);
        let (_, ato) = l.delack_timeout(now);
        // The armed timeout in jiffies: its run time is the tick after it.
        let armed_j = (armed.ns() + l.jiffy_phase.unwrap_or(0)) / JIFFY_NS - 1;
        if armed_j <= nj + (ato >> 2) {
            return None;
        }
        Some(armed.min(new))
    }

    /// The delayed-ACK timer fired with an ACK scheduled (`tcp_delack_timer_handler`):
    /// "delayed ACK missed: inflate ATO", min(2 ato, rto).
    pub fn delack_fired(&mut self) {
        if let Some(l) = self.linux.as_mut().filter(|l| l.jiffy_phase.is_some()) {
            l.ato_j = (l.ato_j << 1).min(l.rto_j);
        }
    }

    /// `__tcp_select_window` with less than half the window free: no more quick ACKs.
    pub fn end_quickack(&mut self) { self.quickacks = 0; }

    pub fn ooo_bytes(&self) -> u64 { self.ooo.iter().map(|&(s, e)| off(e, s) as u64).sum() }

    #[inline(always)]
    pub fn on_segment(&mut self, now: SimTime, seq: u32, len: u32) -> RxOutcome { self.on_segment_psh(now, seq, len, false) }

    /// `on_segment` for a segment whose PSH flag is `psh` (read by the Linux 6.x rules).
    #[inline(always)]
    pub fn on_segment_psh(&mut self, now: SimTime, seq: u32, len: u32, psh: bool) -> RxOutcome {
        self.segments_received += 1;
        let end = seq.wrapping_add(len);
        if !after(end, self.rcv_nxt) {
            // Entirely old: a duplicate (spurious retransmission). ACK at once (DSACK-like).
            self.duplicate_segments += 1;
            return RxOutcome { new: false, ack: AckDecision::Now, window_test: false, delay_at: self.delay_deadline(now) };
        }
        if seq == self.rcv_nxt || before(seq, self.rcv_nxt) {
            // Linux `tcp_event_data_recv`: in-order data after a gap longer than the RTO
            // ("apparently sender failed to restart window") restarts the quick ACKs
            // (`tcp_incr_quickack`: rcv_wnd / (2 rcv_mss), 2 to 16).
            if let Some(l) = self.linux.as_mut() {
                l.measure_rcv_mss(len, psh);
                if l.jiffy_phase.is_some() {
                    if l.update_ato(now) {
                        let q = (l.rcv_wnd / (2 * l.rcv_mss.max(1) as u64)).clamp(2, QUICKACKS as u64) as u32;
                        self.quickacks = self.quickacks.max(q);
                    }
                } else if let (Some(rto), Some(last)) = (l.rto, l.last_rcv) {
                    if now.saturating_sub(last) > rto {
                        let q = (l.rcv_wnd / (2 * l.rcv_mss.max(1) as u64)).clamp(2, QUICKACKS as u64) as u32;
                        self.quickacks = self.quickacks.max(q);
                    }
                }
                l.last_rcv = Some(now);
            }
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt = end;
            // Pull in out-of-order ranges that are now contiguous.
            while let Some(&(s, e)) = self.ooo.first() {
                if after(s, self.rcv_nxt) {
                    break;
                }
                if after(e, self.rcv_nxt) {
                    self.rcv_nxt = e;
                }
                self.ooo.remove(0);
            }
            if let Some((_, e)) = self.last_block {
                if !after(e, self.rcv_nxt) {
                    self.last_block = None;
                }
            }
            self.unacked_bytes += len;
            let window_test = !had_holes && self.quickacks == 0 && self.delayed_ack && self.unacked_bytes > self.mss;
            let ack = if had_holes || self.quickacks > 0 || !self.delayed_ack || self.unacked_bytes > self.mss {
                self.quickacks = self.quickacks.saturating_sub(1);
                AckDecision::Now
            } else {
                AckDecision::Delay(self.delay_deadline(now))
            };
            return RxOutcome { new: true, ack, window_test, delay_at: self.delay_deadline(now) };
        }
        // Above a hole: insert into the out-of-order set.
        let new = self.insert_ooo(seq, end);
        if !new {
            self.duplicate_segments += 1;
        }
        // Linux counts this immediate ACK against the quick ACKs too (`tcp_dec_quickack_mode`:
        // an ACK is scheduled); modelled with the Linux quick-ACK rules, where it matters.
        if self.linux.is_some() {
            self.quickacks = self.quickacks.saturating_sub(1);
        }
        RxOutcome { new, ack: AckDecision::Now, window_test: false, delay_at: self.delay_deadline(now) }
    }

    fn insert_ooo(&mut self, s: u32, e: u32) -> bool {
        let base = self.rcv_nxt;
        let (so, eo) = (off(s, base), off(e, base));
        // Find the first range whose end >= s.
        let i = self.ooo.partition_point(|&(_, re)| off(re, base) < so);
        if i < self.ooo.len() {
            let (rs, re) = self.ooo[i];
            if off(rs, base) <= so && off(re, base) >= eo {
                self.last_block = Some((rs, re));
                return false;
            }
        }
        // Merge every range that overlaps or touches [s, e).
        let mut ns = so;
        let mut ne = eo;
        let mut j = i;
        while j < self.ooo.len() && off(self.ooo[j].0, base) <= ne {
            ns = ns.min(off(self.ooo[j].0, base));
            ne = ne.max(off(self.ooo[j].1, base));
            j += 1;
        }
        let merged = (base.wrapping_add(ns), base.wrapping_add(ne));
        self.ooo.splice(i..j, std::iter::once(merged));
        self.last_block = Some(merged);
        true
    }

    /// SACK blocks for the next ACK: the block with the latest arrival first, then the
    /// highest other blocks.
    pub fn sack_blocks(&self, out: &mut [(u32, u32); MAX_SACK_BLOCKS]) -> u8 {
        let mut n = 0usize;
        if let Some(b) = self.last_block {
            out[0] = b;
            n = 1;
        }
        for &b in self.ooo.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if Some(b) == self.last_block {
                continue;
            }
            out[n] = b;
            n += 1;
        }
        n as u8
    }

    /// An ACK went out: nothing is pending any more (`tcp_event_ack_sent` clears
    /// `icsk_ack.pending`, the PUSHED bits with it), and rcv_wup moves to rcv_nxt.
    pub fn on_ack_sent(&mut self) {
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        self.rcv_wup = self.rcv_nxt;
        if let Some(l) = self.linux.as_mut() {
            l.pushed = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx() -> SubflowRx { SubflowRx::new(0xffff_f000, 1000, true, SimTime::from_ms(40)) }

    #[test]
    fn after_the_quickack_phase_every_second_segment_is_acked() {
        // tcp.md test vector 9: 100 in-order segments -> about 16 + 42 ACKs.
        let mut r = rx();
        let mut seq = 0xffff_f000u32;
        let mut acks = 0;
        for _ in 0..100 {
            if r.on_segment(SimTime::ZERO, seq, 1000).ack == AckDecision::Now {
                acks += 1;
                r.on_ack_sent();
            }
            seq = seq.wrapping_add(1000);
        }
        assert!(acks <= 50 + 16 / 2 + 1 && acks >= 55, "{acks}");
        assert_eq!(r.rcv_nxt, seq);
    }

    #[test]
    fn out_of_order_segments_are_sacked_and_acked_at_once() {
        let mut r = rx();
        let b = 0xffff_f000u32;
        for _ in 0..QUICKACKS { r.quickacks = 0; }
        assert_eq!(r.on_segment(SimTime::ZERO, b.wrapping_add(2000), 1000).ack, AckDecision::Now);
        assert_eq!(r.on_segment(SimTime::ZERO, b.wrapping_add(4000), 1000).ack, AckDecision::Now);
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let n = r.sack_blocks(&mut blocks);
        assert_eq!(n, 2);
        assert_eq!(blocks[0], (b.wrapping_add(4000), b.wrapping_add(5000)));
        // Filling the first hole is acked at once and advances past the first block.
        let o = r.on_segment(SimTime::ZERO, b, 2000);
        assert_eq!((o.new, o.ack, o.window_test), (true, AckDecision::Now, false), "a hole filled: no window test");
        assert_eq!(r.rcv_nxt, b.wrapping_add(3000));
        assert_eq!(r.ooo_bytes(), 1000);
        // A duplicate is not new.
        assert!(!r.on_segment(SimTime::ZERO, b.wrapping_add(4000), 1000).new);
        assert!(!r.on_segment(SimTime::ZERO, b, 1000).new);
    }

    #[test]
    fn while_the_window_grows_the_receiver_acks_every_segment_beyond_its_sixteen_quick_acks() {
        // Linux 6.18, measured (scripts/research/quickack/quick.bt): a 100 KB payload
        // buffer (SO_RCVBUF 81 529, sk_rcvbuf 163 058), 1 424-byte segments of truesize
        // 2 304: rcv_ssthresh 81 088 after the first segment's ratio, +2 896 a segment to
        // 99 215, the quick count held at 16 for seven segments: 23 immediate ACKs.
        let ratio = (1424u64 << 8) / 2304;
        assert_eq!(ratio, 158);
        let mut r = SubflowRx::new(0, 1448, true, SimTime::from_ms(40));
        r.linux = Some(LinuxAcks::new(163_058, ratio, 1448, SimTime::ZERO));
        assert_eq!(r.linux.unwrap().rcv_ssthresh, 81_088);
        let mut seq = 0u32;
        let mut immediate = 0;
        let mut seen = vec![];
        for _ in 0..40 {
            r.grow_window(1424, true, 2304);
            seen.push(r.linux.unwrap().rcv_ssthresh);
            if r.on_segment(SimTime::ZERO, seq, 1424).ack == AckDecision::Now && immediate == seen.len() - 1 {
                immediate += 1;
            }
            r.on_ack_sent();
            seq = seq.wrapping_add(1424);
        }
        assert_eq!(&seen[..8], &[83_984, 86_880, 89_776, 92_672, 95_568, 98_464, 99_215, 99_215]);
        assert_eq!(immediate, 23, "segments ACKed one by one from the start");
        // Without the growth: the 16 quick ACKs alone.
        let mut d = SubflowRx::new(0, 1448, true, SimTime::from_ms(40));
        let mut n = 0;
        while d.on_segment(SimTime::ZERO, (n * 1424) as u32, 1424).ack == AckDecision::Now && n < 40 {
            d.on_ack_sent();
            n += 1;
        }
        assert_eq!(n, 16);
    }

    #[test]
    fn in_order_data_after_a_gap_longer_than_the_rto_restarts_the_quick_acks() {
        // Linux 6.18, measured (bpftrace on tcp_probe): a 20 ms subflow's receiver has
        // icsk_rto 220 ms; data after a 403 ms gap finds the quick count back at 16
        // (then 15 once ACKed), after 175 ms not.
        let mut r = SubflowRx::new(0, 1448, true, SimTime::from_ms(40));
        r.linux = Some(LinuxAcks::new(163_058, 158, 1448, SimTime::ZERO));
        r.handshake_done(SimTime::from_ms(20), SimTime::from_ms(200));
        assert_eq!(r.linux.unwrap().rto, Some(SimTime::from_ms(220)), "m + max(2m, 200 ms)");
        r.quickacks = 0;
        r.linux.as_mut().unwrap().rcv_wnd = 99_216;
        let mut seq = 0u32;
        let mut at = |r: &mut SubflowRx, ms: u64| {
            let d = r.on_segment(SimTime::from_ms(ms), seq, 1424).ack;
            seq = seq.wrapping_add(1424);
            r.on_ack_sent();
            d
        };
        assert_ne!(at(&mut r, 1000), AckDecision::Now, "the first segment only starts the clock");
        assert_ne!(at(&mut r, 1175), AckDecision::Now, "175 ms: no restart");
        assert_eq!(at(&mut r, 1578), AckDecision::Now, "403 ms > 220 ms: quick ACKs again");
        assert_eq!(r.quickacks, 15);
        // Without the receive-memory model nothing changes.
        let mut d = SubflowRx::new(0, 1448, true, SimTime::from_ms(40));
        d.quickacks = 0;
        d.on_segment(SimTime::from_ms(1000), 0, 1424);
        d.on_ack_sent();
        assert_ne!(d.on_segment(SimTime::from_ms(2000), 1424, 1424).ack, AckDecision::Now);
    }

    #[test]
    fn a_lone_segment_waits_for_the_delayed_ack_timer() {
        let mut r = rx();
        r.quickacks = 0;
        assert_eq!(r.on_segment(SimTime::from_ms(5), 0xffff_f000, 1000).ack, AckDecision::Delay(SimTime::from_ms(45)));
        assert_eq!(r.on_segment(SimTime::from_ms(6), 0xffff_f000u32.wrapping_add(1000), 1000).ack, AckDecision::Now);
    }

    #[test]
    fn short_segments_and_full_ones_with_psh_mark_the_ack_pushed() {
        // `tcp_measure_rcv_mss` (Linux 6.18) on an MPTCP subflow: 56-byte data headers,
        // advmss 1 448, rcv_mss starting at TCP_MSS_DEFAULT.
        let mut l = LinuxAcks::new(326_114, 158, 1448, SimTime::ZERO);
        l.data_opt_len = 24;
        assert_eq!(l.rcv_mss, 536);
        l.measure_rcv_mss(1424, false);
        assert_eq!((l.rcv_mss, l.pushed), (1424, 0), "a full segment without PSH: rcv_mss only");
        l.measure_rcv_mss(1424, true);
        assert_eq!(l.pushed, ACK_PUSHED, "a full segment with PSH: the end of a write");
        l.pushed = 0;
        l.measure_rcv_mss(520, true);
        assert_eq!(l.pushed, ACK_PUSHED, "a short one");
        l.measure_rcv_mss(300, true);
        assert_eq!(l.pushed, ACK_PUSHED | ACK_PUSHED2, "a second short one before an ACK");
        // Two short segments of one size in a row, large enough to be a segment size
        // (520 + 56 >= 536 + 20): the second becomes rcv_mss (520 + 24, the options it
        // counts) and marks nothing.
        l.pushed = 0;
        l.measure_rcv_mss(520, true);
        l.pushed = 0;
        l.measure_rcv_mss(520, true);
        assert_eq!((l.rcv_mss, l.pushed), (544, 0));
        // Below TCP_MSS_DEFAULT + 20 with PSH: never a size candidate.
        l.measure_rcv_mss(1424, false);
        l.measure_rcv_mss(100, true);
        l.pushed = 0;
        l.measure_rcv_mss(100, true);
        assert_eq!((l.rcv_mss, l.pushed), (1424, ACK_PUSHED));
    }
}
