//! CUBIC with HyStart, as Linux `net/ipv4/tcp_cubic.c` (RFC 9438; Ha, Rhee, Xu 2008).
//! Reference `cc-uncoupled.md` §2.2. Integer arithmetic as Linux: time in 1/1024 s
//! (`BICTCP_HZ` = 10), `beta` = 717/1024, `C` = 410/1024, jiffies = ms (HZ = 1000).
//! Deviation: Linux's `cubic_root` is a table plus one Newton step (≈0.2 % error); we use
//! the exact f64 cube root, floored.

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling};
use crate::units::SimTime;

const BICTCP_BETA_SCALE: u64 = 1024;
const BETA: u64 = 717; // 0.7 * 1024
const BIC_SCALE: u64 = 41;
/// cube_rtt_scale = bic_scale * 10 = 410.
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// cube_factor = 2^(10 + 3*BICTCP_HZ) / cube_rtt_scale.
const CUBE_FACTOR: u64 = (1u64 << 40) / CUBE_RTT_SCALE;
/// beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta) = 15 (TCP-friendliness slope).
const BETA_SCALE: u64 = 8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA);
const HYSTART_LOW_WINDOW: u32 = 16;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_ACK_DELTA_US: u64 = 2_000;

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time_ms: u64,
    origin_point: u32,
    bic_k: u64,
    /// Minimum RTT in µs (Linux `delay_min`).
    delay_min_us: u64,
    epoch_start_ms: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u32,
    // HyStart state.
    found: bool,
    round_start_us: u64,
    last_ack_us: u64,
    end_seq: u32,
    curr_rtt_us: u64,
    sample_cnt: u32,
    pub fast_convergence: bool,
    pub hystart: bool,
}

fn seq_after(a: u32, b: u32) -> bool { (b.wrapping_sub(a) as i32) < 0 }

impl Cubic {
    pub fn new() -> Self { Cubic { fast_convergence: true, hystart: true, ..Default::default() } }

    fn reset(&mut self) {
        let (fc, hy) = (self.fast_convergence, self.hystart);
        *self = Cubic { fast_convergence: fc, hystart: hy, ..Default::default() };
    }

    fn hystart_reset(&mut self, now: SimTime, snd_nxt: u32) {
        self.round_start_us = now.us();
        self.last_ack_us = now.us();
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `bictcp_update`: sets `cnt`, the number of ACKed packets per +1 cwnd.
    fn update(&mut self, now: SimTime, cwnd: u32, acked: u32) {
        let jiffies = now.ns() / 1_000_000;
        self.ack_cnt += acked as u64;
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time_ms) <= 1000 / 32 {
            return;
        }
        // The cubic function updates cnt at most once per jiffy.
        if !(self.epoch_start_ms.is_some() && jiffies == self.last_time_ms) {
            self.last_cwnd = cwnd;
            self.last_time_ms = jiffies;
            let epoch = match self.epoch_start_ms {
                Some(e) => e,
                None => {
                    self.ack_cnt = acked as u64;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.origin_point = cwnd;
                    } else {
                        // K = cbrt(cube_factor * (W_max - cwnd)), in 1/1024 s.
                        self.bic_k = ((CUBE_FACTOR as f64) * (self.last_max_cwnd - cwnd) as f64).cbrt() as u64;
                        self.origin_point = self.last_max_cwnd;
                    }
                    self.epoch_start_ms = Some(jiffies);
                    jiffies
                }
            };
            // Evaluate W one min-RTT ahead: t = now - epoch + delay_min, in 1/1024 s.
            let t_ms = jiffies - epoch + self.delay_min_us / 1000;
            let t = (t_ms << 10) / 1000;
            let offs = t.abs_diff(self.bic_k);
            // delta = C * offs^3, in packets: (410 * offs^3) >> 40.
            let delta = ((CUBE_RTT_SCALE as u128 * (offs as u128).pow(3)) >> 40) as u64;
            let target = if t < self.bic_k {
                (self.origin_point as u64).saturating_sub(delta)
            } else {
                self.origin_point as u64 + delta
            };
            self.cnt = if target > cwnd as u64 { (cwnd as u64 / (target - cwnd as u64)) as u32 } else { 100 * cwnd };
            // Initial growth at most 5 % per RTT before the first loss.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness (RFC 9438 §4.3, Linux form): a Reno estimate growing 1 per 15/8 cwnd ACKs.
        let delta = (cwnd as u64 * BETA_SCALE) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // cnt >= 2: at most 1.5x growth per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// Linux `hystart_update` (modern form, delay in µs).
    fn hystart_update(&mut self, now: SimTime, st: &mut CcState, delay_us: u64, paced: bool) {
        let now_us = now.us();
        // ACK train: ACKs closely spaced for longer than min_rtt/2 (unpaced).
        if now_us.saturating_sub(self.last_ack_us) <= HYSTART_ACK_DELTA_US {
            self.last_ack_us = now_us;
            let mut threshold = self.delay_min_us;
            if !paced {
                threshold >>= 1;
            }
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                st.ssthresh = st.cwnd;
            }
        }
        // Delay increase: min of the first 8 RTT samples of the round.
        if self.curr_rtt_us > delay_us {
            self.curr_rtt_us = delay_us;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_us >> 3).clamp(4_000, 16_000);
            if self.curr_rtt_us > self.delay_min_us + thresh {
                self.found = true;
                st.ssthresh = st.cwnd;
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str { "cubic" }

    fn init(&mut self, now: SimTime, _st: &mut CcState) {
        self.reset();
        if self.hystart {
            self.hystart_reset(now, 0);
        }
    }

    /// Linux `cubictcp_acked`.
    fn on_rtt_sample(&mut self, now: SimTime, st: &mut CcState, rtt: Option<SimTime>, _acked: u32) {
        let Some(rtt) = rtt else { return };
        // Discard delay samples right after a loss (epoch younger than 1 s).
        if let Some(e) = self.epoch_start_ms {
            if now.ns() / 1_000_000 < e + 1000 {
                return;
            }
        }
        let delay = rtt.us().max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if !self.found && st.in_slow_start() && self.hystart && st.cwnd >= HYSTART_LOW_WINDOW {
            self.hystart_update(now, st, delay, false);
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, _c: &Coupling) {
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked;
        if st.in_slow_start() {
            if self.hystart && seq_after(ack.ack_seq, self.end_seq) {
                self.hystart_reset(ack.now, ack.snd_nxt);
            }
            acked = st.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(ack.now, st.cwnd, acked);
        let cnt = self.cnt;
        st.cong_avoid_ai(cnt, acked);
    }

    /// Linux `cubictcp_recalc_ssthresh`: β = 0.7, fast convergence.
    fn ssthresh(&mut self, st: &CcState) -> u32 {
        self.epoch_start_ms = None;
        if st.cwnd < self.last_max_cwnd && self.fast_convergence {
            self.last_max_cwnd = ((st.cwnd as u64 * (BICTCP_BETA_SCALE + BETA)) / (2 * BICTCP_BETA_SCALE)) as u32;
        } else {
            self.last_max_cwnd = st.cwnd;
        }
        (((st.cwnd as u64 * BETA) / BICTCP_BETA_SCALE) as u32).max(2)
    }

    /// Linux `cubictcp_state`: an RTO resets the cubic epoch and HyStart.
    fn on_state(&mut self, _st: &mut CcState, state: CaState, _c: &Coupling) {
        if state == CaState::Loss {
            self.reset();
            self.hystart_reset(SimTime::ZERO, 0);
        }
    }

    fn on_event(&mut self, now: SimTime, _st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        if ev == CaEvent::TxStart {
            // Shift the epoch by the idle time so the cubic curve does not jump after idle.
            if let Some(e) = self.epoch_start_ms {
                let jiffies = now.ns() / 1_000_000;
                let delta = jiffies.saturating_sub(self.last_time_ms);
                let shifted = e + delta;
                self.epoch_start_ms = Some(shifted.min(jiffies));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_driver::Driver;

    #[test]
    fn cubic_constants_match_linux() {
        assert_eq!(BETA_SCALE, 15);
        assert_eq!(CUBE_RTT_SCALE, 410);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
    }

    #[test]
    fn cubic_ssthresh_is_seven_tenths_with_fast_convergence() {
        let mut c = Cubic::new();
        let mut st = CcState::new(100, 1448);
        assert_eq!(c.ssthresh(&st), 70);
        assert_eq!(c.last_max_cwnd, 100);
        st.cwnd = 80;
        c.ssthresh(&st);
        assert_eq!(c.last_max_cwnd, 68); // 80 * 1741 / 2048
        st.cwnd = 2;
        assert_eq!(c.ssthresh(&st), 2);
    }

    #[test]
    fn cubic_follows_the_cubic_curve_after_a_loss() {
        // W_max = 100, beta 0.7 -> cwnd 70; K = cbrt(100*0.3/0.4) = 4.2172 s (RFC 9438 §4.2).
        // W(t) = 100 + 0.4 (t - K)^3: W(1) = 86.7, W(2) = 95.6, W(6) = 102.3. Linux evaluates
        // one min RTT ahead and truncates the offset to whole packets, so it runs a little early.
        let rtt = SimTime::from_ms(100);
        let mut d = Driver::new(Cubic::new(), rtt);
        d.st.cwnd = 100;
        d.st.ssthresh = 100;
        d.lose();
        assert_eq!(d.st.cwnd, 70);
        let start = d.now;
        let at = |d: &mut Driver<Cubic>, t: f64| {
            while (d.now - start).secs_f64() < t {
                d.round();
            }
            d.st.cwnd
        };
        let w1 = at(&mut d, 1.0);
        assert!((84..=91).contains(&w1), "W(1) = {w1}");
        let w2 = at(&mut d, 2.0);
        assert!((94..=98).contains(&w2), "W(2) = {w2}");
        let wk = at(&mut d, 4.7);
        assert!((99..=101).contains(&wk), "plateau near W_max: {wk}");
        let w6 = at(&mut d, 6.0);
        assert!((101..=104).contains(&w6), "W(6) = {w6}");
        let w8 = at(&mut d, 8.0);
        assert!(w8 >= 110, "convex probing beyond W_max: {w8}");
    }

    #[test]
    fn cubic_growth_after_loss_is_at_most_half_a_window_per_rtt() {
        let mut d = Driver::new(Cubic::new(), SimTime::from_ms(20));
        d.st.cwnd = 60;
        d.lose();
        for _ in 0..100 {
            let before = d.st.cwnd;
            d.round();
            assert!(d.st.cwnd <= before + before / 2 + 1);
        }
    }

    #[test]
    fn hystart_delay_threshold_is_clamped_between_4_and_16_ms() {
        for (dmin, want) in [(20_000u64, 4_000u64), (100_000, 12_500), (200_000, 16_000)] {
            assert_eq!((dmin >> 3).clamp(4_000, 16_000), want);
        }
    }

    #[test]
    fn hystart_leaves_slow_start_when_rtt_rises() {
        let mut c = Cubic::new();
        let mut st = CcState::new(32, 1448);
        c.init(SimTime::ZERO, &mut st);
        let base = SimTime::from_ms(40);
        // Round 1 establishes delay_min, samples spaced 3 ms (no ACK train).
        let mut now = SimTime::from_secs(2);
        for _ in 0..10 {
            c.on_rtt_sample(now, &mut st, Some(base), 1);
            now += SimTime::from_ms(3);
        }
        assert!(!c.found);
        c.hystart_reset(now, 0); // next round
        for _ in 0..10 {
            c.on_rtt_sample(now, &mut st, Some(base + SimTime::from_ms(10)), 1);
            now += SimTime::from_ms(3);
        }
        assert!(c.found);
        assert_eq!(st.ssthresh, 32);
    }
}
