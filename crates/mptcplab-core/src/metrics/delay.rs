//! Path delay, protocol delay and HoL-blocking degree of seed 002 (Łuczak, Ignaciuk,
//! Morawski, `seeds/002_c4afc38db6f18665.txt`, Sec. IV.A–C; reference `metrics.md` §6.3).
//! Pure functions of one sample; the connection feeds them (docs/streaming.md has the
//! reading of θ_i).

use crate::units::SimTime;

/// One sample's delays: `T_over` (Eq. 2), `max_i τ_i`, and ζ (Eq. 7, clamped at 0 as in
/// Eq. 8 and 11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathDelay {
    pub t_over: SimTime,
    pub tau_max: SimTime,
    pub zeta: SimTime,
}

/// From `(τ_i, θ_i)` per path: Eq. 1 `T_i = τ_i + θ_i`, Eq. 2 `T_over = max_i T_i`,
/// Eq. 7/8 `ζ = max(T_over − max_i τ_i, 0)`. No paths: all zero.
pub fn path_delay(paths: impl IntoIterator<Item = (SimTime, SimTime)>) -> PathDelay {
    let mut d = PathDelay::default();
    for (tau, theta) in paths {
        d.t_over = d.t_over.max(tau + theta);
        d.tau_max = d.tau_max.max(tau);
    }
    d.zeta = d.t_over.saturating_sub(d.tau_max);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime { SimTime::from_ms(v) }

    #[test]
    fn reference_vector_srtt_20_80_waits_0_40_gives_t_over_120_and_zeta_40() {
        // metrics.md §6.3: T = (20, 120), T_over = 120 ms, ζ = 120 − 80 = 40 ms.
        let d = path_delay([(ms(20), ms(0)), (ms(80), ms(40))]);
        assert_eq!(d, PathDelay { t_over: ms(120), tau_max: ms(80), zeta: ms(40) });
    }

    #[test]
    fn without_waiting_t_over_is_the_largest_srtt_and_zeta_is_zero() {
        let d = path_delay([(ms(20), ms(0)), (ms(80), ms(0))]);
        assert_eq!((d.t_over, d.zeta), (ms(80), ms(0)));
    }

    #[test]
    fn a_wait_on_the_fast_path_that_stays_below_the_slow_srtt_is_no_hol_blocking() {
        // T = (20 + 50, 80): the slow path still dominates, ζ clamps at 0 (Eq. 8).
        let d = path_delay([(ms(20), ms(50)), (ms(80), ms(0))]);
        assert_eq!((d.t_over, d.zeta), (ms(80), ms(0)));
        // Beyond it, ζ is the excess: 20 + 90 − 80 = 30 ms.
        assert_eq!(path_delay([(ms(20), ms(90)), (ms(80), ms(0))]).zeta, ms(30));
        assert_eq!(path_delay(std::iter::empty()), PathDelay::default());
    }
}
