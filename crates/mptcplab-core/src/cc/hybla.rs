//! TCP Hybla (Caini & Firrincieli, Int. J. Satellite Commun. 2004), as Linux
//! `net/ipv4/tcp_hybla.c`. Reference `cc-uncoupled.md` §2.3.
//!
//! Growth is normalised to a reference RTT: with `ρ = RTT/RTT0`, slow start adds
//! `2^ρ − 1` and congestion avoidance `ρ²/cwnd` per ACK, so the rate grows as fast as
//! Reno's at RTT0. Linux's integer arithmetic is kept bit for bit: ρ in 1/8 steps,
//! increments in 1/128 packet, a table for `2^(k/8)`.
//!
//! Linux keeps `srtt_us` = 8 × SRTT in µs; `CcState::srtt` is that value / 8, so
//! `8 · srtt.us()` drops its three fractional bits. ρ is still exact, because the
//! divisor `rtt0 · 1000` is a multiple of 8: ⌊x / 8k⌋ = ⌊⌊x/8⌋ / k⌋.

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Coupling, Reno};
use crate::units::SimTime;

/// `hybla_fraction`: ⌊128 · 2^(k/8)⌋ for k = 0..7 (tcp_hybla.c).
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// `hybla_init`: `snd_cwnd_clamp = 65535`.
const HYBLA_CWND_CLAMP: u32 = 65535;

#[derive(Clone, Debug)]
pub struct Hybla {
    /// Linux module parameter `rtt0` (ms).
    pub rtt0_ms: u32,
    /// `hybla_en`: Hybla growth only in CA state Open, Reno otherwise.
    enabled: bool,
    /// Sub-packet growth in 1/128 packet (`snd_cwnd_cents`).
    cwnd_cents: u32,
    /// ρ, integer part.
    rho: u32,
    /// ρ · 8 (`rho_3ls`).
    rho_3ls: u32,
    /// ρ² · 128 (`rho2_7ls`).
    rho2_7ls: u32,
    /// Smallest `srtt_us` (8 × SRTT in µs) seen (`minrtt_us`); None until an RTT exists.
    min_srtt_x8_us: Option<u32>,
    /// `init` ran before the handshake measured an RTT (see `CongestionControl::init`).
    init_pending: bool,
}

impl Hybla {
    pub fn new(rtt0_ms: u32) -> Self {
        Hybla {
            rtt0_ms: rtt0_ms.max(1),
            enabled: true,
            cwnd_cents: 0,
            rho: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            min_srtt_x8_us: None,
            init_pending: false,
        }
    }

    /// Linux `tp->srtt_us`: 8 × SRTT in µs (u32).
    fn srtt_x8_us(st: &CcState) -> u32 { st.srtt.us().saturating_mul(8).min(u32::MAX as u64) as u32 }

    /// `hybla_recalc_param`.
    fn recalc(&mut self, st: &CcState) {
        // rho_3ls = max(srtt_us / (rtt0 · 1000), 8): ρ in 1/8 units, floored at ρ = 1.
        let rtt0_us = self.rtt0_ms.saturating_mul(1000);
        self.rho_3ls = (Self::srtt_x8_us(st) / rtt0_us).max(8);
        self.rho = self.rho_3ls >> 3;
        // rho2_7ls = rho_3ls² << 1 = 128 ρ², in u32 as Linux.
        self.rho2_7ls = self.rho_3ls.wrapping_mul(self.rho_3ls) << 1;
    }

    /// The body of `hybla_init` once an SRTT exists: ρ from it, `minrtt = srtt`, cwnd = ρ.
    fn init_from_srtt(&mut self, st: &mut CcState) {
        self.recalc(st);
        self.min_srtt_x8_us = Some(Self::srtt_x8_us(st));
        // Linux sets cwnd to the integer part of ρ (so 1 below 2·RTT0).
        st.cwnd = self.rho.min(st.cwnd_clamp);
        self.init_pending = false;
    }
}

impl Default for Hybla {
    fn default() -> Self { Hybla::new(25) }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str { "hybla" }

    /// `hybla_init`. Linux runs it after the handshake (`tcp_init_transfer`), with an
    /// SRTT from the SYN exchange; the engine calls it when the subflow is created. Without
    /// an SRTT Linux's code would fix ρ = 1 and minrtt = 0 for good, so we finish the init
    /// at the first transmission (`TxStart`), where Linux would have run it.
    fn init(&mut self, _now: SimTime, st: &mut CcState) {
        *self = Hybla::new(self.rtt0_ms);
        st.cwnd_clamp = HYBLA_CWND_CLAMP;
        if st.srtt == SimTime::ZERO {
            self.init_pending = true;
        } else {
            self.init_from_srtt(st);
        }
    }

    /// `hybla_cong_avoid`: per ACK, ignoring `acked` as Linux does.
    fn on_ack(&mut self, st: &mut CcState, ack: &AckSample, c: &Coupling) {
        // ρ follows the minimum SRTT: recompute only when SRTT falls below it.
        if st.srtt > SimTime::ZERO {
            let srtt = Self::srtt_x8_us(st);
            if self.min_srtt_x8_us.is_none_or(|m| srtt < m) {
                self.recalc(st);
                self.min_srtt_x8_us = Some(srtt);
                // A first SRTT seen here (no TxStart since init) only sets ρ: cwnd is in use.
                self.init_pending = false;
            }
        }
        if !ack.cwnd_limited {
            return;
        }
        if !self.enabled {
            Reno.on_ack(st, ack, c);
            return;
        }
        if self.rho == 0 {
            self.recalc(st);
        }
        let rho_frac = self.rho_3ls - (self.rho << 3);
        let slow_start = st.in_slow_start();
        // Increments are in 1/128 packet.
        let increment = if slow_start {
            // SS: INC = 2^ρ − 1 = 2^int(ρ) · 2^frac(ρ) − 1, int(ρ) capped at 16 (tcp_hybla.c).
            (1u32 << self.rho.min(16)) * FRACTIONS[rho_frac as usize] - 128
        } else {
            // CA: INC = ρ²/cwnd, truncated to 1/128 packet (integer division, tcp_hybla.c).
            let inc = self.rho2_7ls / st.cwnd.max(1);
            if inc < 128 {
                st.cwnd_cnt = st.cwnd_cnt.saturating_add(1);
            }
            inc
        };
        let odd = increment % 128;
        st.cwnd = st.cwnd.saturating_add(increment >> 7);
        self.cwnd_cents += odd;
        // Each 128 cents is one packet.
        while self.cwnd_cents >= 128 {
            st.cwnd = st.cwnd.saturating_add(1);
            self.cwnd_cents -= 128;
            st.cwnd_cnt = 0;
        }
        // A zero increment (ρ = 1, cwnd > 128) falls back to +1 per cwnd ACKs.
        if increment == 0 && odd == 0 && st.cwnd_cnt >= st.cwnd {
            st.cwnd = st.cwnd.saturating_add(1);
            st.cwnd_cnt = 0;
        }
        if slow_start {
            st.cwnd = st.cwnd.min(st.ssthresh);
        }
        st.cwnd = st.cwnd.min(st.cwnd_clamp);
    }

    /// `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, st: &CcState) -> u32 { (st.cwnd >> 1).max(2) }

    /// `hybla_state`: Hybla only in Open.
    fn on_state(&mut self, _st: &mut CcState, state: CaState, _c: &Coupling) { self.enabled = state == CaState::Open; }

    fn on_event(&mut self, _now: SimTime, st: &mut CcState, ev: CaEvent, _c: &Coupling) {
        if ev == CaEvent::TxStart && self.init_pending && st.srtt > SimTime::ZERO {
            self.init_from_srtt(st);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_driver::Driver;

    fn state(cwnd: u32, ssthresh: u32, srtt: SimTime) -> CcState {
        let mut st = CcState::new(cwnd, 1448);
        st.srtt = srtt;
        st.ssthresh = ssthresh;
        st
    }

    /// A Hybla initialised at `srtt`, then set to `cwnd`/`ssthresh`.
    fn hybla_at(srtt: SimTime, cwnd: u32, ssthresh: u32) -> (Hybla, CcState) {
        let mut h = Hybla::default();
        let mut st = state(10, INFINITE, srtt);
        h.init(SimTime::ZERO, &mut st);
        st.cwnd = cwnd;
        st.ssthresh = ssthresh;
        (h, st)
    }

    const INFINITE: u32 = crate::cc::INFINITE_SSTHRESH;

    fn ack(h: &mut Hybla, st: &mut CcState) {
        h.on_ack(st, &AckSample::simple(SimTime::ZERO, 1, 0, 0, None), &Coupling::alone());
    }

    #[test]
    fn rho_is_rtt_over_rtt0_in_eighths_floored_at_one() {
        // §2.3 vectors: 25 ms → 1, 100 ms → 4, 600 ms → 24, 10 ms → floored to 1,
        // 37.5 ms → rho_3ls 12 (ρ = 1.5, integer part 1).
        for (srtt_us, rho_3ls, rho) in [(25_000, 8, 1), (100_000, 32, 4), (600_000, 192, 24), (10_000, 8, 1), (37_500, 12, 1)] {
            let (h, _) = hybla_at(SimTime::from_us(srtt_us), 2, INFINITE);
            assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls), (rho_3ls, rho, rho_3ls * rho_3ls * 2), "srtt {srtt_us} µs");
        }
    }

    #[test]
    fn init_sets_cwnd_to_the_integer_part_of_rho_and_clamps_at_65535() {
        let mut h = Hybla::default();
        let mut st = state(10, INFINITE, SimTime::from_ms(600));
        h.init(SimTime::ZERO, &mut st);
        assert_eq!((st.cwnd, st.cwnd_clamp), (24, 65535));
        let mut st = state(10, INFINITE, SimTime::from_ms(25));
        h.init(SimTime::ZERO, &mut st);
        assert_eq!(st.cwnd, 1);
    }

    #[test]
    fn init_before_the_handshake_completes_at_the_first_transmission() {
        let mut h = Hybla::default();
        let mut st = state(10, INFINITE, SimTime::ZERO);
        h.init(SimTime::ZERO, &mut st);
        assert_eq!((st.cwnd, st.cwnd_clamp), (10, 65535));
        st.srtt = SimTime::from_ms(200); // SYN/SYN-ACK sample
        h.on_event(SimTime::from_ms(200), &mut st, CaEvent::TxStart, &Coupling::alone());
        assert_eq!((st.cwnd, h.rho), (8, 8));
        // Later idle restarts do not re-run it.
        st.cwnd = 50;
        h.on_event(SimTime::from_secs(5), &mut st, CaEvent::TxStart, &Coupling::alone());
        assert_eq!(st.cwnd, 50);
    }

    #[test]
    fn slow_start_adds_two_to_the_power_rho_minus_one_per_ack() {
        // ρ = 4: +15 per ACK.
        let (mut h, mut st) = hybla_at(SimTime::from_ms(100), 10, 1000);
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, h.cwnd_cents), (25, 0));
        // ρ = 1.5 (37.5 ms): (2 · 181 − 128)/128 = 1 + 106/128 per ACK.
        let (mut h, mut st) = hybla_at(SimTime::from_us(37_500), 10, 1000);
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, h.cwnd_cents), (11, 106));
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, h.cwnd_cents), (13, 84)); // 212 cents → one more packet
        // ρ = 1: Reno's +1.
        let (mut h, mut st) = hybla_at(SimTime::from_ms(25), 10, 1000);
        ack(&mut h, &mut st);
        assert_eq!(st.cwnd, 11);
    }

    #[test]
    fn slow_start_is_clamped_to_ssthresh_and_the_exponent_to_16() {
        // ρ = 24 → 2^16 · 128 − 128 cents = 65535 packets, then min(ssthresh).
        let (mut h, mut st) = hybla_at(SimTime::from_ms(600), 24, 100);
        ack(&mut h, &mut st);
        assert_eq!(st.cwnd, 100);
        let (mut h, mut st) = hybla_at(SimTime::from_ms(600), 24, INFINITE);
        ack(&mut h, &mut st);
        assert_eq!(st.cwnd, 65535);
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd_in_128ths() {
        // ρ = 4, cwnd 64: 2048/64 = 32 cents = 0.25 per ACK.
        let (mut h, mut st) = hybla_at(SimTime::from_ms(100), 64, 64);
        for _ in 0..3 {
            ack(&mut h, &mut st);
        }
        assert_eq!((st.cwnd, h.cwnd_cents), (64, 96));
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, h.cwnd_cents, st.cwnd_cnt), (65, 0, 0));
    }

    #[test]
    fn rho_one_at_cwnd_100_grows_only_one_128th_per_ack() {
        // §2.3 quirk: 128/100 = 1 cent per ACK; Reno would add 1 per 100 ACKs.
        let (mut h, mut st) = hybla_at(SimTime::from_ms(25), 100, 100);
        for _ in 0..127 {
            ack(&mut h, &mut st);
        }
        assert_eq!((st.cwnd, h.cwnd_cents, st.cwnd_cnt), (100, 127, 127));
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, h.cwnd_cents, st.cwnd_cnt), (101, 0, 0));
    }

    #[test]
    fn rho_one_above_cwnd_128_falls_back_to_reno_counting() {
        // 128/200 = 0: +1 once snd_cwnd_cnt reaches cwnd.
        let (mut h, mut st) = hybla_at(SimTime::from_ms(25), 200, 200);
        for _ in 0..199 {
            ack(&mut h, &mut st);
        }
        assert_eq!((st.cwnd, st.cwnd_cnt), (200, 199));
        ack(&mut h, &mut st);
        assert_eq!((st.cwnd, st.cwnd_cnt), (201, 0));
    }

    #[test]
    fn rho_follows_the_minimum_srtt_only() {
        let (mut h, mut st) = hybla_at(SimTime::from_ms(100), 10, 1000);
        st.srtt = SimTime::from_ms(300);
        ack(&mut h, &mut st);
        assert_eq!(h.rho, 4, "a larger SRTT leaves ρ alone");
        st.srtt = SimTime::from_ms(50);
        ack(&mut h, &mut st);
        assert_eq!(h.rho, 2);
    }

    #[test]
    fn outside_open_hybla_grows_like_reno() {
        let (mut h, mut st) = hybla_at(SimTime::from_ms(100), 10, 1000);
        h.on_state(&mut st, CaState::Disorder, &Coupling::alone());
        ack(&mut h, &mut st);
        assert_eq!(st.cwnd, 11);
        h.on_state(&mut st, CaState::Open, &Coupling::alone());
        ack(&mut h, &mut st);
        assert_eq!(st.cwnd, 26);
    }

    #[test]
    fn hybla_at_600ms_grows_about_rho_squared_per_rtt_where_reno_grows_one() {
        // The paper's aim: with ρ = 24 the window grows ρ² = 576 per RTT in CA, so the rate
        // rises about as fast as Reno's at RTT0 (25 ms). Both start CA at cwnd 240 (400 pkt/s).
        let rtt = SimTime::from_ms(600);
        let mut hybla = Driver::new(Hybla::default(), rtt);
        let mut reno = Driver::new(Reno, rtt);
        for d in [&mut hybla.st, &mut reno.st] {
            d.cwnd = 240;
            d.ssthresh = 240;
        }
        for _ in 0..10 {
            hybla.round();
            reno.round();
        }
        assert_eq!(reno.st.cwnd, 250);
        // ACK clocking: a round of W0 ACKs takes W0 to W0·√(1 + 2ρ²/W0) (+338 from 240,
        // +526 from 4529), so after 6 s the integer recurrence gives 5055.
        assert_eq!(hybla.st.cwnd, 5055);
        // Reno at RTT0 over the same 6 s: 10 → 250 packets, 10 000 pkt/s; Hybla reaches 84 %.
        let mut reno0 = Driver::new(Reno, SimTime::from_ms(25));
        reno0.st.cwnd = 10;
        reno0.st.ssthresh = 10;
        for _ in 0..240 {
            reno0.round();
        }
        assert_eq!(reno0.st.cwnd, 250);
        let ratio = (hybla.st.cwnd as f64 / 0.6) / (reno0.st.cwnd as f64 / 0.025);
        assert!((0.8..1.0).contains(&ratio), "{ratio}");
    }
}
