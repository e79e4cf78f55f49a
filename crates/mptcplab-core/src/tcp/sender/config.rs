//! A subflow sender's configuration: which Linux behaviour each part follows (recovery,
//! loss detection, cwnd validation, buffer accounting, the base kernel).

use crate::units::SimTime;

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
