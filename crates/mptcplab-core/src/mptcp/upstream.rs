//! Connection-level mechanisms of the upstream Linux MPTCP stack (torvalds/linux
//! `net/mptcp`, Linux 6.x, read at the 6.18-era tree) that the `upstream` profile
//! switches on: the MPTCP-level retransmit timer, stale subflows, per-subflow send
//! buffers (`sk_sndbuf`, `sk_wmem_queued`) and the connection's send-buffer auto-tuning.
//! The subflow choice itself is `scheduler::upstream`; docs/upstream-profile.md
//! explains the model and lists what it leaves out.
//!
//! Which kernel a connection follows is `mptcp::stack::Stack`, and what that changes is
//! its `StackPolicy`: the simulator's default is the out-of-tree v0.9x kernel the seeds
//! measured.

use crate::units::SimTime;

/// `TCP_RTO_MIN` (include/net/tcp.h): the MPTCP retransmit interval when no subflow has
/// a timer pending (`__mptcp_set_timeout`, protocol.c).
pub const TCP_RTO_MIN: SimTime = SimTime::from_ms(200);

/// `net.mptcp.stale_loss_cnt` default (ctrl.c): a subflow whose MPTCP-level
/// retransmission periods pass without an ACK more than this many times is stale
/// (`mptcp_pm_subflows_chk_stale`, pm.c).
pub const STALE_LOSS_CNT: u8 = 4;

/// The DSS option on an upstream data segment: 4 B of header and flags, a 4-byte
/// DATA_ACK, an 8-byte DSN, the 4-byte subflow sequence and the 2-byte length, 22 B
/// padded to 24 (RFC 8684 §3.3, Fig. 5; options.c `mptcp_established_options_dss`,
/// 32-bit DATA_ACK unless the peer used 64 bits). `tcp_current_mss` takes it off the MSS:
/// measured, 1 424 B of payload in a 1 500-B packet with timestamps.
pub const DSS_OPTION_BYTES: u32 = 24;

/// SACK blocks on an upstream MPTCP ACK: 40 option bytes - 12 (timestamps) - 12 (DSS
/// with a 64-bit DATA_ACK, which 6.x sends once the peer's mappings use 64-bit DSNs) = 16,
/// room for one block (`tcp_established_options`: (remaining - 4) / 8).
pub const MAX_SACK_BLOCKS: u8 = 1;

/// `net.ipv4.tcp_wmem` defaults (min, default, max) in bytes.
pub const TCP_WMEM: [u64; 3] = [4096, 16384, 4 * 1024 * 1024];

/// Truesize a transmit skb adds beyond its payload (`sk_wmem_queued` accounting of
/// `tcp_skb_entail`; the skb head of `alloc_skb_fclone(MAX_TCP_HEADER)`). Measured on
/// this project's Linux 6.18 x86-64 machine: `ss -tm` shows w = payload + 832 per skb.
pub const SKB_TX_OVERHEAD: u64 = 832;

/// `MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` as
/// `tcp_sndbuf_expand` adds it: 512 reproduces the measured `tb` 46 080 = 2 × 10 × 2 304
/// right after connect at mss 1448 on the same machine.
const SNDBUF_HEADROOM: u64 = 512;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
const SK_BUFF_SIZE: u64 = 256;

/// Data bytes of one `mptcp_data_frag` when the application writes continuously: a
/// 32 KiB page frag (`SKB_FRAG_PAGE_ORDER`) minus the 40-byte frag header that
/// `mptcp_carve_data_frag` puts at its start. A push (`__subflow_push_pending`) and an
/// MPTCP-level retransmission (`__mptcp_retrans`) work in whole frags.
pub const DFRAG_DATA_BYTES: u64 = 32_768 - DFRAG_HEADER_BYTES;

/// `sizeof(struct mptcp_data_frag)` (protocol.h): the header `mptcp_carve_data_frag` puts
/// at the start of each data frag and counts in its `overhead`.
pub const DFRAG_HEADER_BYTES: u64 = 40;

/// `SOCK_MIN_SNDBUF` (include/net/sock.h): `2 * TCP_SKB_MIN_TRUESIZE` = 2 × (2048 +
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` = 256) on x86-64.
pub const SOCK_MIN_SNDBUF: u64 = 2 * (2048 + SK_BUFF_SIZE);

/// The MPTCP socket's `sk_sndbuf` after `setsockopt(SO_SNDBUF[FORCE], val)`:
/// `sk_setsockopt` stores `max(val * 2, SOCK_MIN_SNDBUF)` and sets `SOCK_SNDBUF_LOCK`
/// (net/core/sock.c `__sock_set_sndbuf`); `mptcp_sol_socket_sync_intval` and
/// `sync_socket_options` (sockopt.c) copy that value, locked, to every subflow.
pub fn locked_sndbuf(so_sndbuf: u64) -> u64 { (2 * so_sndbuf).max(SOCK_MIN_SNDBUF) }

/// The MPTCP socket's `sk_wmem_queued` while it holds the data from `data_una` up to
/// `written`: every byte written and not DATA_ACKed plus the 40-byte header of every data
/// frag that still holds some of it. `mptcp_sendmsg` charges `frag_truesize` (payload +
/// `dfrag->overhead`) with `sk_wmem_queued_add`; `__mptcp_clean_una` releases a frag's
/// payload as DATA_ACK covers it and its header with its last byte (`dfrag_uncharge`,
/// `dfrag_clear`). Data pushed to a subflow is charged to the subflow as well ("we charge
/// such data both to sk and ssk"); the two are separate budgets. Frags sit at fixed
/// `DFRAG_DATA_BYTES` offsets (a continuous writer, the `data_frag_layout` gap).
pub fn msk_wmem_queued(data_una: u64, written: u64) -> u64 {
    if written <= data_una {
        return 0;
    }
    let frags = written.div_ceil(DFRAG_DATA_BYTES) - data_una / DFRAG_DATA_BYTES;
    written - data_una + frags * DFRAG_HEADER_BYTES
}

/// How far a continuous writer fills the MPTCP socket's send buffer: `mptcp_sendmsg` copies
/// while `sk_wmem_queued < sk_sndbuf` (`mptcp_send_limit`, with `notsent_lowat` unset) and
/// each copy fills the rest of the current 32 KiB page frag (`psize = pfrag->size -
/// offset`), so the writer stops at the end of the first frag at which `sk_wmem_queued`
/// reaches `sndbuf`. With frags of D payload bytes at fixed offsets and f0 = the frag
/// holding `data_una`, the frag end f0·D + k·D has `k·(D + 40) − (data_una − f0·D)` bytes
/// charged: k = ⌈(sndbuf + data_una mod D) / (D + 40)⌉.
pub fn msk_write_limit(data_una: u64, sndbuf: u64) -> u64 {
    let f0 = data_una / DFRAG_DATA_BYTES;
    let k = (sndbuf + data_una % DFRAG_DATA_BYTES).div_ceil(DFRAG_DATA_BYTES + DFRAG_HEADER_BYTES).max(1);
    (f0 + k) * DFRAG_DATA_BYTES
}

/// `__sk_stream_is_writeable` (include/net/sock.h) on the MPTCP socket: `sk_stream_wspace
/// >= sk_stream_min_wspace`, i.e. `sndbuf − wmem ≥ wmem / 2`. A writer asleep in
/// `sk_stream_wait_memory` is woken by `sk_stream_write_space` (from `mptcp_write_space`,
/// called by `__mptcp_clean_una_wakeup` on DATA_ACK and by `__mptcp_sync_sndbuf`) only
/// then; until then `SOCK_NOSPACE` stays set.
pub fn msk_writeable(wmem: u64, sndbuf: u64) -> bool { sndbuf.saturating_sub(wmem) >= wmem >> 1 && wmem < sndbuf }

/// `MPTCP_SEND_BURST_SIZE` (protocol.c): 64 KiB − tcphdr 20 − MAX_TCP_OPTION_SPACE 40 −
/// ipv6hdr 40 − frag_hdr 8.
pub const SEND_BURST_BYTES: u64 = 65_536 - 20 - 40 - 40 - 8;

/// `GSO_LEGACY_MAX_SIZE`: the veth devices' `sk_gso_max_size` before MPTCP caps it.
pub const GSO_MAX_SIZE: u64 = 65_536;

/// `MPTCP_MAX_GSO_SIZE` (net/mptcp/protocol.c, which caps a subflow's `sk_gso_max_size`
/// to it in `mptcp_sendmsg_frag`): `GSO_LEGACY_MAX_SIZE` − (`MAX_TCP_HEADER` + 1), with
/// `MAX_TCP_HEADER` = L1_CACHE_ALIGN(128 + `MAX_HEADER`) = 192 on the kernel backend's
/// 6.18 build (`MAX_HEADER` = `LL_MAX_HEADER` 32: no WLAN, AX25, Hyper-V net or IP
/// tunnels in its /proc/config.gz; 64-byte cache lines).
pub const MPTCP_MAX_GSO_SIZE: u64 = GSO_MAX_SIZE - (192 + 1);

/// `tcp_xmit_size_goal` (net/ipv4/tcp.c, 6.x) as `mptcp_sendmsg_frag` asks it
/// (`tcp_send_mss`): the payload of one skb, which it fills before it opens another;
/// `gso_segs` × mss with `gso_segs` = ⌊`tcp_bound_to_half_wnd`(`MPTCP_MAX_GSO_SIZE`) /
/// mss⌋, the bound being half the largest window the peer offered once that exceeds
/// TCP_MSS_DEFAULT (536). At least one segment.
pub fn size_goal(max_window: u64, mss: u32) -> u64 {
    let mss = mss.max(1) as u64;
    let cutoff = if max_window > 536 { max_window >> 1 } else { max_window };
    // tcp_bound_to_half_wnd: max(cutoff, 68 - tcp_header_len) when the size exceeds it.
    let bound = if cutoff > 0 && MPTCP_MAX_GSO_SIZE > cutoff { cutoff.max(68 - 32) } else { MPTCP_MAX_GSO_SIZE };
    (bound / mss * mss).max(mss)
}

/// `tcp_tso_segs` -> `tcp_tso_autosize` (net/ipv4/tcp_output.c, 6.x): the most segments
/// `tcp_write_xmit` sends as one skb: about a millisecond at the pacing rate
/// (`sk_pacing_rate >> sk_pacing_shift`, shift 10), plus `gso_max_size >> (min_rtt_us >>
/// tcp_tso_rtt_log 9)` bytes on short paths, at most gso_max_size, at least
/// `tcp_min_tso_segs` (2; BBR's `bbr_min_tso_segs`: 1 below 1.2 Mbit/s). `pacing_rate` in
/// bytes/s; a zero `min_rtt` (no sample: `tcp_min_rtt` is ~0U) adds nothing.
pub fn tso_segs(pacing_rate: u64, min_rtt: SimTime, mss: u32, bbr: bool) -> u32 {
    let mut bytes = pacing_rate >> 10;
    let r = min_rtt.us() >> 9;
    if min_rtt > SimTime::ZERO && r < 32 {
        bytes += MPTCP_MAX_GSO_SIZE >> r;
    }
    let min = if bbr && pacing_rate < 1_200_000 / 8 { 1 } else { 2 };
    ((bytes.min(MPTCP_MAX_GSO_SIZE) / mss.max(1) as u64) as u32).max(min)
}


/// End of the data frag that holds `dsn` (frags at fixed offsets of the data stream).
pub fn dfrag_end(dsn: u64) -> u64 { (dsn / DFRAG_DATA_BYTES + 1) * DFRAG_DATA_BYTES }

/// `sk_wmem_queued` of a subflow holding `bytes` of payload in `segs` skbs (one per
/// segment: the kernel backend turns TSO and GSO off).
pub fn wmem_queued(bytes: u64, segs: u64) -> u64 { bytes + segs * SKB_TX_OVERHEAD }

/// `tcp_sndbuf_expand` (tcp_input.c): `sndbuf_expand · max(TCP_INIT_CWND, cwnd,
/// reordering + 1) · per_mss`, capped at `tcp_wmem[2]`, with `per_mss =
/// roundup_pow_of_two(mss_clamp + headroom) + sizeof(sk_buff)` and `mss_clamp` = mss +
/// the 12-byte timestamp option. `factor` is the congestion control's `sndbuf_expand`
/// (3 for BBR, `bbr_sndbuf_expand`; 2 otherwise).
pub fn sndbuf_expand(mss: u32, cwnd: u32, factor: u64) -> u64 {
    let per_mss = (mss as u64 + 12 + SNDBUF_HEADROOM).next_power_of_two() + SK_BUFF_SIZE;
    // tp->reordering starts at 3 (sysctl_tcp_reordering): reordering + 1 = 4 < 10.
    let nr_segs = cwnd.max(10) as u64;
    (factor * nr_segs * per_mss).min(TCP_WMEM[2])
}

/// Per-subflow state of the MPTCP-level loss detection (`mptcp_subflow_context`:
/// `stale_count`, `stale_rcv_tstamp`) and the subflow's send buffer. The `stale` flag
/// itself is the subflow's `pf`: both make every scheduler skip the subflow until an
/// ACK arrives on it (`mptcp_subflow_active` -> `mptcp_subflow_set_active`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SubflowUp {
    /// MPTCP retransmission periods in a row in which it held data and got no ACK.
    pub stale_count: u8,
    /// `rcv_tstamp` when the count started.
    pub stale_rcv_tstamp: SimTime,
    /// `tcp_sock.rcv_tstamp`: when the last ACK arrived on the subflow.
    pub rcv_tstamp: SimTime,
    /// `sk_sndbuf` in truesize bytes (0 before the subflow is created).
    pub sndbuf: u64,
}

/// Connection-level state of the upstream stack.
#[derive(Clone, Debug)]
pub struct MetaUp {
    /// `msk->timer_ival`: the MPTCP retransmit timer's interval.
    pub timer_ival: SimTime,
    /// When the MPTCP retransmit timer fires (None: not pending).
    pub rtx_deadline: Option<SimTime>,
    /// The engine has an event at this time for the timer.
    pub rtx_event_at: Option<SimTime>,
    /// The path manager heard that the connection is fully established.
    pub pm_notified: bool,
    /// `SO_SNDBUF` given: buffers do not auto-tune (`SOCK_SNDBUF_LOCK`).
    pub sndbuf_locked: bool,
    /// The congestion control's `sndbuf_expand` factor (3 for BBR, else 2).
    pub sndbuf_factor: u64,
    /// Subflow send buffers are modelled: the upstream stack, or a scheduler that fills
    /// subflow send queues (`Scheduler::queues_data`) on either stack.
    pub model_sndbuf: bool,
}

impl MetaUp {
    pub fn new(sndbuf_locked: bool) -> MetaUp { MetaUp { timer_ival: TCP_RTO_MIN, rtx_deadline: None, rtx_event_at: None, pm_notified: false, sndbuf_locked, sndbuf_factor: 2, model_sndbuf: false } }

    /// `__mptcp_set_timeout`: the longest remaining retransmit timer among the subflows
    /// not counting losses (`mptcp_timeout_from_subflow`), or `TCP_RTO_MIN`.
    pub fn set_timeout(&mut self, tout: SimTime) { self.timer_ival = if tout > SimTime::ZERO { tout } else { TCP_RTO_MIN }; }

    /// `mptcp_reset_rtx_timer`: (re)arm at now + `timer_ival`.
    pub fn reset_timer(&mut self, now: SimTime) { self.rtx_deadline = Some(now + self.timer_ival); }
}

/// `mptcp_pm_subflow_chk_stale` (pm.c) for a subflow that still holds data when the
/// MPTCP retransmit timer fires: count the periods without an ACK. `stale` is the
/// subflow's flag. Returns true when a non-stale subflow's count passed
/// `STALE_LOSS_CNT` (the caller then runs `mptcp_pm_subflows_chk_stale`).
pub fn count_stale(s: &mut SubflowUp, stale: &mut bool) -> bool {
    if s.stale_count == 0 {
        s.stale_rcv_tstamp = s.rcv_tstamp;
        s.stale_count = 1;
        false
    } else if s.stale_rcv_tstamp == s.rcv_tstamp {
        s.stale_count = s.stale_count.saturating_add(1);
        !*stale && s.stale_count > STALE_LOSS_CNT
    } else {
        // Progress: `mptcp_subflow_set_active`.
        s.stale_count = 0;
        *stale = false;
        false
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn tso_segs_is_a_millisecond_at_the_pacing_rate_and_at_least_two_segments() {
        // tcp_tso_autosize: 288 090 B/s >> 10 = 281 B, under a segment: tcp_min_tso_segs.
        assert_eq!(tso_segs(288_090, SimTime::from_ms(100), 1424, false), 2);
        // 25 MB/s (200 Mbit/s paced): 24 414 B a millisecond, 17 segments of 1 424 B.
        assert_eq!(tso_segs(25_000_000, SimTime::from_ms(50), 1424, false), 17);
        // Short paths add gso_max_size >> (min_rtt_us >> 9): 1 ms gives 65 536 >> 1.
        assert_eq!(tso_segs(15_000_000, SimTime::from_ms(1), 1448, false), 32, "(14 648 + 32 768) / 1 448");
        assert_eq!(tso_segs(100_000, SimTime::ZERO, 1448, false), 2, "no RTT sample adds nothing");
        assert_eq!(tso_segs(100_000, SimTime::from_ms(50), 1448, true), 1, "BBR below 1.2 Mbit/s");
        assert_eq!(tso_segs(1 << 40, SimTime::from_ms(1), 1448, false), (65_536 / 1448) as u32, "at most gso_max_size");
    }
    use super::*;

    #[test]
    fn sndbuf_expand_reproduces_the_measured_kernel_figures() {
        // Measured on Linux 6.18 (ss -tm, mss 1448, cubic): tb 46 080 after connect,
        // 96 768 at cwnd 21.
        assert_eq!(sndbuf_expand(1448, 10, 2), 46_080);
        assert_eq!(sndbuf_expand(1448, 21, 2), 96_768);
        assert_eq!(sndbuf_expand(1448, 3, 2), 46_080, "never below TCP_INIT_CWND segments");
        assert_eq!(sndbuf_expand(1448, 10, 3), 69_120, "BBR provisions 3 x cwnd");
        assert_eq!(sndbuf_expand(1448, 100_000, 2), TCP_WMEM[2]);
    }

    #[test]
    fn frags_and_bursts_have_the_kernel_sizes() {
        assert_eq!(SEND_BURST_BYTES, 65_428);
        assert_eq!(dfrag_end(0), 32_728);
        assert_eq!(dfrag_end(32_727), 32_728);
        assert_eq!(dfrag_end(32_728), 65_456);
        assert_eq!(wmem_queued(10 * 1448, 10), 14_480 + 8_320);
    }

    #[test]
    fn the_msk_charges_payload_and_frag_headers_and_releases_them_on_data_ack() {
        const D: u64 = DFRAG_DATA_BYTES;
        // 100 000 bytes written: four frags touched, 40 bytes of header each.
        assert_eq!(msk_wmem_queued(0, 100_000), 100_000 + 4 * 40);
        // DATA_ACK of the first frag: its payload and its header go (`dfrag_clear`).
        assert_eq!(msk_wmem_queued(D, 100_000), 100_000 - D + 3 * 40);
        // DATA_ACK into the second frag: only the acked payload goes (`dfrag_uncharge`
        // of the delta); the frag's header stays until its last byte is acked.
        assert_eq!(msk_wmem_queued(40_000, 100_000), 60_000 + 3 * 40);
        // Everything DATA_ACKed: nothing charged.
        assert_eq!(msk_wmem_queued(100_000, 100_000), 0);
        assert_eq!(msk_wmem_queued(0, 0), 0);
    }

    #[test]
    fn a_writer_fills_whole_frags_until_the_charge_reaches_sndbuf() {
        const D: u64 = DFRAG_DATA_BYTES;
        // SO_SNDBUF 204 800: sk_sndbuf 409 600; subflows get the same value, locked.
        let sndbuf = locked_sndbuf(204_800);
        assert_eq!(sndbuf, 409_600);
        assert_eq!(locked_sndbuf(1_000), SOCK_MIN_SNDBUF, "never below SOCK_MIN_SNDBUF");
        for una in [0, 1, 20_000, D - 1, D, 5 * D + 777] {
            let l = msk_write_limit(una, sndbuf);
            assert_eq!(l % D, 0, "stops at a frag end");
            // The copy that ended at l started below sk_sndbuf; at l it has reached it.
            assert!(msk_wmem_queued(una, l - D) < sndbuf, "una {una}");
            assert!(msk_wmem_queued(una, l) >= sndbuf, "una {una}");
        }
        // From an empty buffer: 13 frags (425 464 payload bytes, 425 984 charged).
        assert_eq!(msk_write_limit(0, sndbuf), 13 * D);
    }

    #[test]
    fn a_blocked_writer_wakes_only_when_a_third_of_the_buffer_is_free() {
        // sk_stream_wspace >= sk_stream_min_wspace: sndbuf - wmem >= wmem / 2.
        assert!(msk_writeable(200, 300));
        assert!(!msk_writeable(201, 300));
        assert!(!msk_writeable(300, 300));
        assert!(msk_writeable(0, 300));
    }

    #[test]
    fn a_subflow_turns_stale_after_more_than_four_periods_without_an_ack() {
        let mut s = SubflowUp { rcv_tstamp: SimTime::from_ms(5), ..Default::default() };
        let mut stale = false;
        assert!(!count_stale(&mut s, &mut stale));
        for k in 2..=4 {
            assert!(!count_stale(&mut s, &mut stale), "count {k}");
        }
        assert!(count_stale(&mut s, &mut stale), "the fifth period without an ACK");
        assert_eq!(s.stale_count, 5);
        // Already stale: nothing more to do.
        stale = true;
        assert!(!count_stale(&mut s, &mut stale));
        // An ACK arrived: the next check resets the count and clears `stale`.
        s.rcv_tstamp = SimTime::from_ms(900);
        assert!(!count_stale(&mut s, &mut stale));
        assert_eq!((s.stale_count, stale), (0, false));
    }

    #[test]
    fn an_skb_holds_45_segments_under_the_mptcp_gso_cap_or_half_a_small_window() {
        // 45 x 1 424 = 64 080 <= 65 343 < 46 x 1 424: two data frags (65 456 B) need two
        // skbs (docs/kernel.md, "The restart after idle runs once per skb queued").
        assert_eq!(MPTCP_MAX_GSO_SIZE, 65_343);
        assert_eq!(size_goal(200_000, 1424), 45 * 1424);
        assert!(size_goal(200_000, 1424) < 2 * 32_728);
        // Half a 100 kB window bounds it: 50 000 / 1 424.
        assert_eq!(size_goal(100_000, 1424), 35 * 1424);
        // Half the SYN-ACK's 65 535-B window (the traced first frags).
        assert_eq!(size_goal(65_535, 1424), 23 * 1424);
        assert_eq!(size_goal(0, 1424), 45 * 1424, "no window seen yet: the GSO cap");
    }
}
