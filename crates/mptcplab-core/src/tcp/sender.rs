//! Subflow sender: SACK scoreboard, loss marking, PRR/NewReno recovery, RTO with backoff,
//! cwnd validation. Linux semantics (reference `tcp.md` §1.2–1.6): cwnd and ssthresh in
//! packets, `in_flight = packets_out - (sacked_out + lost_out) + retrans_out`.

use super::rtt::{RttEstimator, RTO_MAX};
use super::seq::{after, before, off};
use crate::cc::{AckSample, AnyCc, CaEvent, CaState, CcState, CongestionControl, Coupling, RateSample, INFINITE_SSTHRESH};
use crate::units::{Bandwidth, SimTime};
use std::collections::VecDeque;

/// Loss recovery after fast retransmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Proportional Rate Reduction (RFC 6937), Linux's default (`tcp_cwnd_reduction`).
    Prr,
    /// RFC 6582 NewReno over the SACK pipe: cwnd = ssthresh for the whole episode. With
    /// pipe accounting (SACKed data leaves `in_flight`) this is what window inflation
    /// emulates without SACK.
    NewReno,
}

#[derive(Clone, Copy, Debug)]
pub struct TcpConfig {
    pub mss: u32,
    pub initial_cwnd: u32,
    pub recovery: Recovery,
    pub rto_min: SimTime,
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// DupThresh (Linux `tcp_reordering`, RFC 5681 §3.2).
    pub dupthresh: u32,
    pub slow_start_after_idle: bool,
    /// Pace every subflow as Linux does with the fq qdisc (`tcp_update_pacing_rate`).
    /// Controllers that pace by themselves (BBR) pace regardless.
    pub pacing: bool,
    /// How the receive buffer is charged and advertised.
    pub rcvbuf_accounting: BufferAccounting,
    /// What an MPTCP receiver holds and when it refuses data (`tcp.receive_memory`).
    pub receive_memory: ReceiveMemory,
    /// Which Linux release's `tcp_is_cwnd_limited` / `tcp_cwnd_validate` decides whether
    /// cwnd may grow.
    pub cwnd_validation: CwndValidation,
    /// The socket can GSO (Linux `sk_can_gso`): the 3.x cwnd validations then add their
    /// GSO clause. Read only by `CwndValidation::Linux3_11` and `Linux3_14`.
    pub gso: bool,
    /// The Linux release the out-of-tree MPTCP patches (its release-specific rules).
    pub base_kernel: BaseKernel,
    /// How a segment is judged lost (`tcp.loss_detection`).
    pub loss_detection: LossDetection,
    /// The tail loss probe (`tcp.tail_loss_probe`; Linux `net.ipv4.tcp_early_retrans`
    /// = 3, `tcp_schedule_loss_probe` / `tcp_send_loss_probe`).
    pub tail_loss_probe: bool,
}

/// `tcp.loss_detection`: when a segment that has not been delivered counts as lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossDetection {
    /// RFC 6675 `IsLost`: DupThresh SACKed segments above it (Linux `tcp_mark_head_lost`,
    /// `net.ipv4.tcp_recovery = 0`); a retransmission is lost again once a segment sent
    /// after it is delivered (Linux 4.x `tcp_mark_lost_retrans`). A tail loss waits for
    /// the RTO.
    #[default]
    DupThresh,
    /// RACK (RFC 8985 §6; Linux `tcp_recovery.c`, `net.ipv4.tcp_recovery = 1`, the only
    /// loss detection from Linux 4.18 on, "tcp: disable RFC6675 loss detection"): a
    /// segment is lost once a segment sent after it is delivered and the delivered one's
    /// RTT plus a reordering window has passed since it was sent; the reordering window
    /// is 0 in recovery or with DupThresh segments SACKed, else min_rtt / 4, and a
    /// timer (ICSK_TIME_REO_TIMEOUT) waits for it. It applies to retransmissions as to
    /// originals, so a tail lost in a burst is repaired as soon as a later
    /// retransmission is delivered.
    Rack,
}

/// What the subflow's one transmit timer is armed for (Linux `icsk_pending`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XmitTimer {
    /// ICSK_TIME_RETRANS.
    #[default]
    Rto,
    /// ICSK_TIME_REO_TIMEOUT: RACK's reordering window (`tcp_rack_reo_timeout`).
    Reo,
    /// ICSK_TIME_LOSS_PROBE: the tail loss probe (`tcp_send_loss_probe`).
    Probe,
}

/// What a transmit-timer expiry did (`SubflowTx::on_xmit_timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerOutcome {
    /// Nothing was outstanding, or the timer was not due.
    Nothing,
    /// A retransmission timeout (`tcp_retransmit_timer`).
    Rto,
    /// RACK's reordering timer marked segments lost (`tcp_rack_reo_timeout`): retransmit.
    Reo,
    /// The loss probe is due (`tcp_send_loss_probe`): the connection sends one new
    /// segment of the subflow's queue if the window allows (`SubflowTx::probe_new`),
    /// else `SubflowTx::probe_last`.
    Probe,
}

/// RACK's state (Linux `tcp_sock.rack`): the send time and end of the most recently sent
/// segment delivered, the RTT of the last delivery sample, and whether it moved since
/// the last loss scan.
#[derive(Clone, Copy, Debug, Default)]
struct RackState {
    mstamp: SimTime,
    end_seq: u32,
    rtt: SimTime,
    advanced: bool,
}

/// The Linux release an out-of-tree MPTCP patches: 3.14 for v0.89, 4.x for v0.9x.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BaseKernel {
    Linux3_14,
    #[default]
    Linux4,
}

/// Cwnd validation: when may cwnd grow, and when has the sender used its cwnd (RFC 2861).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndValidation {
    /// Linux 3.6 to 3.11: as `Linux3_14`, but the GSO clause is `left * mss <
    /// sk_gso_max_size && left < sk_gso_max_segs` (net/ipv4/tcp_cong.c before "tcp: TSO
    /// packets automatic sizing", Linux 3.12).
    Linux3_11,
    /// Linux 3.12 to 3.15 (3.14 is the base of MPTCP v0.89): `tcp_is_cwnd_limited(sk,
    /// in_flight)` in tcp_cong.c, called by `tcp_reno_cong_avoid` with the
    /// `prior_in_flight` that `tcp_ack` took before processing the ACK: limited if
    /// `in_flight >= cwnd`, or with GSO if `left * tcp_tso_win_divisor (3) < cwnd && left
    /// < tp->xmit_size_goal_segs`, else if `left <= tcp_max_tso_deferred_mss` (3), where
    /// `left = cwnd - in_flight`. `tcp_cwnd_validate` (tcp_output.c) counts the network
    /// as fed fully when `packets_out >= cwnd`. No slow-start allowance.
    Linux3_14,
    /// Linux 3.16 to 5.17 (the 4.x of MPTCP v0.9x): `tcp_is_cwnd_limited(sk)` in
    /// include/net/tcp.h: in slow start `cwnd < 2 * max_packets_out` and nothing else,
    /// otherwise the `is_cwnd_limited` that `tcp_cwnd_validate` recorded for the window.
    Linux4,
    /// Linux >= 5.18 (commit "tcp: fix tcp_cwnd_validate() to not forget
    /// is_cwnd_limited"): `is_cwnd_limited` first, then the slow-start allowance.
    Linux5_18,
}

/// Receive-buffer accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferAccounting {
    /// Payload bytes; the window is all the free space.
    Payload,
    /// Linux's: each payload byte held costs two bytes of buffer (skb truesize overhead,
    /// the ratio `tcp_adv_win_scale = 1` assumes), the window is half the free space
    /// (`tcp_win_from_space`), and zero when less than one MSS is free
    /// (`__tcp_select_window`). A "200 KB" buffer then holds at most 100 KB of payload.
    Linux,
}

/// `tcp.receive_memory`: what an MPTCP connection's receiver holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReceiveMemory {
    /// The buffer only closes the window: every arriving segment reaches the MPTCP
    /// level at once and none is refused.
    #[default]
    Window,
    /// Linux 6.x: skbs charged their truesize, held by the subflows until the MPTCP
    /// socket pulls them, a pull that stops over the buffer, and subflows that drop
    /// over theirs (mptcp/rcvmem.rs).
    Skb,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            initial_cwnd: 10,
            recovery: Recovery::Prr,
            rto_min: SimTime::from_ms(200),
            delayed_ack: true,
            delack_timeout: SimTime::from_ms(40),
            dupthresh: 3,
            slow_start_after_idle: true,
            pacing: false,
            rcvbuf_accounting: BufferAccounting::Payload,
            receive_memory: ReceiveMemory::Window,
            cwnd_validation: CwndValidation::Linux5_18,
            gso: true,
            base_kernel: BaseKernel::Linux4,
            loss_detection: LossDetection::DupThresh,
            tail_loss_probe: false,
        }
    }
}

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted and not yet known lost again (Linux `TCPCB_SACKED_RETRANS`).
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;
/// Sent while the sender was application-limited (Linux `tx.is_app_limited`).
const APP_LIMITED: u8 = 16;
/// Already counted by a delivery-rate sample (Linux clears `tx.delivered_mstamp`).
const RATE_DONE: u8 = 32;
/// SACK blocks remembered from one ACK to the next (Linux sends at most 3, RFC 2018).
const SACK_SEEN: usize = 4;
/// Linux `TCP_TIMEOUT_MIN_US`: RACK's reordering timer waits this much past the window.
const RACK_TIMEOUT_MIN: SimTime = SimTime::from_us(2_000);

/// Linux `tcp_skb_sent_after`: sent later, or at the same time with a later end.
#[inline]
fn rack_sent_after(t1: SimTime, t2: SimTime, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && after(seq1, seq2))
}

#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub seq: u32,
    pub len: u32,
    pub dsn: u64,
    pub sent_at: SimTime,
    /// Delivery-rate snapshot at send time (Linux `tcp_skb_cb.tx`, `tcp_rate_skb_sent`).
    tx_delivered: u64,
    tx_delivered_at: SimTime,
    tx_first_tx_at: SimTime,
    flags: u8,
}

impl Seg {
    pub fn sacked(&self) -> bool { self.flags & SACKED != 0 }

    /// Linux `tcp_rate_skb_sent`: the delivery state the packet leaves with.
    fn stamp_rate(&mut self, r: RateStamp) {
        self.tx_delivered = r.delivered;
        self.tx_delivered_at = r.delivered_at;
        self.tx_first_tx_at = r.first_tx_at;
        self.flags &= !(APP_LIMITED | RATE_DONE);
        if r.app_limited {
            self.flags |= APP_LIMITED;
        }
    }
}

/// The sender's delivery-rate state at a send (`Seg::stamp_rate`).
#[derive(Clone, Copy)]
struct RateStamp {
    delivered: u64,
    delivered_at: SimTime,
    first_tx_at: SimTime,
    app_limited: bool,
}

/// What one ACK did, for the connection and the metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckResult {
    pub bytes_acked: u64,
    pub delivered_pkts: u32,
    pub snd_una_advanced: bool,
    pub rtt_sample: Option<SimTime>,
}

#[derive(Clone, Debug, Default)]
pub struct TxStats {
    pub segs_sent: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub segs_retrans: u64,
    pub bytes_acked: u64,
    pub rto_count: u64,
    pub recoveries: u64,
    /// Loss probes sent (Linux TCPLossProbes) and the ones that repaired a loss
    /// (TCPLossProbeRecovery).
    pub loss_probes: u64,
    pub loss_probe_recoveries: u64,
    pub srtt_sum_ms: f64,
    pub srtt_samples: u64,
}

pub struct SubflowTx {
    pub cfg: TcpConfig,
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// `tcp_sock.snd_sml`: the end of the last sub-MSS segment sent (Nagle, Minshall).
    pub snd_sml: u32,
    segs: VecDeque<Seg>,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub st: CcState,
    pub cc: AnyCc,
    pub rtt: RttEstimator,
    /// Current RTO including backoff (Linux `icsk_rto`).
    pub rto: SimTime,
    /// The transmit timer's deadline (RTO, RACK's reordering timeout or the loss probe:
    /// `xmit_timer`).
    pub rto_deadline: Option<SimTime>,
    pub xmit_timer: XmitTimer,
    pub rto_backoffs: u32,
    high_seq: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// Scoreboard cursors: segments before `retx_hint` have no retransmission pending;
    /// those before `lost_hint` need no loss marking.
    retx_hint: usize,
    lost_hint: usize,
    /// One past the highest SACKed segment (0: none): `mark_lost` scans down from here
    /// instead of from the tail, which is the last RTT's unSACKed flight.
    sacked_end: usize,
    /// The SACK blocks of the previous ACK that were walked in full, as (start, end):
    /// every segment inside one is SACKed (flags are never cleared and later segments
    /// start beyond them), so the next ACK's walk jumps over them. `n_seen` are valid.
    sack_seen: [(u32, u32); SACK_SEEN],
    n_seen: usize,
    /// Linux `max_packets_out`/`max_packets_seq`/`is_cwnd_limited` (`tcp_cwnd_validate`).
    max_packets_out: u32,
    max_packets_seq: u32,
    is_cwnd_limited: bool,
    /// RFC 2861 bookkeeping (Linux `snd_cwnd_used`, `snd_cwnd_stamp`).
    snd_cwnd_used: u32,
    snd_cwnd_stamp: SimTime,
    /// Send time of the most recently sent segment known delivered (RACK-style detection
    /// of lost retransmissions, like Linux 4.x `tcp_mark_lost_retrans`).
    latest_delivered_sent_at: SimTime,
    /// Sequence numbers of retransmissions in the order they were sent.
    retrans_fifo: VecDeque<u32>,
    /// RACK (`LossDetection::Rack`), and the first segment its scan of originals needs:
    /// every one before it is SACKed or already lost (Linux removes those from the
    /// time-sorted list, `tcp_tsorted_anchor`).
    rack: RackState,
    rack_hint: usize,
    /// Linux `tlp_high_seq` (snd_nxt when the outstanding probe left; None: none) and
    /// `tlp_retrans` (the probe was a retransmission).
    tlp_high_seq: Option<u32>,
    tlp_retrans: bool,
    last_send: SimTime,
    /// Linux >= 4.x restarts after idle where data is queued, not where it leaves: the
    /// owner calls `idle_restart_check` there and `before_send` does not restart. Set for
    /// upstream MPTCP subflows, whose pushes queue several skbs before any leaves.
    pub restart_on_entail: bool,
    /// Earliest time the pacer lets the next packet leave.
    pub next_send_at: SimTime,
    /// Linux `sk_pacing_rate` in bytes/s: a stored value that `tcp_update_pacing_rate`
    /// refreshes at the end of each ACK `tcp_ack` takes through `tcp_cong_control` and
    /// when the handshake completes, not a function of the current cwnd. A cwnd cut
    /// without an ACK (restart after idle, RTO) leaves it until the next ACK. 0: never set.
    pub sk_pacing_rate: u64,
    /// The receive window the peer advertised on this subflow's ACKs (bytes beyond
    /// this subflow's snd_una it may send; out-of-tree MPTCP keeps one per subflow).
    pub snd_wnd: u64,
    /// The largest window the peer offered (`tp->max_window`, raised by
    /// `tcp_ack_update_window` and the SYN-ACK): bounds the GSO size goal.
    pub max_window: u64,
    /// Delivery-rate estimation (Linux `tcp_rate.c`): packets delivered, when the last
    /// one was, the send time of the packet that started the current interval, and the
    /// app-limited mark (0 = not limited).
    pub delivered: u64,
    delivered_at: SimTime,
    first_tx_at: SimTime,
    app_limited: u64,
    /// The delivery rate the subflow last recorded (Linux `tp->rate_delivered`,
    /// `tp->rate_interval_us`, `tp->rate_app_limited`): packets over an interval, or
    /// None before the first valid sample.
    rate_delivered: Option<(u64, SimTime, bool)>,
    /// Packets ever marked lost (Linux `tp->lost`).
    pub lost_total: u64,
    pub stats: TxStats,
}

impl SubflowTx {
    /// The last recorded delivery rate in bytes of payload per second (Linux
    /// `tcp_compute_delivery_rate`: `rate_delivered · mss / rate_interval`), 0 before the
    /// first valid sample.
    pub fn delivery_rate_bytes_per_sec(&self) -> f64 {
        self.rate_delivered.map_or(0.0, |(d, iv, _)| d as f64 * self.cfg.mss as f64 / iv.secs_f64())
    }

    pub fn new(cfg: TcpConfig, iss: u32, cc: AnyCc, now: SimTime) -> Self {
        let mut s = SubflowTx {
            cfg,
            snd_una: iss,
            snd_nxt: iss,
            snd_sml: iss,
            segs: VecDeque::new(),
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            st: CcState::new(cfg.initial_cwnd, cfg.mss),
            cc,
            rtt: RttEstimator::new(cfg.rto_min),
            rto: super::rtt::RTO_INIT,
            rto_deadline: None,
            xmit_timer: XmitTimer::Rto,
            rto_backoffs: 0,
            high_seq: iss,
            prr_delivered: 0,
            prr_out: 0,
            retx_hint: 0,
            lost_hint: 0,
            sacked_end: 0,
            sack_seen: [(0, 0); SACK_SEEN],
            n_seen: 0,
            max_packets_out: 0,
            max_packets_seq: iss,
            is_cwnd_limited: false,
            snd_cwnd_used: 0,
            snd_cwnd_stamp: now,
            latest_delivered_sent_at: SimTime::ZERO,
            retrans_fifo: VecDeque::new(),
            rack: RackState::default(),
            rack_hint: 0,
            tlp_high_seq: None,
            tlp_retrans: false,
            last_send: now,
            restart_on_entail: false,
            next_send_at: SimTime::ZERO,
            sk_pacing_rate: 0,
            snd_wnd: u64::MAX,
            max_window: 0,
            delivered: 0,
            delivered_at: now,
            first_tx_at: now,
            app_limited: 0,
            rate_delivered: None,
            lost_total: 0,
            stats: TxStats::default(),
        };
        let mut seed = iss as u64 ^ 0x6262_725f_7365_6564;
        s.st.seed = crate::rng::splitmix64(&mut seed);
        s.st.snd_una = iss;
        s.st.snd_nxt = iss;
        s.cc.init(now, &mut s.st);
        s
    }

    /// (Re)initialise the controller, as Linux does once the handshake completes.
    pub fn init_cc(&mut self, now: SimTime) { self.cc.init(now, &mut self.st); }

    /// Linux `tcp_packets_in_flight`.
    #[inline]
    pub fn in_flight(&self) -> u32 { self.packets_out - (self.sacked_out + self.lost_out) + self.retrans_out }

    pub fn in_flight_bytes(&self) -> u64 { self.in_flight() as u64 * self.cfg.mss as u64 }

    /// Bytes sent and not cumulatively acknowledged (`snd_nxt - snd_una`).
    pub fn outstanding_bytes(&self) -> u64 { off(self.snd_nxt, self.snd_una) as u64 }

    #[inline]
    pub fn has_cwnd_space(&self) -> bool { self.in_flight() < self.st.cwnd }

    /// The pacer allows a packet now.
    #[inline]
    pub fn pacing_ok(&self, now: SimTime) -> bool { now >= self.next_send_at }

    /// cwnd space and the pacer's permission.
    #[inline]
    pub fn can_send(&self, now: SimTime) -> bool { self.has_cwnd_space() && self.pacing_ok(now) }

    /// The pacing rate: the controller's own (BBR), else Linux's default when pacing is
    /// on, the stored `sk_pacing_rate` (`update_pacing_rate`). None without an RTT sample
    /// (Linux then does not pace).
    pub fn pacing_rate(&self) -> Option<Bandwidth> {
        if let Some(r) = self.cc.pacing_rate(&self.st) {
            return Some(r);
        }
        if !self.cfg.pacing || self.st.srtt == SimTime::ZERO || self.sk_pacing_rate == 0 {
            return None;
        }
        Some(Bandwidth(self.sk_pacing_rate as f64 * 8.0))
    }

    /// `sk_pacing_rate` in bytes/s as `tcp_tso_autosize` reads it: a pacing controller's
    /// own rate (BBR), else the value `tcp_update_pacing_rate` last stored.
    pub fn sk_pacing_rate_bytes(&self) -> u64 {
        if self.cc.has_cong_control() {
            if let Some(r) = self.cc.pacing_rate(&self.st) {
                return (r.bits_per_sec() / 8.0) as u64;
            }
        }
        self.sk_pacing_rate
    }

    /// `tcp_tso_segs` for this subflow now (mptcp/upstream.rs `tso_segs`).
    pub fn tso_segs(&self) -> u32 {
        crate::mptcp::upstream::tso_segs(self.sk_pacing_rate_bytes(), self.st.min_rtt, self.cfg.mss, self.cc.name().contains("bbr"))
    }

    /// Linux `tcp_update_pacing_rate` (tcp_input.c): store `sk_pacing_rate` from the
    /// cwnd, packets out and SRTT now (`pacing_rate_formula`). Linux calls it at the end
    /// of `tcp_cong_control`, for congestion controls without their own `cong_control`,
    /// and when a connection becomes established.
    pub fn update_pacing_rate(&mut self) {
        self.sk_pacing_rate = pacing_rate_formula(self.cfg.mss, self.st.cwnd, self.st.ssthresh, self.packets_out, self.st.srtt);
    }

    pub fn ca_state(&self) -> CaState { self.st.ca_state }

    /// Bytes sent and not cumulatively acknowledged.
    pub fn outstanding_segs(&self) -> impl Iterator<Item = &Seg> { self.segs.iter() }

    fn set_state(&mut self, s: CaState, coupling: &Coupling) {
        if self.st.ca_state != s {
            self.st.ca_state = s;
            self.cc.on_state(&mut self.st, s, coupling);
        }
    }

    fn rate_stamp(&self) -> RateStamp {
        RateStamp { delivered: self.delivered, delivered_at: self.delivered_at, first_tx_at: self.first_tx_at, app_limited: self.app_limited != 0 }
    }

    /// Linux `tcp_rate_check_app_limited`: the sender has nothing to send, cwnd room,
    /// and no loss to repair. Samples of packets sent from now until that much has been
    /// delivered are marked app-limited.
    pub fn check_app_limited(&mut self) {
        let inf = self.in_flight();
        if inf < self.st.cwnd && self.lost_out == 0 {
            self.app_limited = (self.delivered + inf as u64).max(1);
        }
    }

    /// Linux `tcp_rate_skb_delivered`: sample the most recently sent delivered packet.
    fn rate_on_delivered(&mut self, seg: Seg, rs: &mut Option<(Seg, SimTime)>) {
        if seg.flags & RATE_DONE != 0 {
            return;
        }
        let take = match rs {
            None => true,
            Some((p, _)) => seg.tx_delivered > p.tx_delivered,
        };
        if take {
            // Send elapsed: from the interval's first send to this packet's send.
            self.first_tx_at = seg.sent_at;
            *rs = Some((seg, seg.sent_at.saturating_sub(seg.tx_first_tx_at)));
        }
    }

    /// Index of the first segment marked lost and not yet retransmitted.
    pub fn next_retransmit(&mut self) -> Option<usize> {
        if self.lost_out <= self.retrans_out {
            return None;
        }
        while self.retx_hint < self.segs.len() {
            let f = self.segs[self.retx_hint].flags;
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                return Some(self.retx_hint);
            }
            self.retx_hint += 1;
        }
        None
    }

    fn before_send(&mut self, now: SimTime) {
        if self.packets_out == 0 {
            // Linux `tcp_rate_skb_sent`: a send with nothing in flight starts a new
            // delivery-rate interval.
            self.first_tx_at = now;
            self.delivered_at = now;
            // RFC 2861 restart after idle (Linux tcp_cwnd_restart) and CA_EVENT_TX_START.
            if self.cfg.slow_start_after_idle && !self.restart_on_entail && now.saturating_sub(self.last_send) > self.rto && self.stats.segs_sent > 0 {
                self.halve_for_idle(now.saturating_sub(self.last_send));
                self.cc.on_event(now, &mut self.st, CaEvent::CwndRestart, &Coupling::alone());
            }
            self.cc.on_event(now, &mut self.st, CaEvent::TxStart, &Coupling::alone());
        }
        self.last_send = now;
        if let Some(rate) = self.pacing_rate() {
            // Space departures by the packet's serialisation time at the pacing rate.
            let wire = self.cfg.mss + crate::mptcp::conn::TCP_HEADER_BYTES;
            self.next_send_at = self.next_send_at.max(now) + rate.tx_time(wire);
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
            self.xmit_timer = XmitTimer::Rto;
        }
        if self.st.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
    }

    /// `tcp_cwnd_restart`'s cut (tcp_output.c, every release): ssthresh keeps the old
    /// cwnd's `tcp_current_ssthresh`, and cwnd halves once per RTO of `idle`, not below
    /// min(initial cwnd, cwnd).
    fn halve_for_idle(&mut self, mut idle: SimTime) {
        let restart = self.cfg.initial_cwnd.min(self.st.cwnd);
        let mut cwnd = self.st.cwnd;
        self.st.ssthresh = self.st.current_ssthresh();
        while idle > self.rto && cwnd > restart {
            cwnd >>= 1;
            idle = idle.saturating_sub(self.rto);
        }
        self.st.cwnd = cwnd.max(restart);
    }

    /// Linux >= 4.x `tcp_slow_start_after_idle_check` (include/net/tcp.h): with nothing in
    /// flight, a congestion control without `cong_control` (not BBR), and longer than the
    /// RTO since data last left (`lsndtime`), `tcp_cwnd_restart`: the cut
    /// (`halve_for_idle`) and a restarted RFC 2861 clock (`snd_cwnd_stamp`,
    /// `snd_cwnd_used`). Nothing here moves `lsndtime`, so every call before data leaves
    /// cuts again: Linux calls it for each skb `tcp_skb_entail` queues and for each window
    /// update that finds data queued (`restart_on_entail`). Returns whether it restarted.
    pub fn idle_restart_check(&mut self, now: SimTime) -> bool {
        if !self.cfg.slow_start_after_idle || self.packets_out > 0 || self.cc.has_cong_control() || self.stats.segs_sent == 0 {
            return false;
        }
        let idle = now.saturating_sub(self.last_send);
        if idle <= self.rto {
            return false;
        }
        self.cc.on_event(now, &mut self.st, CaEvent::CwndRestart, &Coupling::alone());
        self.halve_for_idle(idle);
        self.snd_cwnd_stamp = now;
        self.snd_cwnd_used = 0;
        true
    }

    /// Send `len` new bytes mapped to data sequence `dsn`. Returns the subflow sequence.
    /// Nagle's test with Minshall's variant (`tcp_nagle_check`, RFC 896; Linux): a
    /// sub-MSS segment waits while packets are out and an earlier sub-MSS segment is
    /// unacknowledged.
    pub fn nagle_holds(&self, len: u32) -> bool {
        len < self.cfg.mss && self.packets_out > 0 && crate::tcp::seq::after(self.snd_sml, self.snd_una)
    }

    pub fn send_new(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        let seq = self.send_new_unprobed(now, len, dsn);
        // tcp_write_xmit: a send of new data (re)schedules the loss probe; where it may
        // not, a pending probe becomes the RTO (tcp_event_new_data_sent).
        if self.cfg.tail_loss_probe && !self.schedule_loss_probe(now, false) && self.xmit_timer == XmitTimer::Probe {
            self.rearm_rto(now);
        }
        seq
    }

    fn send_new_unprobed(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        self.before_send(now);
        let seq = self.snd_nxt;
        let mut seg = Seg { seq, len, dsn, sent_at: now, tx_delivered: 0, tx_delivered_at: now, tx_first_tx_at: now, flags: 0 };
        seg.stamp_rate(self.rate_stamp());
        self.segs.push_back(seg);
        self.snd_nxt = seq.wrapping_add(len);
        if len < self.cfg.mss {
            self.snd_sml = self.snd_nxt;
        }
        self.st.snd_nxt = self.snd_nxt;
        self.packets_out += 1;
        self.stats.segs_sent += 1;
        self.stats.bytes_sent += len as u64;
        seq
    }

    /// Retransmit segment `idx` (from `next_retransmit`). Returns (seq, len, dsn).
    pub fn retransmit(&mut self, now: SimTime, idx: usize) -> (u32, u32, u64) {
        let out = self.resend(now, idx);
        self.segs[idx].flags |= RETRANS;
        self.retrans_fifo.push_back(out.0);
        self.retrans_out += 1;
        // Linux `tcp_xmit_retransmit_queue` (3.x, 4.x and 6.x alike): retransmitting the
        // head of the retransmission queue restarts the retransmission timer, so a long
        // recovery that keeps repairing the head does not run into an RTO.
        // A pending RACK reordering timer stays.
        if idx == 0 && !(self.xmit_timer == XmitTimer::Reo && self.rto_deadline.is_some()) {
            self.rto_deadline = Some(now + self.rto);
            self.xmit_timer = XmitTimer::Rto;
        }
        out
    }

    /// Segment `idx` leaves again (`__tcp_retransmit_skb`): a new send time and rate
    /// stamp, EVER_RETRANS, counted as sent and retransmitted. Returns (seq, len, dsn).
    fn resend(&mut self, now: SimTime, idx: usize) -> (u32, u32, u64) {
        self.before_send(now);
        let stamp = self.rate_stamp();
        let s = &mut self.segs[idx];
        s.stamp_rate(stamp);
        s.flags |= EVER_RETRANS;
        s.sent_at = now;
        let out = (s.seq, s.len, s.dsn);
        self.stats.segs_sent += 1;
        self.stats.segs_retrans += 1;
        self.stats.bytes_sent += out.1 as u64;
        self.stats.bytes_retrans += out.1 as u64;
        out
    }

    /// Start a window in which nothing was cwnd-limited (tests of `validate_cwnd`'s callers).
    #[cfg(test)]
    pub(crate) fn clear_cwnd_usage(&mut self) {
        self.is_cwnd_limited = false;
        self.max_packets_out = 0;
        self.max_packets_seq = self.snd_nxt;
    }

    /// `tcp_write_xmit`'s call of `tcp_cwnd_validate` after a push: for a subflow that
    /// `sent` something, and (Linux 6.x, `linux_5_18`) for one with data `queued` behind a
    /// full cwnd, which is cwnd-limited without sending.
    #[inline]
    pub fn validate_after_push(&mut self, now: SimTime, sent: bool, queued: bool, app_nospace: bool) {
        let limited = !self.has_cwnd_space();
        if sent || (limited && queued && self.cfg.cwnd_validation == CwndValidation::Linux5_18) {
            self.validate_cwnd(now, limited, app_nospace);
        }
    }

    /// Linux `tcp_cwnd_validate` after a send opportunity: was cwnd the limit? When the
    /// sender has not filled cwnd for a whole RTO (limited by the application or the
    /// receive window), cwnd decays towards what was used (RFC 2861 §3, Linux
    /// `tcp_cwnd_application_limited`), unless the application is blocked on a full send
    /// buffer (`app_nospace`, Linux SOCK_NOSPACE).
    #[inline]
    pub fn validate_cwnd(&mut self, now: SimTime, limited: bool, app_nospace: bool) {
        let new_window = !before(self.snd_una, self.max_packets_seq);
        let update = match self.cfg.cwnd_validation {
            // Linux >= 6.0 ("tcp: fix tcp_cwnd_validate() to not forget is_cwnd_limited",
            // net/ipv4/tcp_output.c): a cwnd-limited send is remembered for the window
            // (`cwnd_usage_seq`); more packets out only count while it is not.
            CwndValidation::Linux5_18 => new_window || limited || (!self.is_cwnd_limited && self.packets_out > self.max_packets_out),
            // 3.16-5.17: a new window, or more packets out than its maximum so far.
            _ => new_window || self.packets_out > self.max_packets_out,
        };
        if update {
            self.max_packets_out = self.packets_out;
            self.max_packets_seq = self.snd_nxt;
            self.is_cwnd_limited = limited;
        }
        // Linux 3.14 tcp_cwnd_validate: "Network is feed fully" when packets_out >= cwnd.
        let fed = match self.cfg.cwnd_validation {
            CwndValidation::Linux3_11 | CwndValidation::Linux3_14 => self.packets_out >= self.st.cwnd,
            _ => self.cwnd_limited(),
        };
        if fed {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp = now;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(self.packets_out);
            if self.cfg.slow_start_after_idle && now.saturating_sub(self.snd_cwnd_stamp) >= self.rto {
                if self.st.ca_state == CaState::Open && !app_nospace {
                    let win_used = self.snd_cwnd_used.max(self.cfg.initial_cwnd);
                    if win_used < self.st.cwnd {
                        self.st.ssthresh = self.st.current_ssthresh();
                        self.st.cwnd = (self.st.cwnd + win_used) >> 1;
                    }
                    self.snd_cwnd_used = 0;
                }
                self.snd_cwnd_stamp = now;
            }
        }
    }

    /// `tcp_is_cwnd_limited` of the release `cfg.cwnd_validation` names, as the ACK path
    /// asks it; `prior_in_flight` is the packets in flight before the ACK (3.14 only).
    fn cwnd_limited_on_ack(&self, prior_in_flight: u32) -> bool {
        match self.cfg.cwnd_validation {
            CwndValidation::Linux3_11 | CwndValidation::Linux3_14 => {
                let gso_segs = match (self.cfg.gso, self.cfg.cwnd_validation) {
                    (false, _) => None,
                    (true, CwndValidation::Linux3_11) => Some(gso_max_segs_3_11(self.cfg.mss)),
                    (true, _) => Some(xmit_size_goal_segs_3_14(self.st.cwnd, self.packets_out, self.st.srtt, self.cfg.mss, self.snd_wnd)),
                };
                cwnd_limited_3_x(self.st.cwnd, prior_in_flight, gso_segs)
            }
            _ => self.cwnd_limited(),
        }
    }

    /// Linux >= 3.16 `tcp_is_cwnd_limited(sk)` (include/net/tcp.h) from the window state
    /// `tcp_cwnd_validate` records.
    pub(crate) fn cwnd_limited(&self) -> bool {
        let slow_start_room = self.st.in_slow_start() && self.st.cwnd < 2 * self.max_packets_out;
        match self.cfg.cwnd_validation {
            // 3.16 - 5.17: "If in slow start, ensure cwnd grows to twice what was ACKed."
            // In slow start that is the whole answer; is_cwnd_limited only outside it.
            CwndValidation::Linux4 => {
                if self.st.in_slow_start() {
                    slow_start_room
                } else {
                    self.is_cwnd_limited
                }
            }
            // >= 5.18. (The 3.x forms are answered by `cwnd_limited_on_ack` and
            // `validate_cwnd` and never ask here.)
            CwndValidation::Linux5_18 | CwndValidation::Linux3_11 | CwndValidation::Linux3_14 => self.is_cwnd_limited || slow_start_room,
        }
    }

    fn seg_index(&self, seq: u32) -> Result<usize, usize> {
        let base = self.snd_una;
        self.segs.binary_search_by(|s| off(s.seq, base).cmp(&off(seq, base)))
    }

    /// Process a cumulative ACK and SACK blocks. `coupling` is the sibling view for
    /// coupled controllers (empty otherwise).
    pub fn on_ack(&mut self, now: SimTime, ack: u32, sacks: &[(u32, u32)], coupling: &Coupling) -> AckResult {
        let mut res = AckResult::default();
        if after(ack, self.snd_nxt) {
            self.n_seen = 0;
            return res; // acknowledges data never sent: ignore
        }
        let mut sack_rtt: Option<SimTime> = None;
        // Linux `ca_rtt_us`: RTT of the most recently sent newly delivered packet.
        let mut ca_rtt: Option<SimTime> = None;
        let mut rate: Option<(Seg, SimTime)> = None;
        let lost_before = self.lost_total;
        let prior_in_flight = self.in_flight();
        // `tcp_ack`: an old ACK (below snd_una) or one with nothing outstanding before it
        // (`no_queue`) skips `tcp_cong_control` and so the pacing-rate update.
        let (prior_packets, prior_snd_una) = (self.packets_out, self.snd_una);
        let mut newly_sacked = 0u32;
        // 1. SACK blocks: mark segments fully covered (RFC 2018/6675 scoreboard).
        let (seen, n_seen) = (self.sack_seen, self.n_seen);
        let seen = &seen[..n_seen];
        self.n_seen = 0;
        for &(bs, be) in sacks {
            if !after(be, ack) || after(be, self.snd_nxt) {
                continue;
            }
            // Walked in full below (a start before snd_una finds no segment).
            if !before(bs, self.snd_una) && before(bs, be) && self.n_seen < SACK_SEEN {
                self.sack_seen[self.n_seen] = (bs, be);
                self.n_seen += 1;
            }
            let start = match self.seg_index(bs) { Ok(i) => i, Err(i) => i };
            let mut i = start;
            while i < self.segs.len() {
                let s = self.segs[i];
                if !before(s.seq, be) {
                    break;
                }
                let end = s.seq.wrapping_add(s.len);
                if s.flags & SACKED != 0 {
                    // Inside a block of the previous ACK: the segments up to that block's
                    // end are all SACKed, nothing to do for them (a block grows by the
                    // latest arrivals; stepping through it cost O(cwnd) per ACK).
                    if let Some(&(_, ce)) = seen.iter().find(|&&(cs, ce)| !before(s.seq, cs) && !after(end, ce)) {
                        i = self.segs.partition_point(|t| !after(t.seq.wrapping_add(t.len), ce));
                        continue;
                    }
                } else if !after(end, be) && !before(s.seq, bs) {
                    let f = &mut self.segs[i].flags;
                    if *f & LOST != 0 { self.lost_out -= 1; }
                    if *f & RETRANS != 0 { self.retrans_out -= 1; }
                    // A SACKed segment is neither lost nor in flight any more.
                    *f = (*f | SACKED) & !(LOST | RETRANS);
                    self.sacked_out += 1;
                    self.sacked_end = self.sacked_end.max(i + 1);
                    newly_sacked += 1;
                    if s.flags & EVER_RETRANS == 0 {
                        if sack_rtt.is_none() {
                            sack_rtt = Some(now - s.sent_at);
                        }
                        ca_rtt = Some(now - s.sent_at);
                    }
                    self.latest_delivered_sent_at = self.latest_delivered_sent_at.max(s.sent_at);
                    if self.cfg.loss_detection == LossDetection::Rack {
                        self.rack_advance(now, &s); // tcp_sacktag_one
                    }
                    self.rate_on_delivered(s, &mut rate);
                    self.segs[i].flags |= RATE_DONE;
                }
                i += 1;
            }
        }
        // 2. Cumulative ACK.
        let mut acked_pkts = 0u32;
        let mut seq_rtt: Option<SimTime> = None;
        let mut retrans_acked = false;
        let mut cum_ca_rtt: Option<SimTime> = None;
        if after(ack, self.snd_una) {
            while let Some(s) = self.segs.front() {
                if after(s.seq.wrapping_add(s.len), ack) {
                    break;
                }
                let s = self.segs.pop_front().unwrap_or_else(|| unreachable!());
                self.packets_out -= 1;
                if s.flags & SACKED != 0 {
                    self.sacked_out -= 1;
                } else {
                    acked_pkts += 1;
                    if s.flags & EVER_RETRANS != 0 {
                        retrans_acked = true;
                    } else {
                        if seq_rtt.is_none() {
                            seq_rtt = Some(now - s.sent_at);
                        }
                        cum_ca_rtt = Some(now - s.sent_at);
                    }
                    self.latest_delivered_sent_at = self.latest_delivered_sent_at.max(s.sent_at);
                    if self.cfg.loss_detection == LossDetection::Rack {
                        self.rack_advance(now, &s); // tcp_clean_rtx_queue
                    }
                    self.rate_on_delivered(s, &mut rate);
                }
                if s.flags & LOST != 0 { self.lost_out -= 1; }
                if s.flags & RETRANS != 0 { self.retrans_out -= 1; }
                res.bytes_acked += s.len as u64;
                self.retx_hint = self.retx_hint.saturating_sub(1);
                self.lost_hint = self.lost_hint.saturating_sub(1);
                self.sacked_end = self.sacked_end.saturating_sub(1);
                self.rack_hint = self.rack_hint.saturating_sub(1);
            }
            self.snd_una = ack;
            self.st.snd_una = ack;
            res.snd_una_advanced = true;
            self.stats.bytes_acked += res.bytes_acked;
        }
        let delivered = acked_pkts + newly_sacked;
        res.delivered_pkts = delivered;
        self.delivered += delivered as u64;
        // 3. RTT: from the oldest newly acked never-retransmitted segment (Karn), else SACK.
        let rtt = if retrans_acked { None } else { seq_rtt }.or(sack_rtt);
        // Linux tcp_clean_rtx_queue: a new SACK's last sample wins over the cumulative one.
        let ca_rtt = ca_rtt.or(if retrans_acked { None } else { cum_ca_rtt });
        if let Some(m) = rtt {
            self.rtt.sample(m, self.snd_una, self.snd_nxt);
            self.rto = self.rtt.rto();
            self.rto_backoffs = 0;
            self.st.srtt = self.rtt.srtt();
            self.st.min_rtt = self.rtt.min_rtt();
            self.stats.srtt_sum_ms += self.st.srtt.ms_f64();
            self.stats.srtt_samples += 1;
        }
        res.rtt_sample = rtt;
        if delivered > 0 {
            // Linux pkts_acked gets `rs->rtt_us`, the most recent packet's RTT.
            self.cc.on_rtt_sample(now, &mut self.st, ca_rtt, delivered);
        }
        // 3b. Linux tcp_process_tlp_ack: what became of the outstanding loss probe.
        if let Some(high) = self.tlp_high_seq {
            if !before(ack, high) {
                if !self.tlp_retrans {
                    self.tlp_high_seq = None; // a probe of new data was acked
                } else if after(ack, high) {
                    // The ACK went past the probe: it repaired a loss. One cwnd reduction
                    // (tcp_init_cwnd_reduction, CWR, tcp_end_cwnd_reduction, tcp_try_keep_open).
                    self.stats.loss_probe_recoveries += 1;
                    self.probe_cwnd_reduction(now, coupling);
                } else if !res.snd_una_advanced && newly_sacked == 0 {
                    // A pure duplicate ACK: the original and the probe both arrived (what
                    // the probe's DSACK says in Linux; the receiver here sends no DSACK).
                    self.tlp_high_seq = None;
                }
            }
        }
        // 4. Loss detection.
        let mut newly_lost = false;
        let mut reo_armed = false;
        match self.cfg.loss_detection {
            LossDetection::DupThresh => {
                if self.sacked_out > 0 {
                    newly_lost |= self.mark_lost();
                }
                if self.retrans_out > 0 && delivered > 0 {
                    newly_lost |= self.mark_lost_retrans();
                }
            }
            // Linux tcp_identify_packet_loss -> tcp_rack_mark_lost: scan only when RACK
            // advanced; what is not yet overdue arms the reordering timer instead of the
            // RTO (FLAG_SET_XMIT_TIMER cleared), at most one RTO ahead, 2 ms over.
            LossDetection::Rack => {
                if std::mem::take(&mut self.rack.advanced) {
                    let (lost, wait) = self.rack_detect_loss(now);
                    newly_lost = lost;
                    if let Some(w) = wait {
                        self.rto_deadline = Some(now + (w + RACK_TIMEOUT_MIN).min(self.rto));
                        self.xmit_timer = XmitTimer::Reo;
                        reo_armed = true;
                    }
                }
            }
        }
        // 5. Congestion state machine (Linux tcp_fastretrans_alert, simplified).
        match self.st.ca_state {
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                if self.lost_out > 0 {
                    self.enter_recovery(coupling);
                } else if self.sacked_out > 0 {
                    self.set_state(CaState::Disorder, coupling);
                } else {
                    self.set_state(CaState::Open, coupling);
                }
            }
            CaState::Recovery => {
                if !before(self.snd_una, self.high_seq) {
                    // tcp_end_cwnd_reduction: cwnd = ssthresh.
                    // (A controller with its own cong_control keeps its cwnd.)
                    if self.st.ssthresh < INFINITE_SSTHRESH && !self.cc.has_cong_control() {
                        self.st.cwnd = self.st.ssthresh.max(1);
                    }
                    self.cc.on_event(now, &mut self.st, CaEvent::CompleteCwr, coupling);
                    self.set_state(if self.sacked_out > 0 { CaState::Disorder } else { CaState::Open }, coupling);
                }
            }
            CaState::Loss => {
                if !before(self.snd_una, self.high_seq) {
                    self.set_state(CaState::Open, coupling);
                }
            }
        }
        // 6. Delivery-rate sample (Linux tcp_rate_gen).
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_at = now;
        }
        let mut rs = RateSample { acked_sacked: delivered, losses: (self.lost_total - lost_before) as u32, prior_in_flight, rtt: ca_rtt, ..Default::default() };
        if let Some((p, send_elapsed)) = rate {
            rs.prior_delivered = p.tx_delivered;
            rs.is_app_limited = p.flags & APP_LIMITED != 0;
            rs.delivered = self.delivered - p.tx_delivered;
            let ack_elapsed = now.saturating_sub(p.tx_delivered_at);
            let iv = send_elapsed.max(ack_elapsed);
            // Shorter than min_rtt: ACK compression made it too optimistic (Linux).
            rs.interval = if iv < self.st.min_rtt { None } else { Some(iv) };
            // Linux 4.9+ tcp_rate_gen: keep the sample unless it is app-limited and below
            // the one kept (what `tcpi_delivery_rate` reports).
            if let Some(iv) = rs.interval.filter(|&iv| iv > SimTime::ZERO) {
                let keep = match self.rate_delivered {
                    None => true,
                    Some((d, i, _)) => !rs.is_app_limited || rs.delivered as u128 * i.ns() as u128 >= d as u128 * iv.ns() as u128,
                };
                if keep {
                    self.rate_delivered = Some((rs.delivered, iv, rs.is_app_limited));
                }
            }
        }
        // 7. cwnd: the controller's own control, else reduction during recovery, else
        // the controller's growth (Linux tcp_cong_control).
        self.st.in_flight = self.in_flight();
        let sample = AckSample {
            now,
            acked: delivered,
            ack_seq: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            cwnd_limited: self.cwnd_limited_on_ack(prior_in_flight),
            paced: false,
            delivered_total: self.delivered,
            delivered_at: self.delivered_at,
            lost_total: self.lost_total,
            rs,
        };
        if self.cc.has_cong_control() {
            self.cc.cong_control(&mut self.st, &sample, coupling);
            if std::mem::take(&mut self.st.request_app_limited) {
                self.app_limited = (self.delivered + self.in_flight() as u64).max(1);
            }
        } else if self.st.ca_state == CaState::Recovery {
            if delivered > 0 {
                match self.cfg.recovery {
                    Recovery::Prr => self.prr(delivered, res.snd_una_advanced && !newly_lost),
                    Recovery::NewReno => self.st.cwnd = self.st.ssthresh.max(1),
                }
            }
        } else if delivered > 0 && res.snd_una_advanced {
            // Linux tcp_may_raise_cwnd: grow only on ACKs that acknowledge new data
            // (FLAG_DATA_ACKED), by all packets delivered (acked + SACKed).
            self.cc.on_ack(&mut self.st, &sample, coupling);
        }
        self.st.cwnd = self.st.cwnd.max(crate::cc::MIN_CWND);
        if prior_packets > 0 && !before(ack, prior_snd_una) && !self.cc.has_cong_control() {
            self.update_pacing_rate();
        }
        // 8. RTO timer: restart when new data is acked, stop when nothing is outstanding
        // (Linux FLAG_SET_XMIT_TIMER -> tcp_rearm_rto, unless RACK armed its timer).
        if self.packets_out == 0 {
            self.clear_xmit_timer();
        } else if res.snd_una_advanced && !reo_armed {
            // tcp_set_xmit_timer: the loss probe where it may be scheduled, else the RTO.
            if !(self.cfg.tail_loss_probe && self.schedule_loss_probe(now, true)) {
                self.rearm_rto(now);
            }
        }
        res
    }

    /// Linux `tcp_schedule_loss_probe` (tail loss probe, RFC 8985 §7.2): in Open or CWR
    /// with packets out, a probe 2·SRTT after now, plus `rto_min` when one packet is out
    /// (a delayed ACK) or `TCP_TIMEOUT_MIN_US` otherwise, 1 s without an RTT sample, but
    /// never later than the RTO would fire (the whole RTO when the ACK path advances it,
    /// else what is left of it since the head was sent). Returns whether it is armed.
    fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if self.packets_out == 0 || !matches!(self.st.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut timeout = if self.rtt.has_sample() {
            let srtt = self.rtt.srtt();
            srtt + srtt + if self.packets_out == 1 { self.cfg.rto_min } else { RACK_TIMEOUT_MIN }
        } else {
            super::rtt::RTO_INIT
        };
        let rto_left = if advancing_rto {
            Some(self.rto)
        } else {
            // tcp_rto_delta_us: only a positive remainder caps the probe.
            self.segs.front().map(|h| (h.sent_at + self.rto).saturating_sub(now)).filter(|&d| d > SimTime::ZERO)
        };
        if let Some(d) = rto_left {
            timeout = timeout.min(d);
        }
        self.rto_deadline = Some(now + timeout);
        self.xmit_timer = XmitTimer::Probe;
        true
    }

    /// The probe that `on_xmit_timer` asked for was sent as new data (`send_new` without
    /// its probe scheduling: `tcp_write_xmit(..., push_one = 2)` forces one segment past
    /// cwnd and schedules nothing). `tcp_send_loss_probe`'s `probe_sent`.
    pub fn probe_new(&mut self, now: SimTime, len: u32, dsn: u64) -> u32 {
        let seq = self.send_new_unprobed(now, len, dsn);
        self.tlp_retrans = false;
        self.probe_sent(now);
        seq
    }

    /// `tcp_send_loss_probe` with nothing new to send: retransmit the last segment
    /// (`__tcp_retransmit_skb`: EVER_RETRANS, a new send time, not counted in
    /// retrans_out). Returns (seq, len, dsn), or None if there is none.
    pub fn probe_last(&mut self, now: SimTime) -> Option<(u32, u32, u64)> {
        let last = self.segs.len().checked_sub(1)?;
        if self.segs[last].flags & SACKED != 0 {
            self.rearm_rto(now);
            return None;
        }
        let out = self.resend(now, last);
        self.tlp_retrans = true;
        self.probe_sent(now);
        Some(out)
    }

    /// `probe_sent:` in `tcp_send_loss_probe`: remember snd_nxt, count it, and rearm the
    /// RTO from now (the probe timer is no longer pending).
    fn probe_sent(&mut self, now: SimTime) {
        self.tlp_high_seq = Some(self.snd_nxt);
        self.stats.loss_probes += 1;
        self.rto_deadline = Some(now + self.rto);
        self.xmit_timer = XmitTimer::Rto;
    }

    /// `tcp_process_tlp_ack` on a probe that repaired a loss: `tcp_init_cwnd_reduction`,
    /// CWR, `tcp_end_cwnd_reduction` (cwnd = ssthresh) and `tcp_try_keep_open`.
    fn probe_cwnd_reduction(&mut self, now: SimTime, coupling: &Coupling) {
        self.tlp_high_seq = None;
        self.high_seq = self.snd_nxt;
        self.st.cwnd_cnt = 0;
        self.st.prior_cwnd = self.st.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        self.set_state(CaState::Cwr, coupling);
        if !self.cc.has_cong_control() {
            if self.st.ssthresh < INFINITE_SSTHRESH {
                self.st.cwnd = self.st.ssthresh.max(1);
            }
            self.cc.on_event(now, &mut self.st, CaEvent::CompleteCwr, coupling);
        }
        let keep = if self.sacked_out + self.lost_out > 0 || self.retrans_out > 0 { CaState::Disorder } else { CaState::Open };
        self.set_state(keep, coupling);
    }

    /// Linux `tcp_rearm_rto`: an RTO from now, or, replacing a pending RACK timer, what
    /// is left of the RTO since the head was sent (`tcp_rto_delta_us`).
    fn rearm_rto(&mut self, now: SimTime) {
        let other_pending = self.xmit_timer != XmitTimer::Rto && self.rto_deadline.is_some();
        self.rto_deadline = Some(match (other_pending, self.segs.front()) {
            (true, Some(head)) => (head.sent_at + self.rto).max(now + SimTime::from_us(1)),
            _ => now + self.rto,
        });
        self.xmit_timer = XmitTimer::Rto;
    }

    /// Nothing outstanding: no transmit timer (`inet_csk_clear_xmit_timer`).
    fn clear_xmit_timer(&mut self) {
        self.rto_deadline = None;
        self.xmit_timer = XmitTimer::Rto;
    }

    /// Linux `tcp_rack_advance`: a segment sent at `s.sent_at` was just delivered. A
    /// retransmission delivered sooner than min_rtt after it left was the original's
    /// delivery and does not count.
    fn rack_advance(&mut self, now: SimTime, s: &Seg) {
        let rtt = now.saturating_sub(s.sent_at);
        let min_rtt = self.rtt.min_rtt();
        // tcp_min_rtt is ~0U before the first sample.
        if s.flags & EVER_RETRANS != 0 && (min_rtt == SimTime::ZERO || rtt < min_rtt) {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        let end = s.seq.wrapping_add(s.len);
        if rack_sent_after(s.sent_at, self.rack.mstamp, end, self.rack.end_seq) {
            self.rack.mstamp = s.sent_at;
            self.rack.end_seq = end;
        }
    }

    /// Linux `tcp_rack_reo_wnd`. No reordering is ever seen here (paths keep order and
    /// DSACK is not modelled: `reord_seen` = 0, `reo_wnd_steps` = 1), so the window is 0
    /// in recovery or once DupThresh segments are SACKed, else min(min_rtt / 4, srtt).
    fn rack_reo_wnd(&self) -> SimTime {
        if self.st.ca_state >= CaState::Recovery || self.sacked_out >= self.cfg.dupthresh {
            return SimTime::ZERO;
        }
        let min_rtt = self.rtt.min_rtt();
        let quarter = if min_rtt == SimTime::ZERO { SimTime::MAX } else { SimTime::from_us(min_rtt.us() / 4) };
        quarter.min(SimTime::from_us(self.st.srtt.us()))
    }

    /// Linux `tcp_rack_detect_loss`: every segment still in flight that was sent before
    /// the most recently sent delivered one, and has waited the RACK RTT plus the
    /// reordering window, is lost. Walks Linux's time-sorted list as its two sorted
    /// parts: originals never marked lost (sequence order is send order) and
    /// retransmissions (`retrans_fifo`). Returns whether any was marked, and the longest
    /// wait left for those sent before but not yet overdue.
    fn rack_detect_loss(&mut self, now: SimTime) -> (bool, Option<SimTime>) {
        let limit = self.rack.rtt + self.rack_reo_wnd();
        let (mstamp, rack_end) = (self.rack.mstamp, self.rack.end_seq);
        let mut wait: Option<SimTime> = None;
        let mut first_lost: Option<usize> = None;
        let mut any = false;
        let mut prefix = true;
        let mut i = self.rack_hint;
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.flags & (SACKED | LOST) == 0 {
                if !rack_sent_after(mstamp, s.sent_at, rack_end, s.seq.wrapping_add(s.len)) {
                    break;
                }
                let elapsed = now.saturating_sub(s.sent_at);
                if elapsed >= limit {
                    self.segs[i].flags |= LOST;
                    self.lost_out += 1;
                    self.lost_total += 1;
                    first_lost.get_or_insert(i);
                    any = true;
                } else {
                    wait = wait.max(Some(limit - elapsed));
                    prefix = false;
                }
            }
            if prefix {
                self.rack_hint = i + 1;
            }
            i += 1;
        }
        let mut k = 0;
        while k < self.retrans_fifo.len() {
            let idx = match self.seg_index(self.retrans_fifo[k]) {
                Ok(idx) if self.segs[idx].flags & (RETRANS | SACKED) == RETRANS => idx,
                _ => {
                    self.retrans_fifo.remove(k); // acked, SACKed or lost meanwhile
                    continue;
                }
            };
            let s = self.segs[idx];
            if !rack_sent_after(mstamp, s.sent_at, rack_end, s.seq.wrapping_add(s.len)) {
                break;
            }
            let elapsed = now.saturating_sub(s.sent_at);
            if elapsed >= limit {
                // Lost again: due for another retransmission (it stays LOST).
                self.segs[idx].flags &= !RETRANS;
                self.retrans_out -= 1;
                self.lost_total += 1;
                first_lost = Some(first_lost.map_or(idx, |f| f.min(idx)));
                any = true;
                self.retrans_fifo.remove(k);
            } else {
                wait = wait.max(Some(limit - elapsed));
                k += 1;
            }
        }
        if let Some(f) = first_lost {
            self.retx_hint = self.retx_hint.min(f);
        }
        (any, wait)
    }

    /// The transmit timer is due: an RTO, RACK's reordering timer or the loss probe.
    pub fn on_xmit_timer(&mut self, now: SimTime, coupling: &Coupling) -> TimerOutcome {
        match self.xmit_timer {
            XmitTimer::Rto => {
                if self.on_rto(now, coupling) { TimerOutcome::Rto } else { TimerOutcome::Nothing }
            }
            XmitTimer::Reo => self.on_reo_timeout(now, coupling),
            // tcp_send_loss_probe: at most one outstanding probe; else the connection
            // sends it (`probe_new` or `probe_last`).
            XmitTimer::Probe => {
                if self.packets_out == 0 {
                    self.clear_xmit_timer();
                    TimerOutcome::Nothing
                } else if self.tlp_high_seq.is_some() {
                    self.rearm_rto(now);
                    TimerOutcome::Nothing
                } else {
                    TimerOutcome::Probe
                }
            }
        }
    }

    /// Whether `len` more bytes fit in the window the peer advertised (`tcp_snd_wnd_test`).
    pub fn snd_wnd_allows(&self, len: u32) -> bool {
        off(self.snd_nxt, self.snd_una) as u64 + len as u64 <= self.snd_wnd
    }

    /// Linux `tcp_rack_reo_timeout`: mark what is now overdue; if anything was, enter
    /// recovery (with one PRR step, `tcp_cwnd_reduction(sk, 1, ...)`) and retransmit.
    /// Then `tcp_rearm_rto` with the REO timer still pending: the RTO from the head's send
    /// time, which is now if the head is retransmitted (`SubflowTx::retransmit`).
    fn on_reo_timeout(&mut self, now: SimTime, coupling: &Coupling) -> TimerOutcome {
        self.n_seen = 0;
        if self.packets_out == 0 {
            self.clear_xmit_timer();
            return TimerOutcome::Nothing;
        }
        self.rearm_rto(now);
        let (lost, _) = self.rack_detect_loss(now);
        if !lost {
            return TimerOutcome::Nothing;
        }
        if self.st.ca_state != CaState::Recovery {
            self.enter_recovery(coupling);
            if !self.cc.has_cong_control() && self.cfg.recovery == Recovery::Prr {
                self.prr(1, false);
            }
        }
        TimerOutcome::Reo
    }

    /// Linux `tcp_cwnd_reduction` (PRR, RFC 6937), reference `tcp.md` §1.3.
    fn prr(&mut self, newly_acked_sacked: u32, ssrb: bool) {
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.st.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
            let prior = self.st.prior_cwnd.max(1) as i64;
            (ssthresh * self.prr_delivered as i64 + prior - 1) / prior - self.prr_out as i64
        } else if ssrb {
            // PRR-SSRB.
            delta.min((self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64) + 1)
        } else {
            // PRR-CRB.
            delta.min(newly_acked_sacked as i64)
        };
        sndcnt = sndcnt.max(if self.prr_out == 0 { 1 } else { 0 });
        self.st.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    fn enter_recovery(&mut self, coupling: &Coupling) {
        self.tlp_high_seq = None; // tcp_init_cwnd_reduction
        self.st.prior_cwnd = self.st.cwnd;
        self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        self.high_seq = self.snd_nxt;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.stats.recoveries += 1;
        self.set_state(CaState::Recovery, coupling);
        if self.cfg.recovery == Recovery::NewReno && !self.cc.has_cong_control() {
            self.st.cwnd = self.st.ssthresh;
        }
    }

    /// RFC 6675 `IsLost`: a segment with at least DupThresh SACKed segments above it is
    /// lost. Linux `tcp_mark_head_lost` with `reordering` = 3. Amortised O(1) per segment.
    fn mark_lost(&mut self) -> bool {
        // Find the index of the DupThresh-th highest SACKed segment.
        let mut count = 0;
        let mut limit = None;
        for i in (self.lost_hint..self.sacked_end).rev() {
            if self.segs[i].flags & SACKED != 0 {
                count += 1;
                if count >= self.cfg.dupthresh {
                    limit = Some(i);
                    break;
                }
            }
        }
        let Some(limit) = limit else { return false };
        let mut first = None;
        for i in self.lost_hint..limit {
            let f = &mut self.segs[i].flags;
            if *f & (SACKED | LOST) == 0 {
                *f |= LOST;
                self.lost_out += 1;
                self.lost_total += 1;
                first.get_or_insert(i);
            }
        }
        self.lost_hint = self.lost_hint.max(limit);
        if let Some(i) = first {
            self.retx_hint = self.retx_hint.min(i);
        }
        first.is_some()
    }

    /// A retransmission sent before a segment that has since been delivered was lost
    /// again (paths here never reorder). Linux 4.x `tcp_mark_lost_retrans` / RACK.
    fn mark_lost_retrans(&mut self) -> bool {
        let mut any = false;
        let horizon = self.latest_delivered_sent_at;
        while let Some(&seq) = self.retrans_fifo.front() {
            let Ok(i) = self.seg_index(seq) else {
                self.retrans_fifo.pop_front(); // acked meanwhile
                continue;
            };
            let s = &mut self.segs[i];
            if s.flags & RETRANS == 0 || s.flags & SACKED != 0 {
                self.retrans_fifo.pop_front();
                continue;
            }
            if s.sent_at >= horizon {
                break;
            }
            s.flags &= !RETRANS;
            self.retrans_out -= 1;
            self.lost_total += 1;
            self.retrans_fifo.pop_front();
            self.retx_hint = self.retx_hint.min(i);
            any = true;
        }
        any
    }

    /// The retransmission timer fired (Linux `tcp_retransmit_timer` -> `tcp_enter_loss`).
    /// Returns false if there was nothing outstanding.
    pub fn on_rto(&mut self, now: SimTime, coupling: &Coupling) -> bool {
        self.n_seen = 0;
        if self.packets_out == 0 {
            self.rto_deadline = None;
            return false;
        }
        self.stats.rto_count += 1;
        self.tlp_high_seq = None;
        let first = self.st.ca_state <= CaState::Disorder || !before(self.snd_una, self.high_seq) || (self.st.ca_state == CaState::Loss && self.rto_backoffs == 0);
        if first {
            self.st.prior_cwnd = self.st.cwnd;
            self.st.ssthresh = self.cc.ssthresh(&self.st).max(2);
        }
        // Every segment not SACKed is lost; nothing is in flight any more.
        self.lost_out = 0;
        self.retrans_out = 0;
        for s in self.segs.iter_mut() {
            if s.flags & SACKED == 0 {
                if s.flags & LOST == 0 || s.flags & RETRANS != 0 {
                    self.lost_total += 1;
                }
                s.flags |= LOST;
                self.lost_out += 1;
            }
            s.flags &= !RETRANS;
        }
        self.retx_hint = 0;
        self.lost_hint = self.segs.len();
        self.retrans_fifo.clear();
        self.st.cwnd = 1;
        self.st.cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.set_state(CaState::Loss, coupling);
        self.cc.on_event(now, &mut self.st, CaEvent::Loss, coupling);
        self.rto = self.rto.mul(2).min(RTO_MAX);
        self.rto_backoffs += 1;
        self.rto_deadline = Some(now + self.rto);
        self.xmit_timer = XmitTimer::Rto;
        true
    }

    /// Data sequence ranges sent on this subflow and not yet cumulatively acked at
    /// subflow level (for reinjection on another subflow after an RTO).
    pub fn unacked_dsn_ranges(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.segs.iter().filter(|s| s.flags & SACKED == 0).map(|s| (s.dsn, s.len))
    }

    /// Invariant checks for tests: counters agree with the scoreboard.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for (i, s) in self.segs.iter().enumerate() {
            if s.flags & SACKED != 0 {
                sacked += 1;
                if i >= self.sacked_end {
                    return Err(format!("segment {i} is SACKed above the hint {}", self.sacked_end));
                }
            }
            let end = s.seq.wrapping_add(s.len);
            if s.flags & SACKED == 0 && self.sack_seen[..self.n_seen].iter().any(|&(cs, ce)| !before(s.seq, cs) && !after(end, ce)) {
                return Err(format!("segment {i} lies in a remembered SACK block but is not SACKed"));
            }
            if s.flags & LOST != 0 && s.flags & SACKED == 0 { lost += 1; }
            if s.flags & RETRANS != 0 && s.flags & SACKED == 0 { retrans += 1; }
        }
        if self.packets_out as usize != self.segs.len() || sacked != self.sacked_out || lost != self.lost_out || retrans != self.retrans_out {
            return Err(format!(
                "scoreboard mismatch: out {} vs {}, sacked {} vs {}, lost {} vs {}, retrans {} vs {}",
                self.packets_out, self.segs.len(), self.sacked_out, sacked, self.lost_out, lost, self.retrans_out, retrans
            ));
        }
        if let Some(r) = self.pacing_rate() {
            if !(r.0.is_finite() && r.0 > 0.0) {
                return Err(format!("pacing rate {} bit/s is not positive and finite", r.0));
            }
        }
        if self.st.cwnd < crate::cc::MIN_CWND || self.st.cwnd > (1 << 30) {
            return Err(format!("cwnd out of range: {}", self.st.cwnd));
        }
        Ok(())
    }
}

/// `tcp_update_pacing_rate`'s value in bytes/s (tcp_input.c; reference `tcp.md` §1.7):
/// `mss · (USEC_PER_SEC/100 << 3) · ratio · max(cwnd, packets_out) / srtt_us` with
/// `srtt_us` Linux's SRTT in µs << 3, ratio `tcp_pacing_ss_ratio` = 200 (%) while
/// `cwnd < ssthresh / 2` and `tcp_pacing_ca_ratio` = 120 otherwise; undivided without an
/// RTT sample (`if (likely(tp->srtt_us))`).
pub fn pacing_rate_formula(mss: u32, cwnd: u32, ssthresh: u32, packets_out: u32, srtt: SimTime) -> u64 {
    let ratio: u64 = if cwnd < ssthresh / 2 { 200 } else { 120 };
    let rate = mss as u64 * ((1_000_000 / 100) << 3) * ratio * cwnd.max(packets_out) as u64;
    match srtt.us() * 8 {
        0 => rate,
        d => rate / d,
    }
}

/// Linux 3.x `tcp_is_cwnd_limited(sk, in_flight)` (net/ipv4/tcp_cong.c, 3.6-3.15):
/// `in_flight >= cwnd`; or, with GSO, `left * tcp_tso_win_divisor < cwnd` and `left`
/// below the release's GSO bound (`gso_segs`, None without GSO); or `left <=
/// tcp_max_tso_deferred_mss` (3, include/net/tcp.h); `left = cwnd - in_flight`.
/// `tcp_tso_win_divisor` is 3 by default.
pub fn cwnd_limited_3_x(cwnd: u32, in_flight: u32, gso_segs: Option<u64>) -> bool {
    const TSO_WIN_DIVISOR: u64 = 3;
    const MAX_TSO_DEFERRED_MSS: u64 = 3;
    if in_flight >= cwnd {
        return true;
    }
    let left = (cwnd - in_flight) as u64;
    if let Some(segs) = gso_segs {
        if left * TSO_WIN_DIVISOR < cwnd as u64 && left < segs {
            return true;
        }
    }
    left <= MAX_TSO_DEFERRED_MSS
}

/// GSO_MAX_SIZE (65 536) and GSO_MAX_SEGS (65 535), the defaults of `sk_gso_max_size`
/// and `sk_gso_max_segs` that `sk_setup_caps` copies from the device.
const GSO_MAX_SIZE: u64 = 65_536;
const GSO_MAX_SEGS: u64 = 65_535;

/// The 3.6-3.11 GSO bound as a segment count: `left * mss < sk_gso_max_size && left <
/// sk_gso_max_segs` holds exactly for `left < min(ceil(65 536 / mss), 65 535)`.
pub fn gso_max_segs_3_11(mss: u32) -> u64 {
    let mss = mss.max(1) as u64;
    GSO_MAX_SIZE.div_ceil(mss).min(GSO_MAX_SEGS)
}

/// `tp->xmit_size_goal_segs` as Linux 3.12-3.15 `tcp_xmit_size_goal` (net/ipv4/tcp.c)
/// sets it; MPTCP v0.89's `mptcp_xmit_size_goal` (mptcp_output.c) calls it on every
/// subflow when the application writes. The goal is half a millisecond at the pacing
/// rate `sk_pacing_rate = 2 * mss * max(cwnd, packets_out) / srtt` (twice the delivery
/// rate; `tcp_update_pacing_rate`, 3.12-3.15): `gso_size = max(rate / 2000,
/// tcp_min_tso_segs (2) * mss)`, at most `sk_gso_max_size - 1 - hlen` (hlen = 20 B IPv4
/// + 32 B TCP with timestamps), at most half the peer's largest window
/// (`tcp_bound_to_half_wnd`), in whole segments. Without an RTT sample Linux does not
/// divide by srtt, so the goal is the GSO maximum.
pub fn xmit_size_goal_segs_3_14(cwnd: u32, packets_out: u32, srtt: SimTime, mss: u32, max_window: u64) -> u64 {
    const MIN_TSO_SEGS: u64 = 2;
    const HLEN: u64 = 20 + 32;
    let mss = mss.max(1) as u64;
    let gso_size = if srtt == SimTime::ZERO {
        u64::MAX
    } else {
        let rate_bps = 2 * mss * cwnd.max(packets_out) as u64 * 1_000_000_000 / srtt.ns().max(1);
        rate_bps / 2000
    };
    let mut goal = gso_size.max(MIN_TSO_SEGS * mss).min(GSO_MAX_SIZE - 1 - HLEN);
    // tcp_bound_to_half_wnd: cutoff = max_window / 2 once max_window > TCP_MSS_DEFAULT
    // (536), and never below 68 - tcp_header_len (36 B).
    let cutoff = if max_window > 536 { max_window >> 1 } else { max_window };
    if cutoff > 0 && goal > cutoff {
        goal = cutoff.max(68 - 32);
    }
    (goal / mss).min(GSO_MAX_SEGS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{make_default, Coupling};

    fn tx() -> SubflowTx {
        let mut t = SubflowTx::new(TcpConfig { mss: 1000, ..Default::default() }, 0xffff_fc00, make_default("reno").unwrap(), SimTime::ZERO);
        t.st.cwnd = 20;
        t
    }

    fn send_n(t: &mut SubflowTx, n: u32, now: SimTime) {
        for _ in 0..n {
            let dsn = t.stats.segs_sent * 1000;
            t.send_new(now, 1000, dsn);
        }
    }

    #[test]
    fn nagle_holds_a_short_segment_only_while_an_earlier_short_one_is_unacknowledged() {
        // Linux tcp_nagle_check with tcp_minshall_check (mss 1000 here).
        let mut t = tx();
        assert!(!t.nagle_holds(4), "nothing out");
        t.send_new(SimTime::ZERO, 1000, 0);
        assert!(!t.nagle_holds(4), "a full segment out: Minshall lets a short one go");
        assert!(!t.nagle_holds(1000), "full segments are never held");
        let una = t.snd_una;
        t.send_new(SimTime::ZERO, 4, 1000);
        assert!(t.nagle_holds(4), "a short segment unacknowledged");
        assert!(!t.nagle_holds(1000));
        // The full segment acked, the short one not yet: still held.
        t.on_ack(SimTime::from_ms(10), una.wrapping_add(1000), &[], &Coupling::alone());
        assert!(t.nagle_holds(4));
        t.on_ack(SimTime::from_ms(20), una.wrapping_add(1004), &[], &Coupling::alone());
        assert!(!t.nagle_holds(4), "the short one acked");
    }

    #[test]
    fn three_sacked_segments_above_a_hole_start_prr_recovery_and_end_at_ssthresh() {
        // tcp.md test vector 8: cwnd 20 -> ssthresh 10, cwnd 10 after recovery.
        let mut t = tx();
        let base = t.snd_una;
        send_n(&mut t, 20, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, true, true);
        let now = SimTime::from_ms(100);
        // Segment 0 lost; segments 1..=3 SACKed one by one.
        for k in 1..=3u32 {
            let blk = (base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)));
            t.on_ack(now, base, &[blk], &Coupling::alone());
        }
        assert_eq!(t.ca_state(), CaState::Recovery);
        assert_eq!(t.st.ssthresh, 10);
        assert_eq!(t.lost_out, 1);
        let idx = t.next_retransmit().unwrap();
        assert_eq!(idx, 0);
        t.retransmit(now, idx);
        t.check_invariants().unwrap();
        // Remaining segments get SACKed, then the retransmission is acked.
        for k in 4..20u32 {
            let blk = (base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)));
            t.on_ack(now, base, &[blk], &Coupling::alone());
            while t.has_cwnd_space() && t.st.ca_state == CaState::Recovery && t.stats.segs_sent < 40 {
                send_n(&mut t, 1, now);
            }
            t.check_invariants().unwrap();
        }
        let snd_nxt = t.snd_nxt;
        // Not cwnd-limited: the CC must not add growth on the exit ACK, so cwnd is exactly ssthresh.
        t.is_cwnd_limited = false;
        t.max_packets_out = 0;
        t.on_ack(SimTime::from_ms(200), snd_nxt, &[], &Coupling::alone());
        assert_eq!(t.ca_state(), CaState::Open);
        assert_eq!(t.st.cwnd, 10);
        t.check_invariants().unwrap();
    }

    #[test]
    fn an_rto_marks_everything_lost_and_restarts_from_one_packet() {
        // tcp.md test vector 7.
        let mut t = tx();
        send_n(&mut t, 20, SimTime::ZERO);
        assert!(t.on_rto(SimTime::from_secs(1), &Coupling::alone()));
        assert_eq!((t.st.ssthresh, t.st.cwnd, t.ca_state()), (10, 1, CaState::Loss));
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.rto, SimTime::from_secs(2));
        let i = t.next_retransmit().unwrap();
        t.retransmit(SimTime::from_secs(1), i);
        assert_eq!(t.in_flight(), 1);
        assert!(!t.has_cwnd_space());
        t.check_invariants().unwrap();
        // A second timeout does not lower ssthresh again.
        t.on_rto(SimTime::from_secs(3), &Coupling::alone());
        assert_eq!(t.st.ssthresh, 10);
        assert_eq!(t.rto, SimTime::from_secs(4));
    }

    #[test]
    fn a_lost_retransmission_is_detected_when_later_data_is_delivered() {
        let mut t = tx();
        let base = t.snd_una;
        send_n(&mut t, 10, SimTime::ZERO);
        let now = SimTime::from_ms(50);
        for k in 1..=3u32 {
            t.on_ack(now, base, &[(base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)))], &Coupling::alone());
        }
        let i = t.next_retransmit().unwrap();
        t.retransmit(now, i);
        // New data sent after the retransmission gets SACKed: the retransmission was lost.
        send_n(&mut t, 1, SimTime::from_ms(60));
        let top = t.snd_nxt;
        t.on_ack(SimTime::from_ms(120), base, &[(base.wrapping_add(1000), top)], &Coupling::alone());
        assert_eq!(t.next_retransmit(), Some(0));
        t.check_invariants().unwrap();
    }

    /// Twenty segments one ms apart over a 100 ms RTT; the first five are acked at 104 ms.
    fn rack_flight(detection: LossDetection) -> (SubflowTx, u32) {
        let mut t = SubflowTx::new(TcpConfig { mss: 1000, loss_detection: detection, ..Default::default() }, 0xffff_fc00, make_default("reno").unwrap(), SimTime::ZERO);
        t.st.cwnd = 20;
        let base = t.snd_una;
        for k in 0..20u64 {
            t.send_new(SimTime::from_ms(k), 1000, k * 1000);
        }
        t.on_ack(SimTime::from_ms(104), base.wrapping_add(5000), &[], &Coupling::alone());
        (t, base)
    }

    #[test]
    fn rack_repairs_a_tail_loss_in_the_same_recovery_where_dupthresh_waits_for_the_rto() {
        // Segment 5 and the tail 17..19 are lost; 6..16 arrive (RFC 8985 §6.2; Linux
        // tcp_rack_detect_loss). Three SACKed segments: the reordering window is 0.
        for detection in [LossDetection::Rack, LossDetection::DupThresh] {
            let (mut t, base) = rack_flight(detection);
            let seg = |k: u32| base.wrapping_add(1000 * k);
            for k in 6..=16u32 {
                t.on_ack(SimTime::from_ms(100 + k as u64), seg(5), &[(seg(6), seg(k + 1))], &Coupling::alone());
            }
            assert_eq!(t.ca_state(), CaState::Recovery, "{detection:?}");
            assert_eq!(t.next_retransmit(), Some(0), "segment 5 is the first lost ({detection:?})");
            let rtx_at = SimTime::from_ms(117);
            t.retransmit(rtx_at, 0);
            // The retransmission is delivered: the cumulative ACK reaches segment 17.
            t.on_ack(rtx_at + SimTime::from_ms(100), seg(17), &[], &Coupling::alone());
            t.check_invariants().unwrap();
            match detection {
                // The tail was sent before the delivered retransmission and has waited an
                // RTT since: lost, retransmitted now, no RTO.
                LossDetection::Rack => {
                    assert_eq!(t.lost_out, 3);
                    assert_eq!(t.next_retransmit(), Some(0));
                    assert_eq!(t.xmit_timer, XmitTimer::Rto);
                }
                // No SACKed segment above the tail: nothing to retransmit until the RTO.
                LossDetection::DupThresh => {
                    assert_eq!(t.lost_out, 0);
                    assert_eq!(t.next_retransmit(), None);
                }
            }
        }
    }

    #[test]
    fn with_fewer_than_dupthresh_sacked_rack_waits_a_quarter_of_min_rtt_on_its_own_timer() {
        // Segment 5 lost, only segment 6 SACKed: reordering window min_rtt / 4 = 25 ms
        // (tcp_rack_reo_wnd); the REO timer fires 2 ms after it (TCP_TIMEOUT_MIN_US).
        let (mut t, base) = rack_flight(LossDetection::Rack);
        let seg = |k: u32| base.wrapping_add(1000 * k);
        let now = SimTime::from_ms(106);
        t.on_ack(now, seg(5), &[(seg(6), seg(7))], &Coupling::alone());
        assert_eq!(t.ca_state(), CaState::Disorder);
        assert_eq!(t.lost_out, 0, "not yet overdue");
        assert_eq!(t.xmit_timer, XmitTimer::Reo);
        // Segment 5 left at 5 ms; RACK RTT 100 ms (segment 6's); overdue at 5 + 100 + 25.
        assert_eq!(t.rto_deadline, Some(SimTime::from_ms(5 + 100 + 25 + 2)));
        let fire = t.rto_deadline.unwrap();
        assert_eq!(t.on_xmit_timer(fire, &Coupling::alone()), TimerOutcome::Reo);
        assert_eq!(t.ca_state(), CaState::Recovery);
        assert_eq!(t.next_retransmit(), Some(0));
        // tcp_rearm_rto with the REO timer pending: the RTO runs from the head's send time,
        // and retransmitting the head restarts it from now.
        assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Rto, Some(SimTime::from_ms(5) + t.rto)));
        t.retransmit(fire, 0);
        assert_eq!(t.rto_deadline, Some(fire + t.rto));
        t.check_invariants().unwrap();
        // DupThresh: one SACKed segment marks nothing and arms nothing new.
        let (mut d, base) = rack_flight(LossDetection::DupThresh);
        d.on_ack(now, base.wrapping_add(5000), &[(base.wrapping_add(6000), base.wrapping_add(7000))], &Coupling::alone());
        assert_eq!((d.lost_out, d.xmit_timer), (0, XmitTimer::Rto));
    }

    #[test]
    fn a_tail_loss_probe_follows_two_srtt_after_the_last_send_and_a_repaired_tail_reduces_cwnd_once() {
        // tcp_schedule_loss_probe / tcp_send_loss_probe / tcp_process_tlp_ack (Linux 6.x).
        let mut t = SubflowTx::new(TcpConfig { mss: 1000, loss_detection: LossDetection::Rack, tail_loss_probe: true, ..Default::default() }, 7, make_default("reno").unwrap(), SimTime::ZERO);
        t.st.cwnd = 20;
        t.st.ssthresh = 10; // congestion avoidance: the reduction's ssthresh is cwnd / 2
        let base = t.snd_una;
        for k in 0..10u64 {
            t.send_new(SimTime::ZERO, 1000, k * 1000);
        }
        assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Probe, Some(SimTime::from_secs(1))), "no RTT sample: TCP_TIMEOUT_INIT, capped by the RTO");
        // Nine of ten acked at 100 ms: probe at 2 x SRTT + rto_min (one packet out).
        let now = SimTime::from_ms(100);
        t.on_ack(now, base.wrapping_add(9000), &[], &Coupling::alone());
        let srtt = t.rtt.srtt();
        assert_eq!(srtt, SimTime::from_ms(100));
        assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Probe, Some(now + (srtt + srtt + t.cfg.rto_min).min(t.rto))));
        let fire = t.rto_deadline.unwrap();
        assert_eq!(t.on_xmit_timer(fire, &Coupling::alone()), TimerOutcome::Probe);
        // Nothing new queued: the last segment goes again.
        assert_eq!(t.probe_last(fire), Some((base.wrapping_add(9000), 1000, 9000)));
        assert_eq!((t.stats.loss_probes, t.xmit_timer, t.rto_deadline), (1, XmitTimer::Rto, Some(fire + t.rto)));
        assert_eq!(t.in_flight(), 1, "a probe is not counted in retrans_out");
        // Its ACK reaches tlp_high_seq only: no verdict yet. New data acked past it: the
        // probe repaired a loss, cwnd falls to ssthresh once (CWR, then Open).
        let cwnd = t.st.cwnd;
        t.on_ack(fire + srtt, base.wrapping_add(10_000), &[], &Coupling::alone());
        assert_eq!(t.stats.loss_probe_recoveries, 0);
        t.send_new(fire + srtt, 1000, 10_000);
        t.on_ack(fire + srtt + srtt, base.wrapping_add(11_000), &[], &Coupling::alone());
        assert_eq!(t.stats.loss_probe_recoveries, 1);
        assert!(t.st.cwnd < cwnd && t.st.cwnd == t.st.ssthresh, "cwnd {} -> {}", cwnd, t.st.cwnd);
        assert_eq!(t.ca_state(), CaState::Open);
        t.check_invariants().unwrap();
        // A second probe timer with one outstanding: no second probe (at most one).
        let mut u = SubflowTx::new(TcpConfig { mss: 1000, tail_loss_probe: true, ..Default::default() }, 7, make_default("reno").unwrap(), SimTime::ZERO);
        u.send_new(SimTime::ZERO, 1000, 0);
        u.send_new(SimTime::ZERO, 1000, 1000);
        assert_eq!(u.on_xmit_timer(SimTime::from_secs(1), &Coupling::alone()), TimerOutcome::Probe);
        u.probe_last(SimTime::from_secs(1));
        u.xmit_timer = XmitTimer::Probe;
        assert_eq!(u.on_xmit_timer(SimTime::from_secs(2), &Coupling::alone()), TimerOutcome::Nothing);
        assert_eq!(u.stats.loss_probes, 1);
    }

    #[test]
    fn retransmitting_the_head_restarts_the_retransmission_timer_and_a_later_segment_does_not() {
        // tcp_xmit_retransmit_queue: `if (skb == rtx_head ...) rearm_timer = true`.
        let mut t = tx();
        let base = t.snd_una;
        send_n(&mut t, 10, SimTime::ZERO);
        let armed = t.rto_deadline.unwrap();
        let now = SimTime::from_ms(150);
        for k in 1..=3u32 {
            t.on_ack(now, base, &[(base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)))], &Coupling::alone());
        }
        assert_eq!(t.rto_deadline, Some(armed), "SACKs alone do not move the timer");
        let i = t.next_retransmit().unwrap();
        assert_eq!(i, 0, "the head is lost");
        t.retransmit(now, i);
        assert_eq!(t.rto_deadline, Some(now + t.rto), "the head's retransmission restarts it");
        // A later hole's retransmission leaves it alone.
        let later = SimTime::from_ms(160);
        t.segs[5].flags |= LOST;
        t.lost_out += 1;
        t.retransmit(later, 5);
        assert_eq!(t.rto_deadline, Some(now + t.rto));
    }

    #[test]
    fn linux_default_pacing_spaces_packets_by_cwnd_over_srtt() {
        // tcp.md §1.7 vector 11: cwnd 10, mss 1448, SRTT 100 ms, in CA -> 1.2 * 144 800 B/s.
        let mut t = SubflowTx::new(TcpConfig { pacing: true, ..Default::default() }, 0, make_default("reno").unwrap(), SimTime::ZERO);
        assert!(t.pacing_rate().is_none(), "no RTT sample yet");
        t.st.srtt = SimTime::from_ms(100);
        t.st.ssthresh = 10;
        assert!(t.pacing_rate().is_none(), "no ACK has stored a rate yet");
        t.update_pacing_rate();
        let r = t.pacing_rate().unwrap();
        assert!((r.0 / 8.0 - 173_760.0).abs() < 1.0, "{}", r.0 / 8.0);
        // Stored, as Linux's `sk_pacing_rate`: a cwnd change without an ACK leaves it.
        t.st.cwnd = 20;
        assert_eq!(t.pacing_rate().unwrap().0, r.0);
        t.st.cwnd = 10;
        t.send_new(SimTime::ZERO, 1448, 0);
        assert!(!t.pacing_ok(SimTime::from_ms(1)));
        // 1500 B at 173 760 B/s = 8.63 ms.
        assert!(t.pacing_ok(SimTime::from_us(8_633)));
        assert!(!t.pacing_ok(SimTime::from_us(8_600)));
    }

    #[test]
    fn the_rtt_sample_skips_retransmitted_segments() {
        let mut t = tx();
        send_n(&mut t, 1, SimTime::ZERO);
        t.on_rto(SimTime::from_secs(1), &Coupling::alone());
        let i = t.next_retransmit().unwrap();
        t.retransmit(SimTime::from_secs(1), i);
        let nxt = t.snd_nxt;
        let r = t.on_ack(SimTime::from_ms(1010), nxt, &[], &Coupling::alone());
        assert!(r.rtt_sample.is_none());
        assert_eq!(t.packets_out, 0);
        assert!(t.rto_deadline.is_none());
    }

    /// Records every ACK sample it is given (a plug-in through `AnyCc::Dyn`).
    struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<AckSample>>>);
    impl CongestionControl for Recorder {
        fn name(&self) -> &'static str { "recorder" }
        fn on_ack(&mut self, _st: &mut CcState, _a: &AckSample, _c: &Coupling) {}
        fn has_cong_control(&self) -> bool { true }
        fn cong_control(&mut self, _st: &mut CcState, a: &AckSample, _c: &Coupling) { self.0.lock().unwrap().push(*a); }
        fn ssthresh(&mut self, st: &CcState) -> u32 { st.ssthresh }
    }

    #[test]
    fn delivery_rate_is_delivered_over_the_longer_of_send_and_ack_elapsed() {
        // cc-uncoupled.md §2.6 (tcp_rate.c): 10 packets, send_elapsed 8 ms (sent over
        // 0..8 ms), ACKed at 10 ms → interval 10 ms → 1000 packets per second.
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let cc = AnyCc::Dyn(Box::new(Recorder(log.clone())));
        let mut t = SubflowTx::new(TcpConfig { mss: 1000, ..Default::default() }, 0, cc, SimTime::ZERO);
        t.st.cwnd = 20;
        for k in 0..10u64 {
            let now = SimTime::from_us(k * 8000 / 9);
            t.send_new(now, 1000, k * 1000);
        }
        t.on_ack(SimTime::from_ms(10), 10_000, &[], &Coupling::alone());
        let a = log.lock().unwrap()[0];
        assert_eq!(a.rs.delivered, 10);
        assert_eq!(a.rs.acked_sacked, 10);
        assert_eq!(a.rs.prior_delivered, 0);
        assert_eq!(a.rs.interval, Some(SimTime::from_ms(10)));
        assert!((a.rs.rate_pps().unwrap() - 1000.0).abs() < 1e-9);
        assert_eq!(a.delivered_total, 10);
        // The RTT of the most recent packet (sent at 8 ms) is 2 ms: the sample's rtt.
        assert_eq!(a.rs.rtt, Some(SimTime::from_ms(10) - SimTime::from_us(8000)));
        assert!(!a.rs.is_app_limited);
        assert!((t.delivery_rate_bytes_per_sec() - 1e6).abs() < 1e-3, "{}", t.delivery_rate_bytes_per_sec());
        // Nothing more to send: the next packet's sample is app-limited until the mark
        // (delivered + in flight) has been delivered.
        t.check_app_limited();
        t.send_new(SimTime::from_ms(11), 1000, 10_000);
        t.on_ack(SimTime::from_ms(21), 11_000, &[], &Coupling::alone());
        let b = log.lock().unwrap()[1];
        assert!(b.rs.is_app_limited);
        assert_eq!(b.rs.delivered, 1);
        // An app-limited sample below the kept rate does not replace it (tcp_rate_gen).
        assert!((t.delivery_rate_bytes_per_sec() - 1e6).abs() < 1e-3, "{}", t.delivery_rate_bytes_per_sec());
    }

    fn tx_with(v: CwndValidation, gso: bool) -> SubflowTx {
        let mut t = SubflowTx::new(TcpConfig { mss: 1000, cwnd_validation: v, gso, ..Default::default() }, 0, make_default("reno").unwrap(), SimTime::ZERO);
        t.st.cwnd = 20;
        t
    }

    #[test]
    fn linux_3_x_counts_a_sender_within_three_packets_of_cwnd_or_inside_the_gso_bound_as_cwnd_limited() {
        // tcp_is_cwnd_limited (tcp_cong.c, 3.6-3.15): left <= 3, or with GSO left * 3 <
        // cwnd and left under the release's bound.
        assert!(cwnd_limited_3_x(20, 20, None));
        assert!(cwnd_limited_3_x(20, 17, None));
        assert!(!cwnd_limited_3_x(20, 16, None));
        let bound = Some(gso_max_segs_3_11(1448)); // 46 segments of 1448 B < 64 KiB
        assert_eq!(bound, Some(46));
        assert!(cwnd_limited_3_x(20, 14, bound), "left 6: 18 < 20");
        assert!(!cwnd_limited_3_x(20, 13, bound), "left 7: 21 >= 20");
        assert!(!cwnd_limited_3_x(200, 150, bound), "left 50 is past 64 KiB");
        // 3.12-3.15: the bound is xmit_size_goal_segs, 2 at these rates.
        assert!(!cwnd_limited_3_x(20, 14, Some(2)), "left 6 >= 2 segments");
    }

    #[test]
    fn the_3_14_size_goal_is_half_a_millisecond_at_the_pacing_rate_and_at_least_two_segments() {
        // 5 Mbit/s-class subflow: cwnd 40, srtt 80 ms -> rate 2 * 1448 * 40 / 0.08 =
        // 1.448 MB/s, 724 B per half-ms tick -> max(724, 2 * 1448) -> 2 segments.
        assert_eq!(xmit_size_goal_segs_3_14(40, 40, SimTime::from_ms(80), 1448, u64::MAX), 2);
        // 1 Gbit/s-class: cwnd 1000, srtt 10 ms -> 289.6 MB/s -> 144 800 B, capped at
        // 65 535 - 52 = 65 483 B -> 45 segments.
        assert_eq!(xmit_size_goal_segs_3_14(1000, 1000, SimTime::from_ms(10), 1448, u64::MAX), 45);
        // Half the peer's window bounds it: 40 000 B window -> 20 000 B -> 13 segments.
        assert_eq!(xmit_size_goal_segs_3_14(1000, 1000, SimTime::from_ms(10), 1448, 40_000), 13);
        // No RTT sample yet: the GSO maximum.
        assert_eq!(xmit_size_goal_segs_3_14(10, 0, SimTime::ZERO, 1448, u64::MAX), 45);
    }

    #[test]
    fn reno_grows_in_slow_start_with_half_the_window_idle_under_4x_and_not_under_3_14() {
        // 12 of 20 packets in flight, no loss (ssthresh infinite): 4.x allows growth up to
        // 2 x max_packets_out = 24; 3.x sees left = 8 (> 3, and 24 >= 20 with GSO).
        for (v, grows) in [(CwndValidation::Linux4, true), (CwndValidation::Linux5_18, true), (CwndValidation::Linux3_14, false), (CwndValidation::Linux3_11, false)] {
            let mut t = tx_with(v, true);
            send_n(&mut t, 12, SimTime::ZERO);
            t.validate_cwnd(SimTime::ZERO, false, false);
            let ack = t.snd_una.wrapping_add(2000);
            t.on_ack(SimTime::from_ms(50), ack, &[], &Coupling::alone());
            assert_eq!(t.st.cwnd > 20, grows, "{v:?}: cwnd {}", t.st.cwnd);
        }
    }

    #[test]
    fn linux_4_slow_start_ignores_is_cwnd_limited_once_cwnd_is_twice_the_window_and_5_18_does_not() {
        for (v, grows) in [(CwndValidation::Linux4, false), (CwndValidation::Linux5_18, true)] {
            let mut t = tx_with(v, true);
            send_n(&mut t, 20, SimTime::ZERO);
            t.validate_cwnd(SimTime::ZERO, true, false); // cwnd-limited window of 20
            t.st.cwnd = 50; // >= 2 x max_packets_out, still in slow start
            let ack = t.snd_una.wrapping_add(1000);
            t.on_ack(SimTime::from_ms(50), ack, &[], &Coupling::alone());
            assert_eq!(t.st.cwnd > 50, grows, "{v:?}: cwnd {}", t.st.cwnd);
        }
    }

    #[test]
    fn linux_6_remembers_a_cwnd_limited_window_when_a_later_send_has_room_and_4x_forgets_it() {
        // The sequence of "tcp: fix tcp_cwnd_validate() to not forget is_cwnd_limited"
        // (2022): cwnd-limited with 20 out, then in the same window cwnd has room and 22
        // are out. 3.16-5.17 overwrite is_cwnd_limited with false (22 > 20); 6.x keep it
        // for the window. Congestion avoidance, so no slow-start allowance.
        for (v, limited) in [(CwndValidation::Linux4, false), (CwndValidation::Linux5_18, true)] {
            let mut t = tx_with(v, true);
            t.st.ssthresh = 10;
            send_n(&mut t, 20, SimTime::ZERO);
            t.validate_cwnd(SimTime::ZERO, true, false);
            t.st.cwnd = 25;
            send_n(&mut t, 2, SimTime::ZERO);
            t.validate_cwnd(SimTime::ZERO, false, false);
            assert_eq!(t.cwnd_limited(), limited, "{v:?}");
        }
    }

    #[test]
    fn rfc2861_decay_hits_a_sender_short_of_cwnd_under_3_14_but_not_one_4x_slow_start_counts_as_limited() {
        // 18 of 20 packets out for more than an RTO (1 s before any sample): 3.14
        // tcp_cwnd_validate sees packets_out < cwnd and tcp_cwnd_application_limited
        // sets cwnd = (20 + 18) / 2; 4.x slow start has 20 < 2 x 18 and keeps 20.
        for (v, cwnd) in [(CwndValidation::Linux3_14, 19), (CwndValidation::Linux4, 20)] {
            let mut t = tx_with(v, true);
            send_n(&mut t, 18, SimTime::ZERO);
            t.validate_cwnd(SimTime::ZERO, false, false);
            t.validate_cwnd(SimTime::from_ms(1100), false, false);
            assert_eq!(t.st.cwnd, cwnd, "{v:?}");
        }
    }

    #[test]
    fn after_idle_cwnd_restarts_and_the_srtt_the_scheduler_reads_stays_as_last_sampled() {
        // tcp_cwnd_restart (tcp_output.c, 3.14 and 4.x alike): idle longer than the RTO
        // halves cwnd once per RTO down to min(IW, cwnd); no RTT sample, so srtt, which
        // the minRTT scheduler compares, keeps its last value.
        let mut t = tx_with(CwndValidation::Linux3_14, true);
        t.st.cwnd = 80;
        send_n(&mut t, 1, SimTime::ZERO);
        let nxt = t.snd_nxt;
        t.on_ack(SimTime::from_ms(300), nxt, &[], &Coupling::alone());
        let srtt = t.st.srtt;
        assert_eq!(srtt, SimTime::from_ms(300));
        let rto = t.rto;
        let cwnd = t.st.cwnd;
        // Idle for 2.5 RTOs after the last send at 0: two halvings.
        let now = SimTime::from_ns(rto.ns() * 5 / 2);
        t.send_new(now, 1000, 1000);
        assert_eq!(t.st.cwnd, (cwnd >> 2).max(10), "cwnd {cwnd} rto {rto:?}");
        assert_eq!(t.st.srtt, srtt);
    }

    #[test]
    fn the_upstream_restart_check_halves_again_on_every_call_until_data_leaves() {
        // Linux >= 4.x `tcp_slow_start_after_idle_check` runs from `tcp_skb_entail` for
        // each skb queued and measures the idle time from `lsndtime`, which only a send
        // moves: a subflow idle for 1.5 RTOs that queues two skbs halves cwnd twice,
        // and restarts no more once data has left (docs/kernel.md, "The restart after
        // idle runs once per skb queued").
        let idle = |calls: usize, in_flight: bool| {
            let mut t = tx_with(CwndValidation::Linux5_18, true);
            t.restart_on_entail = true;
            t.st.cwnd = 88;
            send_n(&mut t, 1, SimTime::ZERO);
            let nxt = t.snd_nxt;
            t.on_ack(SimTime::from_ms(100), nxt, &[], &Coupling::alone());
            let (cwnd, rto) = (t.st.cwnd, t.rto);
            if in_flight {
                send_n(&mut t, 1, SimTime::from_ms(100));
            }
            let now = t.last_send + SimTime::from_ns(rto.ns() * 3 / 2);
            let restarted = (0..calls).filter(|_| t.idle_restart_check(now)).count();
            // The send that follows does not restart again.
            t.send_new(now, 1000, 1000);
            (cwnd, t.st.cwnd, restarted)
        };
        let (cwnd, one, n1) = idle(1, false);
        assert_eq!((one, n1), (cwnd / 2, 1), "one skb: one halving");
        let (cwnd, two, n2) = idle(2, false);
        assert_eq!((two, n2), (cwnd / 4, 2), "two skbs: two halvings");
        let (cwnd, busy, n0) = idle(2, true);
        assert_eq!((busy, n0), (cwnd, 0), "data in flight: no restart");
    }
}
