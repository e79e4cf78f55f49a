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

// The parts: the path model (delivery-rate max filter, long-term sampling, ACK
// aggregation), the mode machine, Coupled BBR's shares. This file keeps the state, the
// pacing rate and cwnd they set, and the `CongestionControl` hooks.
mod coupled;
mod model;
mod modes;
#[cfg(test)]
mod tests;

pub use coupled::coupled_beta_alpha;
use model::MinMax;

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
