//! BBR's model of the path: the windowed max filter of delivery rate (`lib/win_minmax.c`),
//! the long-term bandwidth sampling that detects a policer (`bbr_lt_bw_sampling`), and
//! the ACK-aggregation estimate (Linux >= 5.1, off by default). The min-RTT filter is
//! updated with the PROBE_RTT mode it drives (`modes.rs`).

use super::*;

/// Kathleen Nichols' windowed running max with three samples (Linux `lib/win_minmax.c`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MinMax {
    s: [(u32, u64); 3],
}

impl MinMax {
    pub(super) fn get(&self) -> u64 { self.s[0].1 }

    pub(super) fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    pub(super) fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    pub(super) fn subwin_update(&mut self, win: u32, val: (u32, u64)) -> u64 {
        let dt = val.0.wrapping_sub(self.s[0].0);
        if dt > win {
            // The best sample aged out: promote the others, and again if needed.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

impl Bbr {
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, ack: &AckSample) {
        self.lt_last_stamp_ms = ack.delivered_at.ns() / 1_000_000;
        self.lt_last_delivered = ack.delivered_total;
        self.lt_last_lost = ack.lost_total;
        self.lt_rtt_cnt = 0;
    }

    pub(super) fn reset_lt_bw_sampling(&mut self, ack: &AckSample) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(ack);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    pub(super) fn lt_bw_interval_done(&mut self, st: &CcState, bw: u64, ack: &AckSample) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw || self.rate_bytes_per_sec(st.mss, diff, BBR_UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(ack);
    }

    /// `bbr_lt_bw_sampling`: look for a token-bucket policer (high loss, flat rate).
    pub(super) fn lt_bw_sampling(&mut self, st: &CcState, ack: &AckSample) {
        let rs = &ack.rs;
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(ack);
                    self.reset_probe_bw_mode(ack);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(ack);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(ack);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(ack);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = ack.lost_total - self.lt_last_lost;
        let delivered = ack.delivered_total - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (ack.delivered_at.ns() / 1_000_000) as i64 - self.lt_last_stamp_ms as i64;
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms as u64 * 1000);
        self.lt_bw_interval_done(st, bw, ack);
    }

    /// `bbr_update_bw`: round counting and the max filter.
    pub(super) fn update_bw(&mut self, st: &CcState, ack: &AckSample) {
        self.round_start = false;
        let rs = &ack.rs;
        let Some(iv) = rs.interval else { return };
        let iv_us = iv.us();
        if iv_us == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = ack.delivered_total;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.lt_bw_model {
            self.lt_bw_sampling(st, ack);
        }
        let bw = rs.delivered * BW_UNIT / iv_us;
        // App-limited samples only count when they raise the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation` (Linux ≥ 5.1): extra data ACKed beyond bw·interval.
    pub(super) fn update_ack_aggregation(&mut self, st: &CcState, ack: &AckSample) {
        if !self.ack_aggregation || ack.rs.acked_sacked == 0 || ack.rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = ack.now.saturating_sub(self.ack_epoch_stamp).us();
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + ack.rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = ack.now;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + ack.rs.acked_sacked as u64).min(0xfffff);
        let mut extra = self.ack_epoch_acked - expected;
        extra = extra.min(st.cwnd as u64);
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.ack_aggregation || !self.full_bw_reached() {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let a = self.extra_acked[0].max(self.extra_acked[1]);
        ((a * EXTRA_ACKED_GAIN >> BBR_SCALE).min(max_aggr)) as u32
    }
}
