//! Coupled BBR (seed `004_811a4f59e195d45d.txt`, Sec. IV, Eq. 1-2, Algorithm 1): each
//! subflow's share β_i of the connection's bandwidth and the gains scaled by it.

use super::*;

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

impl Bbr {
    /// Coupled BBR: β_i and α_i from every subflow's bandwidth estimate (seed 004 Eq. 1–2),
    /// recomputed on each ACK of this subflow after its filter update. Siblings that are
    /// not established or are in Loss state (RTO) are left out.
    pub(super) fn update_coupling(&mut self, coupling: &Coupling) {
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
        if coupling.subflows().is_empty() {
            add(mine);
        }
        for (j, s) in coupling.subflows().iter().enumerate() {
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

    pub(super) fn update_gains(&mut self) {
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
}
