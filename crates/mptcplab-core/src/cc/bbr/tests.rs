//! BBR's tests: the filters, the mode machine, the target cwnd and Coupled BBR's seed vectors.

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
            let c = Coupling::new(i, &views, None);
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
    f.round(5000.0, &Coupling::new(0, &views, None));
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
        f.round(10_000.0, &Coupling::new(0, &views, None));
        dead.vars[0] = f.b.bw();
    }
    assert!((f.b.beta() - 0.5).abs() < 1e-9, "equal siblings: {}", f.b.beta());
    dead.ca_state = CaState::Loss;
    let views = [f.view(), dead];
    f.round(10_000.0, &Coupling::new(0, &views, None));
    assert_eq!(f.b.beta(), 1.0);
}
