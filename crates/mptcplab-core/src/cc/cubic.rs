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
    /// Stored in 32 bits, as Linux's jiffies `last_time` (runs far shorter than 49 days),
    /// so that the struct keeps the size it had before the exit counters.
    last_time_ms: u32,
    origin_point: u32,
    bic_k: u64,
    /// Minimum RTT in µs (Linux `delay_min`).
    delay_min_us: u32,
    epoch_start_ms: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u32,
    // HyStart state.
    found: bool,
    round_start_us: u64,
    last_ack_us: u64,
    end_seq: u32,
    curr_rtt_us: u32,
    sample_cnt: u32,
    pub fast_convergence: bool,
    pub hystart: bool,
    /// Linux >= 5.16 HyStart ("tcp_cubic: fix spurious Hystart ACK train detections for
    /// not-cwnd-limited flows", 4e1fddc98d25; the low-window test after the round reset:
    /// "tcp_cubic: fix incorrect HyStart round start detection", 2025, 6.14 and stable):
    /// a round restarts in `hystart_update` on every RTT sample once snd_una passes
    /// `end_seq`, whether or not the flow is cwnd-limited, and the ACK-train threshold
    /// gains `hystart_ack_delay`. Off: the 4.x form, whose round restarts only in
    /// `cubictcp_cong_avoid`, i.e. only while cwnd-limited.
    pub hystart_round_on_ack: bool,
    /// What Linux counts in TcpExt (TCPHystartTrainDetect/Cwnd, TCPHystartDelayDetect/Cwnd):
    /// kept across resets, so a run's exits can be compared with the kernel's netstat.
    pub exits: HystartExits,
}

/// HyStart exits from slow start and the cwnd summed at each, as Linux's `NET_INC_STATS`
/// / `NET_ADD_STATS` in `hystart_update` count them (both tests may fire on one sample).
/// Narrow, saturating fields: the struct lives in every CUBIC subflow's hot state, which
/// must not grow (measured: 16 more bytes cost 5 % of the 2 x 200 Mbit/s benchmark).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HystartExits {
    pub train: u16,
    pub delay: u16,
    pub train_cwnd: u32,
    pub delay_cwnd: u32,
}

impl HystartExits {
    /// One exit at `cwnd`, by ACK train or by delay (rare: kept out of the ACK path).
    #[cold]
    #[inline(never)]
    fn record(&mut self, train: bool, cwnd: u32) {
        let (n, sum) = if train { (&mut self.train, &mut self.train_cwnd) } else { (&mut self.delay, &mut self.delay_cwnd) };
        *n = n.saturating_add(1);
        *sum = sum.saturating_add(cwnd);
    }

    /// Add another socket's exits (TcpExt counters sum over a host's sockets).
    pub fn merge(&mut self, o: &HystartExits) {
        self.train = self.train.saturating_add(o.train);
        self.train_cwnd = self.train_cwnd.saturating_add(o.train_cwnd);
        self.delay = self.delay.saturating_add(o.delay);
        self.delay_cwnd = self.delay_cwnd.saturating_add(o.delay_cwnd);
    }
}

fn seq_after(a: u32, b: u32) -> bool { (b.wrapping_sub(a) as i32) < 0 }

/// Linux `hystart_ack_delay` (tcp_cubic.c, >= 5.8): room for one GSO packet sent and one
/// in the qdisc, `min(1 ms, 4 × sk_gso_max_size / sk_pacing_rate)` with the default
/// 64 KiB GSO size and the pacing rate `tcp_update_pacing_rate` keeps (200 % of cwnd /
/// SRTT in slow start, where HyStart runs). Below ~2 Gbit/s it is the 1 ms cap.
fn hystart_ack_delay_us(st: &CcState) -> u64 {
    let srtt_us = st.srtt.us();
    if srtt_us == 0 {
        return 0;
    }
    let rate = (st.mss as u64 * 2 * st.cwnd.max(st.in_flight) as u64 * 1_000_000 / srtt_us).max(1);
    (65_536u64 * 4 * 1_000_000 / rate).min(1_000)
}

impl Cubic {
    pub fn new() -> Self { Cubic { fast_convergence: true, hystart: true, ..Default::default() } }

    fn reset(&mut self) {
        let (fc, hy, r6, ex) = (self.fast_convergence, self.hystart, self.hystart_round_on_ack, self.exits);
        *self = Cubic { fast_convergence: fc, hystart: hy, hystart_round_on_ack: r6, exits: ex, ..Default::default() };
    }

    /// Where a round started now ends: `bictcp_hystart_reset` takes snd_nxt; the 4.x form
    /// here passes 0, so its first round ends at the first cwnd-limited ACK (kept as it was).
    fn round_end(&self, st: &CcState) -> u32 { if self.hystart_round_on_ack { st.snd_nxt } else { 0 } }

    fn hystart_reset(&mut self, now: SimTime, snd_nxt: u32) {
        self.round_start_us = now.us();
        self.last_ack_us = now.us();
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `bictcp_update`: sets `cnt`, the number of ACKed packets per +1 cwnd.
    fn update(&mut self, now: SimTime, cwnd: u32, acked: u32) {
        let jiffies = now.ns() / 1_000_000;
        self.ack_cnt += acked as u64;
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time_ms as u64) <= 1000 / 32 {
            return;
        }
        // The cubic function updates cnt at most once per jiffy.
        if !(self.epoch_start_ms.is_some() && jiffies == self.last_time_ms as u64) {
            self.last_cwnd = cwnd;
            self.last_time_ms = jiffies as u32;
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
            let t_ms = jiffies - epoch + self.delay_min_us as u64 / 1000;
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
        if self.hystart_round_on_ack {
            // Linux >= 5.16: the round restarts here, cwnd-limited or not; then the
            // low-window test ("fix incorrect HyStart round start detection", 2025).
            if seq_after(st.snd_una, self.end_seq) {
                self.hystart_reset(now, st.snd_nxt);
            }
            if st.cwnd < HYSTART_LOW_WINDOW {
                return;
            }
        }
        // ACK train: ACKs closely spaced for longer than min_rtt/2 (unpaced).
        if now_us.saturating_sub(self.last_ack_us) <= HYSTART_ACK_DELTA_US {
            self.last_ack_us = now_us;
            let mut threshold = self.delay_min_us as u64;
            if self.hystart_round_on_ack {
                threshold += hystart_ack_delay_us(st);
            }
            if !paced {
                threshold >>= 1;
            }
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                self.exits.record(true, st.cwnd);
                st.ssthresh = st.cwnd;
            }
        }
        // Delay increase: min of the first 8 RTT samples of the round.
        if self.curr_rtt_us as u64 > delay_us {
            self.curr_rtt_us = delay_us.min(u32::MAX as u64) as u32;
        }
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_us as u64 >> 3).clamp(4_000, 16_000);
            if self.curr_rtt_us as u64 > self.delay_min_us as u64 + thresh {
                self.found = true;
                self.exits.record(false, st.cwnd);
                st.ssthresh = st.cwnd;
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str { "cubic" }

    fn init(&mut self, now: SimTime, st: &mut CcState) {
        self.reset();
        if self.hystart {
            self.hystart_reset(now, self.round_end(st));
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
        if self.delay_min_us == 0 || self.delay_min_us as u64 > delay {
            self.delay_min_us = delay.min(u32::MAX as u64) as u32;
        }
        if !self.found && st.in_slow_start() && self.hystart && (self.hystart_round_on_ack || st.cwnd >= HYSTART_LOW_WINDOW) {
            self.hystart_update(now, st, delay, false);
        }
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, _c: &Coupling) {
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked;
        if st.in_slow_start() {
            if self.hystart && !self.hystart_round_on_ack && seq_after(ack.ack_seq, self.end_seq) {
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
    fn on_state(&mut self, st: &mut CcState, state: CaState, _c: &Coupling) {
        if state == CaState::Loss {
            self.reset();
            // (No clock here: the round's start time is refreshed by the next reset.)
            self.hystart_reset(SimTime::ZERO, self.round_end(st));
        }
    }

    fn on_event(&mut self, now: SimTime, _st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        if ev == CaEvent::TxStart {
            // Shift the epoch by the idle time so the cubic curve does not jump after idle.
            if let Some(e) = self.epoch_start_ms {
                let jiffies = now.ns() / 1_000_000;
                let delta = jiffies.saturating_sub(self.last_time_ms as u64);
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
    fn a_flow_that_is_not_cwnd_limited_starts_hystart_rounds_only_in_the_5_16_form() {
        // A receive-window-limited flow: its ACKs never reach cong_avoid's round reset.
        // RTT samples at 40 ms in the first round, then queueing raises them to 60 ms;
        // snd_una moves past each round's end_seq as data is acknowledged.
        let run = |round_on_ack: bool| {
            let mut c = Cubic::new();
            c.hystart_round_on_ack = round_on_ack;
            let mut st = CcState::new(32, 1448);
            st.snd_una = 1000;
            st.snd_nxt = 1000;
            c.init(SimTime::ZERO, &mut st);
            let mut now = SimTime::from_secs(2);
            for k in 0..60u32 {
                st.snd_una = 1000 + 1448 * (k + 1);
                st.snd_nxt = st.snd_una + 32 * 1448;
                let rtt = if k < 20 { 40 } else { 60 };
                c.on_rtt_sample(now, &mut st, Some(SimTime::from_ms(rtt)), 1);
                now += SimTime::from_ms(3);
            }
            (c.found, st.ssthresh, c.exits)
        };
        let (found, ssthresh, exits) = run(true);
        assert_eq!((found, ssthresh), (true, 32), "Linux >= 5.16: rounds restart on RTT samples");
        // Counted as Linux's TcpExt counts it: one delay exit at cwnd 32, no ACK train.
        assert_eq!(exits, HystartExits { train: 0, train_cwnd: 0, delay: 1, delay_cwnd: 32 });
        assert!(!run(false).0, "4.x: no round restart without a cwnd-limited ACK, so the round's minimum stays at 40 ms");
    }

    #[test]
    fn the_controller_keeps_its_size_in_the_subflows_hot_state() {
        // AnyCc is as large as its largest inline variant, CUBIC; every byte more is in
        // each subflow's sender (x86-64: 104 bytes, as before the HyStart exit counters).
        assert!(std::mem::size_of::<Cubic>() <= 104, "{}", std::mem::size_of::<Cubic>());
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
