//! Traffic matrices and flow-size workloads over a topology's hosts (issue 16). Each
//! function returns demands between host positions (indexes into the list of taking
//! part hosts); every random draw comes from the stream it is given, so a scenario and
//! seed give the same demands.

use crate::rng::Rng;
use crate::units::SimTime;

/// One generated connection: host positions, start time and size (None: unbounded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Demand {
    pub src: usize,
    pub dst: usize,
    pub start: SimTime,
    pub size: Option<u64>,
}

/// Fisher-Yates (Knuth, TAOCP vol. 2, Algorithm 3.4.2 P), in place.
pub fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// A uniformly random derangement of 0..n (n >= 2): shuffles until no host sends to
/// itself (expected e ≈ 2.72 shuffles). dst[i] is host i's destination. The matrix of
/// Raiciu et al. (SIGCOMM 2011 Sec. 3): every host sends to one and receives from one.
pub fn permutation(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut dst: Vec<usize> = (0..n).collect();
    loop {
        shuffle(&mut dst, rng);
        if dst.iter().enumerate().all(|(i, &d)| i != d) {
            return dst;
        }
    }
}

/// Host i sends to a host drawn uniformly among the n - 1 others.
pub fn random(n: usize, rng: &mut Rng) -> Vec<usize> {
    (0..n)
        .map(|i| {
            let d = rng.below(n as u64 - 1) as usize;
            if d >= i { d + 1 } else { d }
        })
        .collect()
}

/// `senders` distinct hosts other than `to`, in an order drawn from the stream.
pub fn incast(n: usize, to: usize, senders: usize, rng: &mut Rng) -> Vec<usize> {
    let mut others: Vec<usize> = (0..n).filter(|&h| h != to).collect();
    shuffle(&mut others, rng);
    others.truncate(senders);
    others
}

/// A flow-size CDF: points (size in bytes, cumulative probability), piecewise linear.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// Checks: at least one point; sizes >= 0 B and finite, probabilities in [0, 1]; both
    /// non-decreasing; the last probability 1. Errors say which point.
    pub fn new(points: &[[f64; 2]]) -> Result<SizeCdf, String> {
        if points.is_empty() {
            return Err("expected a CDF of at least one [size in bytes, probability] point, got none (an empty file?)".into());
        }
        for (i, &[s, p]) in points.iter().enumerate() {
            if !s.is_finite() || s < 0.0 {
                return Err(format!("point {i}: expected a size of at least 0 bytes, got {s}"));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("point {i}: expected a probability in [0, 1], got {p}"));
            }
            if i > 0 {
                let [s0, p0] = points[i - 1];
                if s < s0 || p < p0 {
                    return Err(format!("point {i}: the CDF is not monotone: ({s0}, {p0}) is followed by ({s}, {p}); sizes and probabilities must not decrease"));
                }
            }
        }
        let last = points[points.len() - 1][1];
        if last != 1.0 {
            return Err(format!("expected the last probability to be 1, got {last}"));
        }
        if points[points.len() - 1][0] < 1.0 {
            return Err("expected a largest size of at least 1 byte, got 0".into());
        }
        Ok(SizeCdf { points: points.iter().map(|&[s, p]| (s, p)).collect() })
    }

    /// Inverse transform of one uniform draw u in [0, 1): the size where the linear
    /// interpolation of the CDF reaches u (the first point's size below its probability),
    /// at least 1 byte.
    pub fn quantile(&self, u: f64) -> u64 {
        let pts = &self.points;
        let i = pts.partition_point(|&(_, p)| p < u);
        let size = if i == 0 {
            pts[0].0
        } else if i == pts.len() {
            pts[i - 1].0
        } else {
            let ((s0, p0), (s1, p1)) = (pts[i - 1], pts[i]);
            if p1 > p0 { s0 + (s1 - s0) * (u - p0) / (p1 - p0) } else { s1 }
        };
        size.round().max(1.0) as u64
    }

    /// Mean of the piecewise-linear distribution: the first point's mass at its size,
    /// each segment's mass at its midpoint.
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }
}

/// Poisson arrivals at each of `n` hosts from `from` until `until`: exponential gaps of
/// mean `1/rate_per_host` (one stream per host, so adding hosts leaves the others'
/// arrivals alone), a destination uniform among the others, a size from `cdf`. Sorted by
/// start, then source.
pub fn poisson(n: usize, rate_per_host: f64, cdf: &SizeCdf, from: SimTime, until: SimTime, streams: &mut dyn FnMut(usize) -> Rng) -> Vec<Demand> {
    let mut out = Vec::new();
    for src in 0..n {
        let mut rng = streams(src);
        let mut t = from.secs_f64();
        loop {
            // 1 - u is in (0, 1]: the logarithm is finite.
            t += -(1.0 - rng.next_f64()).ln() / rate_per_host;
            let at = SimTime::from_secs_f64(t);
            if at >= until {
                break;
            }
            let d = rng.below(n as u64 - 1) as usize;
            let dst = if d >= src { d + 1 } else { d };
            let size = cdf.quantile(rng.next_f64());
            out.push(Demand { src, dst, start: at, size: Some(size) });
        }
    }
    out.sort_by_key(|d| (d.start, d.src));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        let mut a = Rng::stream(1, "t");
        let p = permutation(128, &mut a);
        let mut seen = vec![false; 128];
        for (i, &d) in p.iter().enumerate() {
            assert_ne!(i, d);
            assert!(!seen[d]);
            seen[d] = true;
        }
        assert_eq!(p, permutation(128, &mut Rng::stream(1, "t")));
        assert_ne!(p, permutation(128, &mut Rng::stream(2, "t")));
    }

    #[test]
    fn random_and_incast_never_send_to_self() {
        let mut r = Rng::stream(3, "t");
        for _ in 0..50 {
            assert!(random(5, &mut r).iter().enumerate().all(|(i, &d)| i != d && d < 5));
        }
        let s = incast(10, 4, 9, &mut r);
        assert_eq!(s.len(), 9);
        assert!(!s.contains(&4));
    }

    #[test]
    fn cdf_checks_quantiles_and_mean() {
        assert!(SizeCdf::new(&[]).unwrap_err().contains("none"));
        assert!(SizeCdf::new(&[[100.0, 0.5], [50.0, 1.0]]).unwrap_err().contains("not monotone"));
        assert!(SizeCdf::new(&[[100.0, 0.6], [200.0, 0.5], [300.0, 1.0]]).unwrap_err().contains("not monotone"));
        assert!(SizeCdf::new(&[[100.0, 0.5], [200.0, 0.9]]).unwrap_err().contains("last probability"));
        assert!(SizeCdf::new(&[[0.0, 1.0]]).unwrap_err().contains("largest size"));
        let c = SizeCdf::new(&[[1000.0, 0.5], [3000.0, 1.0]]).unwrap();
        assert_eq!(c.quantile(0.2), 1000);
        assert_eq!(c.quantile(0.75), 2000);
        // Half the mass at 1000, half uniform on [1000, 3000] (mean 2000): 1500.
        assert_eq!(c.mean(), 1500.0);
        // The sample mean agrees (10^5 draws, sd of the mean < 2.5).
        let mut r = Rng::stream(1, "cdf");
        let m = (0..100_000).map(|_| c.quantile(r.next_f64()) as f64).sum::<f64>() / 1e5;
        assert!((m - 1500.0).abs() < 10.0, "{m}");
    }

    #[test]
    fn poisson_rate_matches() {
        let c = SizeCdf::new(&[[1000.0, 1.0]]).unwrap();
        let d = poisson(4, 100.0, &c, SimTime::ZERO, SimTime::from_secs(100), &mut |h| Rng::stream(1, &format!("h{h}")));
        // 4 hosts × 100 /s × 100 s = 40 000 arrivals, sd 200.
        assert!((d.len() as f64 - 40_000.0).abs() < 1000.0, "{}", d.len());
        assert!(d.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(d.iter().all(|x| x.src != x.dst && x.size == Some(1000)));
    }
}
