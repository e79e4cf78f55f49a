//! Random loss applied before a link's queue.

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub enum LossModel {
    /// Independent drops with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state Gilbert-Elliott chain; the state moves once per packet, then the packet
    /// is dropped with the loss probability of the new state.
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64, bad: bool },
}

impl LossModel {
    pub fn none() -> Self { LossModel::Bernoulli { p: 0.0 } }

    /// Decide one packet's fate. Always draws from the stream when the model can lose
    /// packets at all, so the pattern depends only on the packet count, not on timing.
    #[inline]
    pub fn drops(&mut self, rng: &mut Rng) -> bool {
        match self {
            LossModel::Bernoulli { p } => *p > 0.0 && rng.chance(*p),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad, bad } => {
                let flip = if *bad { *p_bad_to_good } else { *p_good_to_bad };
                if rng.chance(flip) {
                    *bad = !*bad;
                }
                rng.chance(if *bad { *loss_bad } else { *loss_good })
            }
        }
    }

    /// Whether `drops` can ever say yes (and so draws from the stream).
    pub fn can_drop(&self) -> bool {
        match self {
            LossModel::Bernoulli { p } => *p > 0.0,
            LossModel::GilbertElliott { .. } => true,
        }
    }

    pub fn set_bernoulli(&mut self, p: f64) {
        *self = LossModel::Bernoulli { p };
    }

    pub fn bernoulli_p(&self) -> f64 {
        match self {
            LossModel::Bernoulli { p } => *p,
            LossModel::GilbertElliott { .. } => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gilbert_elliott_loses_in_bursts() {
        let mut m = LossModel::GilbertElliott { p_good_to_bad: 0.01, p_bad_to_good: 0.2, loss_good: 0.0, loss_bad: 1.0, bad: false };
        let mut r = Rng::stream(3, "ge");
        let drops: Vec<bool> = (0..100_000).map(|_| m.drops(&mut r)).collect();
        let n = drops.iter().filter(|&&d| d).count() as f64;
        // Stationary bad fraction = 0.01 / (0.01 + 0.2) = 4.76 %.
        assert!((n / 1e5 - 0.0476).abs() < 0.01, "{n}");
        let runs = drops.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!(runs / n > 0.6, "mean burst length should be ~5");
    }
}
