//! Subflow sender: SACK scoreboard, loss marking, PRR/NewReno recovery, RTO with backoff,
//! cwnd validation. Linux semantics (reference `tcp.md` §1.2–1.6): cwnd and ssthresh in
//! packets, `in_flight = packets_out - (sacked_out + lost_out) + retrans_out`.
//!
//! This file owns the sender's state (`SubflowTx`) and pacing; the segments in flight and
//! their marks are the scoreboard's (`tcp::scoreboard`). The rest is in parts: `config.rs` (which Linux behaviour each part follows),
//! `send.rs` (segments leaving, Nagle, restart after idle), `ack.rs` (an ACK's walk:
//! SACK, cumulative ACK, RTT, rate sample, controller), `loss.rs` (RACK or dupthresh,
//! PRR or NewReno, the reordering timer and the RTO), `probe.rs` (the tail loss probe),
//! `cwnd_validation.rs` (whether cwnd was used, by base kernel).

use super::rtt::{RttEstimator, RTO_MAX};
use super::seq::{after, before, off};
use crate::cc::{AckSample, AnyCc, CaEvent, CaState, CcState, CongestionControl, Coupling, RateSample, INFINITE_SSTHRESH};
use crate::units::{Bandwidth, SimTime};

mod ack;
mod config;
mod cwnd_validation;
mod loss;
mod probe;
mod send;
#[cfg(test)]
mod tests;

pub use config::{BaseKernel, BufferAccounting, CwndValidation, LossDetection, ReceiveMemory, Recovery, TcpConfig, TimerOutcome, XmitTimer};
pub use cwnd_validation::{cwnd_limited_3_x, gso_max_segs_3_11, xmit_size_goal_segs_3_14};
use loss::{RackState, RACK_TIMEOUT_MIN};
use super::scoreboard::{RateStamp, Scoreboard, APP_LIMITED, EVER_RETRANS, LOST, RATE_DONE, RETRANS, SACKED};
pub use super::scoreboard::Seg;

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
    /// Every segment sent and not cumulatively acked, with Linux's counters of them.
    pub sb: Scoreboard,
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
    /// RACK (`LossDetection::Rack`).
    rack: RackState,
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
            sb: Scoreboard::new(),
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
            max_packets_out: 0,
            max_packets_seq: iss,
            is_cwnd_limited: false,
            snd_cwnd_used: 0,
            snd_cwnd_stamp: now,
            latest_delivered_sent_at: SimTime::ZERO,
            rack: RackState::default(),
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
    pub fn in_flight(&self) -> u32 { self.sb.in_flight() }

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
        self.sk_pacing_rate = pacing_rate_formula(self.cfg.mss, self.st.cwnd, self.st.ssthresh, self.sb.packets_out, self.st.srtt);
    }

    pub fn ca_state(&self) -> CaState { self.st.ca_state }

    /// Bytes sent and not cumulatively acknowledged.
    pub fn outstanding_segs(&self) -> impl Iterator<Item = &Seg> { self.sb.iter() }

    fn set_state(&mut self, s: CaState, coupling: &Coupling) {
        if self.st.ca_state != s {
            self.st.ca_state = s;
            self.cc.on_state(&mut self.st, s, coupling);
        }
    }

    /// Whether `len` more bytes fit in the window the peer advertised (`tcp_snd_wnd_test`).
    pub fn snd_wnd_allows(&self, len: u32) -> bool {
        off(self.snd_nxt, self.snd_una) as u64 + len as u64 <= self.snd_wnd
    }

    /// Data sequence ranges sent on this subflow and not yet cumulatively acked at
    /// subflow level (for reinjection on another subflow after an RTO).
    pub fn unacked_dsn_ranges(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.sb.unacked_dsn_ranges()
    }

    /// Invariant checks for tests: counters agree with the scoreboard.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sb.check_invariants()?;
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

/// GSO_MAX_SIZE (65 536) and GSO_MAX_SEGS (65 535), the defaults of `sk_gso_max_size`
/// and `sk_gso_max_segs` that `sk_setup_caps` copies from the device.
const GSO_MAX_SIZE: u64 = 65_536;
const GSO_MAX_SEGS: u64 = 65_535;
