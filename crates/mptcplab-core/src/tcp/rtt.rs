//! RTT estimation and RTO as Linux `tcp_rtt_estimator` / `__tcp_set_rto` compute them
//! (net/ipv4/tcp_input.c; RFC 6298 §2 with Linux's 200 ms floor on the variance term).
//! Reference `tcp.md` §1.4. Fixed point as Linux: `srtt_us` = 8·SRTT, `mdev_us` = 4·mdev.

use super::seq::after;
use crate::units::SimTime;

pub const RTO_MAX: SimTime = SimTime::from_secs(120);
pub const RTO_INIT: SimTime = SimTime::from_secs(1);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_us: u64,
    mdev_us: u64,
    mdev_max_us: u64,
    rttvar_us: u64,
    rtt_seq: u32,
    rto_min_us: u64,
    min_rtt: SimTime,
    latest: SimTime,
}

impl RttEstimator {
    pub fn new(rto_min: SimTime) -> Self {
        RttEstimator { srtt_us: 0, mdev_us: 0, mdev_max_us: 0, rttvar_us: 0, rtt_seq: 0, rto_min_us: rto_min.us(), min_rtt: SimTime::ZERO, latest: SimTime::ZERO }
    }

    pub fn has_sample(&self) -> bool { self.srtt_us != 0 }
    pub fn srtt(&self) -> SimTime { SimTime::from_us(self.srtt_us / 8) }
    /// Linux `rttvar_us >> 1`-style mean deviation is `mdev_us / 4`.
    pub fn rttvar(&self) -> SimTime { SimTime::from_us(self.rttvar_us / 4) }
    pub fn min_rtt(&self) -> SimTime { self.min_rtt }
    pub fn latest(&self) -> SimTime { self.latest }

    /// One RTT sample `m`; `snd_una`/`snd_nxt` drive the once-per-window decay of rttvar.
    pub fn sample(&mut self, m: SimTime, snd_una: u32, snd_nxt: u32) {
        let m_us = m.us().max(1);
        self.latest = m;
        if self.min_rtt == SimTime::ZERO || m < self.min_rtt {
            self.min_rtt = m;
        }
        if self.srtt_us != 0 {
            let srtt8 = self.srtt_us as i64;
            let mut err = m_us as i64 - (srtt8 >> 3);
            self.srtt_us = (srtt8 + err) as u64; // SRTT = 7/8 SRTT + 1/8 m
            if err < 0 {
                err = -err - (self.mdev_us as i64 >> 2);
                if err > 0 {
                    err >>= 3; // damp growth of mdev when the RTT falls
                }
            } else {
                err -= self.mdev_us as i64 >> 2;
            }
            self.mdev_us = (self.mdev_us as i64 + err).max(0) as u64; // mdev = 3/4 mdev + 1/4 |err|
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if after(snd_una, self.rtt_seq) {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            self.srtt_us = m_us << 3;
            self.mdev_us = m_us << 1;
            self.rttvar_us = self.mdev_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt_us = self.srtt_us.max(1);
    }

    /// `RTO = srtt + rttvar` (rttvar floored at rto_min), capped at 120 s; 1 s before any sample.
    pub fn rto(&self) -> SimTime {
        if self.srtt_us == 0 {
            return RTO_INIT;
        }
        SimTime::from_us((self.srtt_us >> 3) + self.rttvar_us).min(RTO_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_of_100ms_gives_300ms_and_10ms_gives_210ms() {
        // tcp.md test vectors 4 and 5.
        let mut e = RttEstimator::new(SimTime::from_ms(200));
        assert_eq!(e.rto(), SimTime::from_secs(1));
        e.sample(SimTime::from_ms(100), 0, 100);
        assert_eq!(e.rto(), SimTime::from_ms(300));
        let mut e = RttEstimator::new(SimTime::from_ms(200));
        e.sample(SimTime::from_ms(10), 0, 100);
        assert_eq!(e.rto(), SimTime::from_ms(210));
    }

    #[test]
    fn rto_never_falls_below_srtt_plus_200ms() {
        let mut e = RttEstimator::new(SimTime::from_ms(200));
        let mut una = 0u32;
        for i in 0..2000u32 {
            let m = SimTime::from_ms(20 + (i % 7) as u64);
            una = una.wrapping_add(1000);
            e.sample(m, una, una.wrapping_add(10_000));
            assert!(e.rto() >= e.srtt() + SimTime::from_ms(200));
        }
        assert!((e.srtt().ms_f64() - 23.0).abs() < 2.0);
    }

    #[test]
    fn backoff_doubles_and_caps_at_120s() {
        // tcp.md test vector 6, as the sender applies it.
        let mut rto = SimTime::from_secs(1);
        let seq: Vec<u64> = (0..8).map(|_| { rto = rto.mul(2).min(RTO_MAX); rto.ns() / 1_000_000_000 }).collect();
        assert_eq!(seq, vec![2, 4, 8, 16, 32, 64, 120, 120]);
    }
}
