//! BBR v1 (Cardwell et al., ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00)
//! as Linux 4.14 `net/ipv4/tcp_bbr.c` has it (the kernel of MPTCP v0.94, which seed 004
//! ran), and Coupled BBR (seed `004_811a4f59e195d45d.txt`, Sec. IV, Eq. 1–2, Algorithm 1).
//! Reference `cc-uncoupled.md` §2.6 and `cc-coupled.md` §3.5.
//!
//! Fixed point as Linux: gains in 1/256 (`BBR_UNIT`), bandwidth in packets per µs
//! scaled by 2^24 (`BW_UNIT`), times in µs, the min-RTT stamp in ms ("jiffies", HZ=1000).
//!
//! Departures from 4.14, each an option: the ACK-aggregation model (Linux ≥ 5.1) is
//! off by default; the pacing margin (Linux ≥ 4.20, 1 %) is 0 by default; the min-RTT
//! filter takes an equal sample as new (`<=`, 4.14) unless `min_rtt_strict` (Linux ≥ 5.10
//! and the 2020 stable fix: `<`). TSO is not modelled, but the cwnd keeps Linux's
//! quantization budget of 3·tso_segs_goal.

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling};
use crate::units::{Bandwidth, SimTime};

const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// 2/ln 2, Linux `bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1`.
const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
/// ln 2 / 2, Linux `bbr_drain_gain = BBR_UNIT * 1000 / 2885`.
const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u64 = BBR_UNIT * 2;
const CYCLE_LEN: u32 = 8;
const PACING_GAIN: [u64; CYCLE_LEN as usize] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const CYCLE_RAND: u64 = 7;
/// Max-filter window in rounds (`bbr_bw_rtts = CYCLE_LEN + 2`).
const BW_RTTS: u32 = CYCLE_LEN + 2;
const MIN_RTT_WIN_MS: u64 = 10_000;
const PROBE_RTT_MODE_MS: u64 = 200;
const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const TCP_INIT_CWND: u32 = 10;
/// Long-term (policer) model.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
/// 4 kbit/s in bytes per second.
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation (Linux ≥ 5.1).
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `bbr_min_tso_rate`, bit/s.
const MIN_TSO_RATE: u64 = 1_200_000;
/// GSO limit minus headers (`sk_gso_max_size - 1 - MAX_TCP_HEADER`).
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Kathleen Nichols' windowed running max with three samples (Linux `lib/win_minmax.c`).
#[derive(Clone, Copy, Debug, Default)]
struct MinMax {
    s: [(u32, u64); 3],
}

impl MinMax {
    fn get(&self) -> u64 { self.s[0].1 }

    fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
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

    fn subwin_update(&mut self, win: u32, val: (u32, u64)) -> u64 {
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

/// Coupled BBR's per-subflow share (seed 004 Eq. 2 and Eq. 1):
/// `β_i = BW_i · max_j BW_j / Σ_j BW_j²`, `α_i = (4β_i − 1)/3`.
pub fn coupled_beta_alpha(bw: &[f64], i: usize) -> (f64, f64) {
    let max = bw.iter().cloned().fold(0.0, f64::max);
    let sum_sq: f64 = bw.iter().map(|b| b * b).sum();
    if sum_sq <= 0.0 {
        return (1.0, 1.0);
    }
    let beta = bw[i] * max / sum_sq;
    (beta, (4.0 * beta - 1.0) / 3.0)
}

#[derive(Clone, Debug)]
pub struct Bbr {
    /// Coupled BBR (seed 004): the six steady PROBE_BW phases use α_i.
    pub coupled: bool,
    pub lt_bw_model: bool,
    pub ack_aggregation: bool,
    pub pacing_margin_percent: u64,
    pub min_rtt_strict: bool,
    /// Keep Linux's cwnd budget for TSO bursts (3·tso_segs_goal).
    pub tso_budget: bool,
    /// Coupled BBR: PROBE_BW phases last one smoothed RTT (the seed's "each RTT of a
    /// cycle") instead of one min_rtt. With min_rtt-long phases and a standing queue,
    /// the 1.25 probe covers only part of a round trip, so the delivery-rate samples it
    /// produces mix in the slow α phases before it; the max filter then decays round
    /// after round and the connection starves (measured: 0.30 of a single flow's share
    /// in the acceptance-3 scenario, against 0.9–1.0 with srtt-long phases).
    pub phase_srtt: bool,

    mode: Mode,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt_us: u32,
    min_rtt_stamp_ms: u64,
    probe_rtt_done_stamp_ms: Option<u64>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    restore_cwnd: bool,
    prev_ca_state: CaState,
    prior_cwnd: u32,
    idle_restart: bool,
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw: u64,
    full_bw_cnt: u32,
    cycle_idx: u32,
    cycle_stamp: SimTime,
    has_seen_rtt: bool,
    /// Current pacing rate, bytes per second (`sk_pacing_rate`).
    pacing_rate: u64,
    tso_segs_goal: u32,
    // Long-term model.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    // ACK aggregation.
    extra_acked: [u64; 2],
    extra_acked_win_idx: usize,
    extra_acked_win_rtts: u32,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
    // Coupled BBR.
    /// α_i in BBR_UNIT, None when α_i ≤ 0 (the 4-packets-per-RTT floor).
    alpha_gain: Option<u64>,
    beta: f64,
    rng: u64,
    /// The latest ACK's counters, for the RTO hook (Linux reads them from `tcp_sock`).
    /// (delivered, lost, delivered_at) at the latest ACK: what the RTO hook passes the
    /// policer detector.
    last_counts: Option<(u64, u64, SimTime)>,
}

impl Bbr {
    pub fn new(coupled: bool) -> Self {
        Bbr {
            coupled,
            lt_bw_model: true,
            ack_aggregation: false,
            pacing_margin_percent: 0,
            min_rtt_strict: false,
            tso_budget: true,
            phase_srtt: coupled,
            mode: Mode::Startup,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt_us: u32::MAX,
            min_rtt_stamp_ms: 0,
            probe_rtt_done_stamp_ms: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            restore_cwnd: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            has_seen_rtt: false,
            pacing_rate: 0,
            tso_segs_goal: 2,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            extra_acked: [0; 2],
            extra_acked_win_idx: 0,
            extra_acked_win_rtts: 0,
            ack_epoch_stamp: SimTime::ZERO,
            ack_epoch_acked: 0,
            alpha_gain: Some(BBR_UNIT),
            beta: 1.0,
            rng: 0,
            last_counts: None,
        }
    }

    pub fn mode_state(&self) -> Mode { self.mode }
    pub fn full_bw_reached(&self) -> bool { self.full_bw_cnt >= FULL_BW_CNT }
    pub fn cycle_idx(&self) -> u32 { self.cycle_idx }
    pub fn beta(&self) -> f64 { self.beta }
    pub fn min_rtt_us(&self) -> u32 { self.min_rtt_us }
    pub fn pacing_gain(&self) -> u64 { self.pacing_gain }
    pub fn lt_use_bw(&self) -> bool { self.lt_use_bw }

    fn max_bw(&self) -> u64 { self.bw.get() }
    /// `bbr_bw`: the long-term rate while a policer is suspected, else the max filter.
    pub fn bw(&self) -> u64 { if self.lt_use_bw { self.lt_bw } else { self.max_bw() } }

    /// Bandwidth in packets per second.
    pub fn bw_pps(&self) -> f64 { self.bw() as f64 * 1e6 / BW_UNIT as f64 }

    fn next_rand(&mut self) -> u64 { crate::rng::splitmix64(&mut self.rng) }

    /// `bbr_rate_bytes_per_sec`: bw (pkts/µs << 24) · mss · gain, in bytes per second.
    fn rate_bytes_per_sec(&self, mss: u32, bw: u64, gain: u64) -> u64 {
        let mut rate = bw as u128 * mss as u128;
        rate = rate * gain as u128 >> BBR_SCALE;
        rate = rate * 1_000_000 / 100 * (100 - self.pacing_margin_percent as u128);
        (rate >> BW_SCALE) as u64
    }

    fn init_pacing_rate_from_rtt(&mut self, st: &CcState) {
        let rtt_us = if st.srtt > SimTime::ZERO {
            self.has_seen_rtt = true;
            st.srtt.us().max(1)
        } else {
            1000
        };
        let bw = st.cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(st.mss, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: only lowered once the pipe has been filled.
    fn set_pacing_rate(&mut self, st: &CcState, bw: u64, gain: u64) {
        let rate = self.rate_bytes_per_sec(st.mss, bw, gain);
        if !self.has_seen_rtt && st.srtt > SimTime::ZERO {
            self.init_pacing_rate_from_rtt(st);
        }
        if self.full_bw_reached() || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Coupled BBR's α floor: one packet every min_rtt/4 (seed 004 Algorithm 1).
    fn set_floor_pacing_rate(&mut self, st: &CcState) {
        if self.min_rtt_us != u32::MAX && self.min_rtt_us > 0 {
            self.pacing_rate = 4 * st.mss as u64 * 1_000_000 / self.min_rtt_us as u64;
        }
    }

    /// `tcp_tso_autosize` as 4.14 BBR uses it (`bbr_set_tso_segs_goal`).
    fn set_tso_segs_goal(&mut self, st: &CcState) {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE >> 3 { 1 } else { 2 };
        let bytes = (self.pacing_rate >> 10).min(GSO_MAX_BYTES);
        let segs = (bytes / st.mss.max(1) as u64).max(min_segs);
        self.tso_segs_goal = segs.min(0x7f) as u32;
    }

    /// `bbr_bdp` plus the quantization budget (`bbr_target_cwnd` in 4.14).
    fn target_cwnd(&self, bw: u64, gain: u64) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let mut cwnd = ((w * gain as u128 >> BBR_SCALE) + BW_UNIT as u128 - 1) / BW_UNIT as u128;
        if self.tso_budget {
            cwnd += 3 * self.tso_segs_goal as u128;
        }
        let mut cwnd = (cwnd.min(u32::MAX as u128 / 2) as u32 + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn save_cwnd(&mut self, st: &CcState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = st.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(st.cwnd);
        }
    }

    fn reset_startup_mode(&mut self) { self.mode = Mode::Startup; }

    fn reset_probe_bw_mode(&mut self, ack: &AckSample) {
        self.mode = Mode::ProbeBw;
        // Start in a random phase other than the 0.75 one (`CYCLE_LEN - 1 - rand(7)`).
        let r = self.next_rand() % CYCLE_RAND;
        self.cycle_idx = CYCLE_LEN - 1 - r as u32;
        self.advance_cycle_phase(ack);
    }

    fn reset_mode(&mut self, ack: &AckSample) {
        if !self.full_bw_reached() {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(ack);
        }
    }

    fn advance_cycle_phase(&mut self, ack: &AckSample) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_stamp = ack.delivered_at;
    }

    /// The gain of the current PROBE_BW phase; Coupled BBR uses α_i in phases 2–7.
    fn cycle_gain(&self) -> Option<u64> {
        if self.coupled && self.cycle_idx >= 2 {
            self.alpha_gain
        } else {
            Some(PACING_GAIN[self.cycle_idx as usize])
        }
    }

    /// `bbr_is_next_cycle_phase` (4.14: inflight is `rs->prior_in_flight`).
    fn is_next_cycle_phase(&self, st: &CcState, ack: &AckSample) -> bool {
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

    fn reset_lt_bw_sampling_interval(&mut self, ack: &AckSample) {
        self.lt_last_stamp_ms = ack.delivered_at.ns() / 1_000_000;
        self.lt_last_delivered = ack.delivered_total;
        self.lt_last_lost = ack.lost_total;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, ack: &AckSample) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(ack);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, st: &CcState, bw: u64, ack: &AckSample) {
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
    fn lt_bw_sampling(&mut self, st: &CcState, ack: &AckSample) {
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
    fn update_bw(&mut self, st: &CcState, ack: &AckSample) {
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
    fn update_ack_aggregation(&mut self, st: &CcState, ack: &AckSample) {
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

    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.ack_aggregation || !self.full_bw_reached() {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let a = self.extra_acked[0].max(self.extra_acked[1]);
        ((a * EXTRA_ACKED_GAIN >> BBR_SCALE).min(max_aggr)) as u32
    }

    fn update_cycle_phase(&mut self, st: &CcState, ack: &AckSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(st, ack) {
            self.advance_cycle_phase(ack);
        }
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, ack: &AckSample) {
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

    fn check_drain(&mut self, st: &mut CcState, ack: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached() {
            self.mode = Mode::Drain;
            st.ssthresh = self.target_cwnd(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain && st.in_flight <= self.target_cwnd(self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode(ack);
        }
    }

    /// `bbr_update_min_rtt` with PROBE_RTT (4.14).
    fn update_min_rtt(&mut self, st: &mut CcState, ack: &AckSample) {
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

    /// Coupled BBR: β_i and α_i from every subflow's bandwidth estimate (seed 004 Eq. 1–2),
    /// recomputed on each ACK of this subflow after its filter update. Siblings that are
    /// not established or are in Loss state (RTO) are left out.
    fn update_coupling(&mut self, coupling: &Coupling) {
        if !self.coupled {
            return;
        }
        // Eq. 1–2 over S without building a list (this runs on every ACK): the same sums,
        // in the same order, as `coupled_beta_alpha`.
        let mine = self.bw() as f64;
        let (mut max, mut sum_sq) = (0.0f64, 0.0f64);
        let mut add = |b: f64| {
            max = max.max(b);
            sum_sq += b * b;
        };
        if coupling.subflows.is_empty() {
            add(mine);
        }
        for (j, s) in coupling.subflows.iter().enumerate() {
            if j == coupling.me {
                add(mine);
            } else if s.established && s.ca_state != CaState::Loss {
                // A sibling in Loss (after an RTO) delivers nothing and gets no ACKs,
                // so its filter would hold its last estimate for ever; it leaves the
                // set S until it recovers (the seed's S is the subflows in use).
                add(s.vars[0] as f64);
            }
        }
        let beta = if sum_sq <= 0.0 { 1.0 } else { mine * max / sum_sq };
        let alpha = if sum_sq <= 0.0 { 1.0 } else { (4.0 * beta - 1.0) / 3.0 };
        self.beta = beta;
        self.alpha_gain = if alpha > 0.0 { Some(((alpha * BBR_UNIT as f64).round() as u64).max(1)) } else { None };
    }

    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => {
                let g = if self.lt_use_bw { Some(BBR_UNIT) } else { self.cycle_gain() };
                (g.unwrap_or(0), CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, the saved cwnd back when it ends.
    fn recover_or_restore(&mut self, st: &CcState, ack: &AckSample) -> (bool, u32) {
        let state = st.ca_state;
        let mut cwnd = st.cwnd;
        let acked = ack.rs.acked_sacked;
        if ack.rs.losses > 0 {
            cwnd = cwnd.saturating_sub(ack.rs.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = ack.delivered_total;
            cwnd = st.in_flight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            self.restore_cwnd = true;
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.restore_cwnd {
            cwnd = cwnd.max(self.prior_cwnd);
            self.restore_cwnd = false;
        }
        if self.packet_conservation {
            return (true, cwnd.max(st.in_flight + acked));
        }
        (false, cwnd)
    }

    fn set_cwnd(&mut self, st: &mut CcState, ack: &AckSample, bw: u64) {
        let acked = ack.rs.acked_sacked;
        if acked == 0 {
            return;
        }
        let (done, mut cwnd) = self.recover_or_restore(st, ack);
        if !done {
            let target = self.target_cwnd(bw, self.cwnd_gain) + self.ack_aggregation_cwnd();
            if self.full_bw_reached() {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || ack.delivered_total < TCP_INIT_CWND as u64 {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        st.cwnd = cwnd.min(st.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str { if self.coupled { "coupled_bbr" } else { "bbr" } }

    fn init(&mut self, now: SimTime, st: &mut CcState) {
        let opts = (self.coupled, self.lt_bw_model, self.ack_aggregation, self.pacing_margin_percent, self.min_rtt_strict, self.tso_budget, self.phase_srtt);
        *self = Bbr::new(opts.0);
        (self.lt_bw_model, self.ack_aggregation, self.pacing_margin_percent, self.min_rtt_strict, self.tso_budget, self.phase_srtt) = (opts.1, opts.2, opts.3, opts.4, opts.5, opts.6);
        self.rng = st.seed;
        self.min_rtt_stamp_ms = now.ns() / 1_000_000;
        self.bw.reset(0, 0);
        self.init_pacing_rate_from_rtt(st);
        self.ack_epoch_stamp = now;
        self.lt_last_stamp_ms = now.ns() / 1_000_000;
        self.reset_startup_mode();
    }

    fn on_ack(&mut self, _st: &mut CcState, _ack: &AckSample, _c: &Coupling) {}

    fn has_cong_control(&self) -> bool { true }

    /// `bbr_main`.
    fn cong_control(&mut self, st: &mut CcState, ack: &AckSample, coupling: &Coupling) {
        self.update_bw(st, ack);
        self.update_coupling(coupling);
        self.update_ack_aggregation(st, ack);
        self.update_cycle_phase(st, ack);
        self.check_full_bw_reached(ack);
        self.check_drain(st, ack);
        self.update_min_rtt(st, ack);
        self.update_gains();
        let bw = self.bw();
        if self.mode == Mode::ProbeBw && self.pacing_gain == 0 {
            self.set_floor_pacing_rate(st);
        } else {
            self.set_pacing_rate(st, bw, self.pacing_gain);
        }
        self.set_tso_segs_goal(st);
        self.set_cwnd(st, ack, bw);
        self.last_counts = Some((ack.delivered_total, ack.lost_total, ack.delivered_at));
    }

    /// BBR does not use ssthresh; it saves cwnd for after recovery (4.14 returns
    /// `TCP_INFINITE_SSTHRESH`).
    fn ssthresh(&mut self, st: &CcState) -> u32 {
        self.save_cwnd(st);
        super::INFINITE_SSTHRESH
    }

    fn on_state(&mut self, _st: &mut CcState, state: CaState, _c: &Coupling) {
        if state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            // 4.14 feeds the policer detector a sample with one loss.
            if self.lt_bw_model {
                if let Some((delivered_total, lost_total, delivered_at)) = self.last_counts {
                    let rs = super::RateSample { losses: 1, ..Default::default() };
                    let a = AckSample { delivered_total, lost_total, delivered_at, rs, ..AckSample::simple(delivered_at, 0, 0, 0, None) };
                    let st = *_st;
                    self.lt_bw_sampling(&st, &a);
                }
            }
        }
    }

    fn on_event(&mut self, _now: SimTime, st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        // Restarting from idle (the engine sends TxStart only with nothing in flight):
        // keep the model, pace at 1.0·bw (4.14 `bbr_cwnd_event`).
        if ev == CaEvent::TxStart {
            self.idle_restart = true;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(st, bw, BBR_UNIT);
            }
        }
    }

    fn undo_cwnd(&mut self, st: &CcState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        st.cwnd
    }

    fn pacing_rate(&self, _st: &CcState) -> Option<Bandwidth> {
        if self.pacing_rate == 0 {
            return None;
        }
        Some(Bandwidth(self.pacing_rate as f64 * 8.0))
    }

    fn needs_coupling(&self) -> bool { self.coupled }

    fn export(&self) -> [u64; 2] { [self.bw(), 0] }

    fn mode(&self) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{RateSample, SiblingView};

    /// Drives one BBR controller with synthetic ACKs: each `ack` delivers `n` packets
    /// and carries a rate sample of `pps` packets per second over one RTT.
    struct Feed {
        b: Bbr,
        st: CcState,
        now: SimTime,
        delivered: u64,
        rtt: SimTime,
    }

    impl Feed {
        fn new(b: Bbr, rtt_ms: u64) -> Self {
            let mut st = CcState::new(10, 1448);
            st.seed = 7;
            let mut b = b;
            b.init(SimTime::ZERO, &mut st);
            Feed { b, st, now: SimTime::ZERO, delivered: 0, rtt: SimTime::from_ms(rtt_ms) }
        }

        /// One round: a single ACK that starts a new round with a sample of `pps`.
        fn round(&mut self, pps: f64, coupling: &Coupling) {
            self.now += self.rtt;
            let n = (pps * self.rtt.secs_f64()).round().max(1.0) as u64;
            let prior = self.delivered;
            self.delivered += n;
            let rs = RateSample {
                prior_delivered: prior,
                delivered: n,
                interval: Some(self.rtt),
                acked_sacked: n as u32,
                losses: 0,
                prior_in_flight: self.st.in_flight,
                rtt: Some(self.rtt),
                is_app_limited: false,
            };
            let ack = AckSample { delivered_total: self.delivered, delivered_at: self.now, rs, ..AckSample::simple(self.now, n as u32, 0, 0, Some(self.rtt)) };
            self.st.srtt = self.rtt;
            self.st.min_rtt = self.rtt;
            self.b.cong_control(&mut self.st, &ack, coupling);
        }

        fn view(&self) -> SiblingView { SiblingView { cwnd: self.st.cwnd, established: true, srtt: self.rtt, vars: self.b.export(), ..Default::default() } }
    }

    #[test]
    fn linux_gains_and_cycle() {
        // cc-uncoupled.md §2.6 test vectors.
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        assert!((HIGH_GAIN as f64 / 256.0 - 2.8867).abs() < 1e-4);
        assert_eq!(PACING_GAIN.iter().sum::<u64>(), 8 * BBR_UNIT);
    }

    #[test]
    fn windowed_max_filter_keeps_the_best_of_the_last_ten_rounds() {
        let mut m = MinMax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 1, 100), 100);
        assert_eq!(m.running_max(10, 2, 50), 100);
        assert_eq!(m.running_max(10, 5, 80), 100);
        // Round 12: the 100 sample (round 1) is older than the window: 80 takes over.
        assert_eq!(m.running_max(10, 12, 60), 80);
        assert_eq!(m.running_max(10, 30, 10), 10);
    }

    #[test]
    fn the_full_pipe_is_found_after_three_rounds_without_25_percent_growth() {
        // cc-uncoupled.md §2.6: max bw 10, 20, 40, 45, 46, 47 → full_bw 10, 20, 40; then
        // three rounds below 50 → DRAIN at the 6th round.
        let mut f = Feed::new(Bbr::new(false), 50);
        let modes: Vec<(Mode, u32)> = [10.0, 20.0, 40.0, 45.0, 46.0, 47.0]
            .iter()
            .map(|&k| {
                f.round(k * 1000.0, &Coupling::alone());
                (f.b.mode_state(), f.b.full_bw_cnt)
            })
            .collect();
        assert_eq!(modes[2], (Mode::Startup, 0));
        assert_eq!(modes[3], (Mode::Startup, 1));
        assert_eq!(modes[4], (Mode::Startup, 2));
        assert!(f.b.full_bw_reached());
        assert_ne!(modes[5].0, Mode::Startup, "left STARTUP at the 6th round");
    }

    #[test]
    fn target_cwnd_is_twice_the_bdp_plus_the_quantization_budget() {
        // bw 1000 pkt/s, min_rtt 50 ms → BDP 50 → cwnd_gain 2 → 100 (+ 3·tso_segs_goal).
        let mut b = Bbr::new(false);
        b.min_rtt_us = 50_000;
        let bw = 1000 * BW_UNIT / 1_000_000;
        b.tso_segs_goal = 2;
        b.tso_budget = false;
        assert_eq!(b.target_cwnd(bw, CWND_GAIN), 100);
        assert_eq!(b.target_cwnd(bw, BBR_UNIT), 50);
        b.tso_budget = true;
        assert_eq!(b.target_cwnd(bw, CWND_GAIN), 106);
        b.min_rtt_us = u32::MAX;
        assert_eq!(b.target_cwnd(bw, CWND_GAIN), TCP_INIT_CWND);
    }

    #[test]
    fn probe_bw_never_starts_in_the_draining_phase() {
        let mut starts = [0u32; 8];
        for seed in 0..400u64 {
            let mut b = Bbr::new(false);
            b.rng = seed;
            let ack = AckSample::simple(SimTime::ZERO, 1, 0, 0, None);
            b.reset_probe_bw_mode(&ack);
            starts[b.cycle_idx as usize] += 1;
        }
        assert_eq!(starts[1], 0, "{starts:?}");
        for (i, &n) in starts.iter().enumerate() {
            if i != 1 {
                assert!(n > 20, "phase {i} never chosen: {starts:?}");
            }
        }
    }

    #[test]
    fn coupled_beta_and_alpha_match_the_seed_vectors() {
        // cc-coupled.md §3.5.
        let (b, a) = coupled_beta_alpha(&[10.0, 10.0], 0);
        assert!((b - 0.5).abs() < 1e-12 && (a - 1.0 / 3.0).abs() < 1e-12);
        let bw = [10.0, 8.0, 5.0];
        let want = [(0.5291, 0.3721), (0.4233, 0.2310), (0.2646, 0.0194)];
        let mut sum = 0.0;
        for i in 0..3 {
            let (b, a) = coupled_beta_alpha(&bw, i);
            assert!((b - want[i].0).abs() < 1e-4 && (a - want[i].1).abs() < 1e-4, "{i}: {b} {a}");
            sum += b * bw[i];
        }
        assert!((sum - 10.0).abs() < 1e-9);
    }

    #[test]
    fn coupled_bbr_computes_beta_through_the_trait_from_driven_subflows() {
        // Two subflows whose filters hold 10 and 2 packets/ms: β ≈ (0.9615, 0.1923),
        // α_2 < 0 so subflow 2's steady phases pace at 4 packets per min_rtt.
        let mut f = [Feed::new(Bbr::new(true), 50), Feed::new(Bbr::new(true), 50)];
        for _ in 0..12 {
            for i in 0..2 {
                let views = [f[0].view(), f[1].view()];
                let c = Coupling { me: i, subflows: &views, meta: None };
                let pps = if i == 0 { 10_000.0 } else { 2_000.0 };
                f[i].round(pps, &c);
            }
        }
        let (b0, b1) = (f[0].b.beta(), f[1].b.beta());
        assert!((b0 - 0.9615).abs() < 2e-3 && (b1 - 0.1923).abs() < 2e-3, "{b0} {b1}");
        let bw = [f[0].b.bw_pps(), f[1].b.bw_pps()];
        let agg = b0 * bw[0] + b1 * bw[1];
        assert!((agg - bw[0].max(bw[1])).abs() / agg < 1e-9, "Σβ·BW = {agg}, max BW = {}", bw[0]);
        assert!(f[1].b.alpha_gain.is_none());
        assert!(f[0].b.alpha_gain.is_some());
        // In a steady phase subflow 2 paces at 4 packets per 50 ms.
        f[1].b.mode = Mode::ProbeBw;
        f[1].b.cycle_idx = 4;
        f[1].b.update_gains();
        assert_eq!(f[1].b.pacing_gain, 0);
        let st = f[1].st;
        f[1].b.set_floor_pacing_rate(&st);
        assert_eq!(f[1].b.pacing_rate, 4 * 1448 * 20);
    }

    #[test]
    fn a_lone_coupled_bbr_subflow_is_plain_bbr() {
        let mut f = Feed::new(Bbr::new(true), 50);
        let views = [f.view()];
        f.round(5000.0, &Coupling { me: 0, subflows: &views, meta: None });
        assert_eq!(f.b.beta(), 1.0);
        assert_eq!(f.b.alpha_gain, Some(BBR_UNIT));
    }

    #[test]
    fn a_sibling_in_loss_state_leaves_the_coupled_set() {
        // Subflow 2 timed out (RTO, Loss state): its stale estimate must not keep β_1 at ½.
        let mut f = Feed::new(Bbr::new(true), 50);
        let mut dead = SiblingView { established: true, ..Default::default() };
        for _ in 0..12 {
            let views = [f.view(), dead];
            f.round(10_000.0, &Coupling { me: 0, subflows: &views, meta: None });
            dead.vars[0] = f.b.bw();
        }
        assert!((f.b.beta() - 0.5).abs() < 1e-9, "equal siblings: {}", f.b.beta());
        dead.ca_state = CaState::Loss;
        let views = [f.view(), dead];
        f.round(10_000.0, &Coupling { me: 0, subflows: &views, meta: None });
        assert_eq!(f.b.beta(), 1.0);
    }
}
