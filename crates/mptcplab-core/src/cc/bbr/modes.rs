//! BBR's state machine: STARTUP, DRAIN, PROBE_BW's gain cycle and PROBE_RTT, with the
//! full-pipe test and the min-RTT filter whose expiry enters PROBE_RTT (Linux 4.14
//! `tcp_bbr.c`: `bbr_update_cycle_phase`, `bbr_check_full_bw_reached`, `bbr_check_drain`,
//! `bbr_update_min_rtt`).

use super::*;

impl Bbr {
    pub(super) fn reset_startup_mode(&mut self) { self.mode = Mode::Startup; }

    pub(super) fn reset_probe_bw_mode(&mut self, ack: &AckSample) {
        self.mode = Mode::ProbeBw;
        // Start in a random phase other than the 0.75 one (`CYCLE_LEN - 1 - rand(7)`).
        let r = self.next_rand() % CYCLE_RAND;
        self.cycle_idx = CYCLE_LEN - 1 - r as u32;
        self.advance_cycle_phase(ack);
    }

    pub(super) fn reset_mode(&mut self, ack: &AckSample) {
        if !self.full_bw_reached() {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(ack);
        }
    }

    pub(super) fn advance_cycle_phase(&mut self, ack: &AckSample) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_stamp = ack.delivered_at;
    }

    /// The gain of the current PROBE_BW phase; Coupled BBR uses α_i in phases 2–7.
    pub(super) fn cycle_gain(&self) -> Option<u64> {
        if self.coupled && self.cycle_idx >= 2 {
            self.alpha_gain
        } else {
            Some(PACING_GAIN[self.cycle_idx as usize])
        }
    }

    /// `bbr_is_next_cycle_phase` (4.14: inflight is `rs->prior_in_flight`).
    pub(super) fn is_next_cycle_phase(&self, st: &CcState, ack: &AckSample) -> bool {
        let len = if self.coupled && self.phase_srtt { st.srtt.us().max(self.min_rtt_us as u64) } else { self.min_rtt_us as u64 };
        let full_length = ack.delivered_at.saturating_sub(self.cycle_stamp).us() > len;
        // Coupled BBR's α phases last one round trip each, as the seed's cycle is
        // "8 RTTs" (Sec. II and IV); Linux's early exit of a < 1 phase would shorten them.
        if self.coupled && self.cycle_idx >= 2 {
            return full_length;
        }
        let gain = PACING_GAIN[self.cycle_idx as usize];
        if self.lt_use_bw || gain == BBR_UNIT {
            return full_length;
        }
        let inflight = ack.rs.prior_in_flight;
        let bw = self.max_bw();
        if gain > BBR_UNIT {
            return full_length && (ack.rs.losses > 0 || inflight >= self.target_cwnd(bw, gain));
        }
        full_length || inflight <= self.target_cwnd(bw, BBR_UNIT)
    }

    pub(super) fn update_cycle_phase(&mut self, st: &CcState, ack: &AckSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(st, ack) {
            self.advance_cycle_phase(ack);
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25 % growth.
    pub(super) fn check_full_bw_reached(&mut self, ack: &AckSample) {
        if self.full_bw_reached() || !self.round_start || ack.rs.is_app_limited {
            return;
        }
        let thresh = self.full_bw * FULL_BW_THRESH >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
    }

    pub(super) fn check_drain(&mut self, st: &mut CcState, ack: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached() {
            self.mode = Mode::Drain;
            st.ssthresh = self.target_cwnd(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain && st.in_flight <= self.target_cwnd(self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode(ack);
        }
    }

    /// `bbr_update_min_rtt` with PROBE_RTT (4.14).
    pub(super) fn update_min_rtt(&mut self, st: &mut CcState, ack: &AckSample) {
        let now_ms = ack.now.ns() / 1_000_000;
        let expired = now_ms > self.min_rtt_stamp_ms + MIN_RTT_WIN_MS;
        if let Some(rtt) = ack.rs.rtt {
            let us = rtt.us().min(u32::MAX as u64 - 1) as u32;
            let better = if self.min_rtt_strict { us < self.min_rtt_us } else { us <= self.min_rtt_us };
            if better || expired {
                self.min_rtt_us = us;
                self.min_rtt_stamp_ms = now_ms;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st);
            self.probe_rtt_done_stamp_ms = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples in PROBE_RTT do not reflect the bottleneck: mark them app-limited.
            st.request_app_limited = true;
            match self.probe_rtt_done_stamp_ms {
                None if st.in_flight <= CWND_MIN_TARGET => {
                    self.probe_rtt_done_stamp_ms = Some(now_ms + PROBE_RTT_MODE_MS);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = ack.delivered_total;
                }
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now_ms > done {
                        self.min_rtt_stamp_ms = now_ms;
                        self.restore_cwnd = true;
                        self.reset_mode(ack);
                    }
                }
                None => {}
            }
        }
        if ack.rs.delivered > 0 {
            self.idle_restart = false;
        }
    }
}
