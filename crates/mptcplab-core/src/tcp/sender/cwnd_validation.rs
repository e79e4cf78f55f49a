//! Whether the sender used its cwnd (Linux `tcp_cwnd_validate`, `tcp_is_cwnd_limited`,
//! RFC 2861 decay), by base kernel: 3.x, 4.x, 5.18+ / 6.x; and 3.x's GSO size goal.

use super::*;

impl SubflowTx {
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
            CwndValidation::Linux5_18 => new_window || limited || (!self.is_cwnd_limited && self.sb.packets_out > self.max_packets_out),
            // 3.16-5.17: a new window, or more packets out than its maximum so far.
            _ => new_window || self.sb.packets_out > self.max_packets_out,
        };
        if update {
            self.max_packets_out = self.sb.packets_out;
            self.max_packets_seq = self.snd_nxt;
            self.is_cwnd_limited = limited;
        }
        // Linux 3.14 tcp_cwnd_validate: "Network is feed fully" when packets_out >= cwnd.
        let fed = match self.cfg.cwnd_validation {
            CwndValidation::Linux3_11 | CwndValidation::Linux3_14 => self.sb.packets_out >= self.st.cwnd,
            _ => self.cwnd_limited(),
        };
        if fed {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp = now;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(self.sb.packets_out);
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
    pub(super) fn cwnd_limited_on_ack(&self, prior_in_flight: u32) -> bool {
        match self.cfg.cwnd_validation {
            CwndValidation::Linux3_11 | CwndValidation::Linux3_14 => {
                let gso_segs = match (self.cfg.gso, self.cfg.cwnd_validation) {
                    (false, _) => None,
                    (true, CwndValidation::Linux3_11) => Some(gso_max_segs_3_11(self.cfg.mss)),
                    (true, _) => Some(xmit_size_goal_segs_3_14(self.st.cwnd, self.sb.packets_out, self.st.srtt, self.cfg.mss, self.snd_wnd)),
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
