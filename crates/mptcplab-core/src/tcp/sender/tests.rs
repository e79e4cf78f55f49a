//! The sender's tests: flights of segments ACKed, SACKed, lost and timed out by hand.

use super::*;
use crate::cc::{make_default, Coupling};

fn tx() -> SubflowTx {
    let mut t = SubflowTx::new(TcpConfig { mss: 1000, ..Default::default() }, 0xffff_fc00, make_default("reno").unwrap(), SimTime::ZERO);
    t.st.cwnd = 20;
    t
}

fn send_n(t: &mut SubflowTx, n: u32, now: SimTime) {
    for _ in 0..n {
        let dsn = t.stats.segs_sent * 1000;
        t.send_new(now, 1000, dsn);
    }
}

#[test]
fn nagle_holds_a_short_segment_only_while_an_earlier_short_one_is_unacknowledged() {
    // Linux tcp_nagle_check with tcp_minshall_check (mss 1000 here).
    let mut t = tx();
    assert!(!t.nagle_holds(4), "nothing out");
    t.send_new(SimTime::ZERO, 1000, 0);
    assert!(!t.nagle_holds(4), "a full segment out: Minshall lets a short one go");
    assert!(!t.nagle_holds(1000), "full segments are never held");
    let una = t.snd_una;
    t.send_new(SimTime::ZERO, 4, 1000);
    assert!(t.nagle_holds(4), "a short segment unacknowledged");
    assert!(!t.nagle_holds(1000));
    // The full segment acked, the short one not yet: still held.
    t.on_ack(SimTime::from_ms(10), una.wrapping_add(1000), &[], &Coupling::alone());
    assert!(t.nagle_holds(4));
    t.on_ack(SimTime::from_ms(20), una.wrapping_add(1004), &[], &Coupling::alone());
    assert!(!t.nagle_holds(4), "the short one acked");
}

#[test]
fn three_sacked_segments_above_a_hole_start_prr_recovery_and_end_at_ssthresh() {
    // tcp.md test vector 8: cwnd 20 -> ssthresh 10, cwnd 10 after recovery.
    let mut t = tx();
    let base = t.snd_una;
    send_n(&mut t, 20, SimTime::ZERO);
    t.validate_cwnd(SimTime::ZERO, true, true);
    let now = SimTime::from_ms(100);
    // Segment 0 lost; segments 1..=3 SACKed one by one.
    for k in 1..=3u32 {
        let blk = (base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)));
        t.on_ack(now, base, &[blk], &Coupling::alone());
    }
    assert_eq!(t.ca_state(), CaState::Recovery);
    assert_eq!(t.st.ssthresh, 10);
    assert_eq!(t.sb.lost_out, 1);
    let idx = t.next_retransmit().unwrap();
    assert_eq!(idx, 0);
    t.retransmit(now, idx);
    t.check_invariants().unwrap();
    // Remaining segments get SACKed, then the retransmission is acked.
    for k in 4..20u32 {
        let blk = (base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)));
        t.on_ack(now, base, &[blk], &Coupling::alone());
        while t.has_cwnd_space() && t.st.ca_state == CaState::Recovery && t.stats.segs_sent < 40 {
            send_n(&mut t, 1, now);
        }
        t.check_invariants().unwrap();
    }
    let snd_nxt = t.snd_nxt;
    // Not cwnd-limited: the CC must not add growth on the exit ACK, so cwnd is exactly ssthresh.
    t.is_cwnd_limited = false;
    t.max_packets_out = 0;
    t.on_ack(SimTime::from_ms(200), snd_nxt, &[], &Coupling::alone());
    assert_eq!(t.ca_state(), CaState::Open);
    assert_eq!(t.st.cwnd, 10);
    t.check_invariants().unwrap();
}

#[test]
fn an_rto_marks_everything_lost_and_restarts_from_one_packet() {
    // tcp.md test vector 7.
    let mut t = tx();
    send_n(&mut t, 20, SimTime::ZERO);
    assert!(t.on_rto(SimTime::from_secs(1), &Coupling::alone()));
    assert_eq!((t.st.ssthresh, t.st.cwnd, t.ca_state()), (10, 1, CaState::Loss));
    assert_eq!(t.in_flight(), 0);
    assert_eq!(t.rto, SimTime::from_secs(2));
    let i = t.next_retransmit().unwrap();
    t.retransmit(SimTime::from_secs(1), i);
    assert_eq!(t.in_flight(), 1);
    assert!(!t.has_cwnd_space());
    t.check_invariants().unwrap();
    // A second timeout does not lower ssthresh again.
    t.on_rto(SimTime::from_secs(3), &Coupling::alone());
    assert_eq!(t.st.ssthresh, 10);
    assert_eq!(t.rto, SimTime::from_secs(4));
}

#[test]
fn a_lost_retransmission_is_detected_when_later_data_is_delivered() {
    let mut t = tx();
    let base = t.snd_una;
    send_n(&mut t, 10, SimTime::ZERO);
    let now = SimTime::from_ms(50);
    for k in 1..=3u32 {
        t.on_ack(now, base, &[(base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)))], &Coupling::alone());
    }
    let i = t.next_retransmit().unwrap();
    t.retransmit(now, i);
    // New data sent after the retransmission gets SACKed: the retransmission was lost.
    send_n(&mut t, 1, SimTime::from_ms(60));
    let top = t.snd_nxt;
    t.on_ack(SimTime::from_ms(120), base, &[(base.wrapping_add(1000), top)], &Coupling::alone());
    assert_eq!(t.next_retransmit(), Some(0));
    t.check_invariants().unwrap();
}

/// Twenty segments one ms apart over a 100 ms RTT; the first five are acked at 104 ms.
fn rack_flight(detection: LossDetection) -> (SubflowTx, u32) {
    let mut t = SubflowTx::new(TcpConfig { mss: 1000, loss_detection: detection, ..Default::default() }, 0xffff_fc00, make_default("reno").unwrap(), SimTime::ZERO);
    t.st.cwnd = 20;
    let base = t.snd_una;
    for k in 0..20u64 {
        t.send_new(SimTime::from_ms(k), 1000, k * 1000);
    }
    t.on_ack(SimTime::from_ms(104), base.wrapping_add(5000), &[], &Coupling::alone());
    (t, base)
}

#[test]
fn rack_repairs_a_tail_loss_in_the_same_recovery_where_dupthresh_waits_for_the_rto() {
    // Segment 5 and the tail 17..19 are lost; 6..16 arrive (RFC 8985 §6.2; Linux
    // tcp_rack_detect_loss). Three SACKed segments: the reordering window is 0.
    for detection in [LossDetection::Rack, LossDetection::DupThresh] {
        let (mut t, base) = rack_flight(detection);
        let seg = |k: u32| base.wrapping_add(1000 * k);
        for k in 6..=16u32 {
            t.on_ack(SimTime::from_ms(100 + k as u64), seg(5), &[(seg(6), seg(k + 1))], &Coupling::alone());
        }
        assert_eq!(t.ca_state(), CaState::Recovery, "{detection:?}");
        assert_eq!(t.next_retransmit(), Some(0), "segment 5 is the first lost ({detection:?})");
        let rtx_at = SimTime::from_ms(117);
        t.retransmit(rtx_at, 0);
        // The retransmission is delivered: the cumulative ACK reaches segment 17.
        t.on_ack(rtx_at + SimTime::from_ms(100), seg(17), &[], &Coupling::alone());
        t.check_invariants().unwrap();
        match detection {
            // The tail was sent before the delivered retransmission and has waited an
            // RTT since: lost, retransmitted now, no RTO.
            LossDetection::Rack => {
                assert_eq!(t.sb.lost_out, 3);
                assert_eq!(t.next_retransmit(), Some(0));
                assert_eq!(t.xmit_timer, XmitTimer::Rto);
            }
            // No SACKed segment above the tail: nothing to retransmit until the RTO.
            LossDetection::DupThresh => {
                assert_eq!(t.sb.lost_out, 0);
                assert_eq!(t.next_retransmit(), None);
            }
        }
    }
}

#[test]
fn with_fewer_than_dupthresh_sacked_rack_waits_a_quarter_of_min_rtt_on_its_own_timer() {
    // Segment 5 lost, only segment 6 SACKed: reordering window min_rtt / 4 = 25 ms
    // (tcp_rack_reo_wnd); the REO timer fires 2 ms after it (TCP_TIMEOUT_MIN_US).
    let (mut t, base) = rack_flight(LossDetection::Rack);
    let seg = |k: u32| base.wrapping_add(1000 * k);
    let now = SimTime::from_ms(106);
    t.on_ack(now, seg(5), &[(seg(6), seg(7))], &Coupling::alone());
    assert_eq!(t.ca_state(), CaState::Disorder);
    assert_eq!(t.sb.lost_out, 0, "not yet overdue");
    assert_eq!(t.xmit_timer, XmitTimer::Reo);
    // Segment 5 left at 5 ms; RACK RTT 100 ms (segment 6's); overdue at 5 + 100 + 25.
    assert_eq!(t.rto_deadline, Some(SimTime::from_ms(5 + 100 + 25 + 2)));
    let fire = t.rto_deadline.unwrap();
    assert_eq!(t.on_xmit_timer(fire, &Coupling::alone()), TimerOutcome::Reo);
    assert_eq!(t.ca_state(), CaState::Recovery);
    assert_eq!(t.next_retransmit(), Some(0));
    // tcp_rearm_rto with the REO timer pending: the RTO runs from the head's send time,
    // and retransmitting the head restarts it from now.
    assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Rto, Some(SimTime::from_ms(5) + t.rto)));
    t.retransmit(fire, 0);
    assert_eq!(t.rto_deadline, Some(fire + t.rto));
    t.check_invariants().unwrap();
    // DupThresh: one SACKed segment marks nothing and arms nothing new.
    let (mut d, base) = rack_flight(LossDetection::DupThresh);
    d.on_ack(now, base.wrapping_add(5000), &[(base.wrapping_add(6000), base.wrapping_add(7000))], &Coupling::alone());
    assert_eq!((d.sb.lost_out, d.xmit_timer), (0, XmitTimer::Rto));
}

#[test]
fn a_tail_loss_probe_follows_two_srtt_after_the_last_send_and_a_repaired_tail_reduces_cwnd_once() {
    // tcp_schedule_loss_probe / tcp_send_loss_probe / tcp_process_tlp_ack (Linux 6.x).
    let mut t = SubflowTx::new(TcpConfig { mss: 1000, loss_detection: LossDetection::Rack, tail_loss_probe: true, ..Default::default() }, 7, make_default("reno").unwrap(), SimTime::ZERO);
    t.st.cwnd = 20;
    t.st.ssthresh = 10; // congestion avoidance: the reduction's ssthresh is cwnd / 2
    let base = t.snd_una;
    for k in 0..10u64 {
        t.send_new(SimTime::ZERO, 1000, k * 1000);
    }
    assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Probe, Some(SimTime::from_secs(1))), "no RTT sample: TCP_TIMEOUT_INIT, capped by the RTO");
    // Nine of ten acked at 100 ms: probe at 2 x SRTT + rto_min (one packet out).
    let now = SimTime::from_ms(100);
    t.on_ack(now, base.wrapping_add(9000), &[], &Coupling::alone());
    let srtt = t.rtt.srtt();
    assert_eq!(srtt, SimTime::from_ms(100));
    assert_eq!((t.xmit_timer, t.rto_deadline), (XmitTimer::Probe, Some(now + (srtt + srtt + t.cfg.rto_min).min(t.rto))));
    let fire = t.rto_deadline.unwrap();
    assert_eq!(t.on_xmit_timer(fire, &Coupling::alone()), TimerOutcome::Probe);
    // Nothing new queued: the last segment goes again.
    assert_eq!(t.probe_last(fire), Some((base.wrapping_add(9000), 1000, 9000)));
    assert_eq!((t.stats.loss_probes, t.xmit_timer, t.rto_deadline), (1, XmitTimer::Rto, Some(fire + t.rto)));
    assert_eq!(t.in_flight(), 1, "a probe is not counted in retrans_out");
    // Its ACK reaches tlp_high_seq only: no verdict yet. New data acked past it: the
    // probe repaired a loss, cwnd falls to ssthresh once (CWR, then Open).
    let cwnd = t.st.cwnd;
    t.on_ack(fire + srtt, base.wrapping_add(10_000), &[], &Coupling::alone());
    assert_eq!(t.stats.loss_probe_recoveries, 0);
    t.send_new(fire + srtt, 1000, 10_000);
    t.on_ack(fire + srtt + srtt, base.wrapping_add(11_000), &[], &Coupling::alone());
    assert_eq!(t.stats.loss_probe_recoveries, 1);
    assert!(t.st.cwnd < cwnd && t.st.cwnd == t.st.ssthresh, "cwnd {} -> {}", cwnd, t.st.cwnd);
    assert_eq!(t.ca_state(), CaState::Open);
    t.check_invariants().unwrap();
    // A second probe timer with one outstanding: no second probe (at most one).
    let mut u = SubflowTx::new(TcpConfig { mss: 1000, tail_loss_probe: true, ..Default::default() }, 7, make_default("reno").unwrap(), SimTime::ZERO);
    u.send_new(SimTime::ZERO, 1000, 0);
    u.send_new(SimTime::ZERO, 1000, 1000);
    assert_eq!(u.on_xmit_timer(SimTime::from_secs(1), &Coupling::alone()), TimerOutcome::Probe);
    u.probe_last(SimTime::from_secs(1));
    u.xmit_timer = XmitTimer::Probe;
    assert_eq!(u.on_xmit_timer(SimTime::from_secs(2), &Coupling::alone()), TimerOutcome::Nothing);
    assert_eq!(u.stats.loss_probes, 1);
}

#[test]
fn retransmitting_the_head_restarts_the_retransmission_timer_and_a_later_segment_does_not() {
    // tcp_xmit_retransmit_queue: `if (skb == rtx_head ...) rearm_timer = true`.
    let mut t = tx();
    let base = t.snd_una;
    send_n(&mut t, 10, SimTime::ZERO);
    let armed = t.rto_deadline.unwrap();
    let now = SimTime::from_ms(150);
    for k in 1..=3u32 {
        t.on_ack(now, base, &[(base.wrapping_add(1000), base.wrapping_add(1000 * (k + 1)))], &Coupling::alone());
    }
    assert_eq!(t.rto_deadline, Some(armed), "SACKs alone do not move the timer");
    let i = t.next_retransmit().unwrap();
    assert_eq!(i, 0, "the head is lost");
    t.retransmit(now, i);
    assert_eq!(t.rto_deadline, Some(now + t.rto), "the head's retransmission restarts it");
    // A later hole's retransmission leaves it alone.
    let later = SimTime::from_ms(160);
    t.sb.segs[5].flags |= LOST;
    t.sb.lost_out += 1;
    t.retransmit(later, 5);
    assert_eq!(t.rto_deadline, Some(now + t.rto));
}

#[test]
fn linux_default_pacing_spaces_packets_by_cwnd_over_srtt() {
    // tcp.md §1.7 vector 11: cwnd 10, mss 1448, SRTT 100 ms, in CA -> 1.2 * 144 800 B/s.
    let mut t = SubflowTx::new(TcpConfig { pacing: true, ..Default::default() }, 0, make_default("reno").unwrap(), SimTime::ZERO);
    assert!(t.pacing_rate().is_none(), "no RTT sample yet");
    t.st.srtt = SimTime::from_ms(100);
    t.st.ssthresh = 10;
    assert!(t.pacing_rate().is_none(), "no ACK has stored a rate yet");
    t.update_pacing_rate();
    let r = t.pacing_rate().unwrap();
    assert!((r.0 / 8.0 - 173_760.0).abs() < 1.0, "{}", r.0 / 8.0);
    // Stored, as Linux's `sk_pacing_rate`: a cwnd change without an ACK leaves it.
    t.st.cwnd = 20;
    assert_eq!(t.pacing_rate().unwrap().0, r.0);
    t.st.cwnd = 10;
    t.send_new(SimTime::ZERO, 1448, 0);
    assert!(!t.pacing_ok(SimTime::from_ms(1)));
    // 1500 B at 173 760 B/s = 8.63 ms.
    assert!(t.pacing_ok(SimTime::from_us(8_633)));
    assert!(!t.pacing_ok(SimTime::from_us(8_600)));
}

#[test]
fn the_rtt_sample_skips_retransmitted_segments() {
    let mut t = tx();
    send_n(&mut t, 1, SimTime::ZERO);
    t.on_rto(SimTime::from_secs(1), &Coupling::alone());
    let i = t.next_retransmit().unwrap();
    t.retransmit(SimTime::from_secs(1), i);
    let nxt = t.snd_nxt;
    let r = t.on_ack(SimTime::from_ms(1010), nxt, &[], &Coupling::alone());
    assert!(r.rtt_sample.is_none());
    assert_eq!(t.sb.packets_out, 0);
    assert!(t.rto_deadline.is_none());
}

/// Records every ACK sample it is given (a plug-in through `AnyCc::Dyn`).
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<AckSample>>>);
impl CongestionControl for Recorder {
    fn name(&self) -> &'static str { "recorder" }
    fn on_ack(&mut self, _st: &mut CcState, _a: &AckSample, _c: &Coupling) {}
    fn has_cong_control(&self) -> bool { true }
    fn cong_control(&mut self, _st: &mut CcState, a: &AckSample, _c: &Coupling) { self.0.lock().unwrap().push(*a); }
    fn ssthresh(&mut self, st: &CcState) -> u32 { st.ssthresh }
}

#[test]
fn delivery_rate_is_delivered_over_the_longer_of_send_and_ack_elapsed() {
    // cc-uncoupled.md §2.6 (tcp_rate.c): 10 packets, send_elapsed 8 ms (sent over
    // 0..8 ms), ACKed at 10 ms → interval 10 ms → 1000 packets per second.
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let cc = AnyCc::Dyn(Box::new(Recorder(log.clone())));
    let mut t = SubflowTx::new(TcpConfig { mss: 1000, ..Default::default() }, 0, cc, SimTime::ZERO);
    t.st.cwnd = 20;
    for k in 0..10u64 {
        let now = SimTime::from_us(k * 8000 / 9);
        t.send_new(now, 1000, k * 1000);
    }
    t.on_ack(SimTime::from_ms(10), 10_000, &[], &Coupling::alone());
    let a = log.lock().unwrap()[0];
    assert_eq!(a.rs.delivered, 10);
    assert_eq!(a.rs.acked_sacked, 10);
    assert_eq!(a.rs.prior_delivered, 0);
    assert_eq!(a.rs.interval, Some(SimTime::from_ms(10)));
    assert!((a.rs.rate_pps().unwrap() - 1000.0).abs() < 1e-9);
    assert_eq!(a.delivered_total, 10);
    // The RTT of the most recent packet (sent at 8 ms) is 2 ms: the sample's rtt.
    assert_eq!(a.rs.rtt, Some(SimTime::from_ms(10) - SimTime::from_us(8000)));
    assert!(!a.rs.is_app_limited);
    assert!((t.delivery_rate_bytes_per_sec() - 1e6).abs() < 1e-3, "{}", t.delivery_rate_bytes_per_sec());
    // Nothing more to send: the next packet's sample is app-limited until the mark
    // (delivered + in flight) has been delivered.
    t.check_app_limited();
    t.send_new(SimTime::from_ms(11), 1000, 10_000);
    t.on_ack(SimTime::from_ms(21), 11_000, &[], &Coupling::alone());
    let b = log.lock().unwrap()[1];
    assert!(b.rs.is_app_limited);
    assert_eq!(b.rs.delivered, 1);
    // An app-limited sample below the kept rate does not replace it (tcp_rate_gen).
    assert!((t.delivery_rate_bytes_per_sec() - 1e6).abs() < 1e-3, "{}", t.delivery_rate_bytes_per_sec());
}

fn tx_with(v: CwndValidation, gso: bool) -> SubflowTx {
    let mut t = SubflowTx::new(TcpConfig { mss: 1000, cwnd_validation: v, gso, ..Default::default() }, 0, make_default("reno").unwrap(), SimTime::ZERO);
    t.st.cwnd = 20;
    t
}

#[test]
fn linux_3_x_counts_a_sender_within_three_packets_of_cwnd_or_inside_the_gso_bound_as_cwnd_limited() {
    // tcp_is_cwnd_limited (tcp_cong.c, 3.6-3.15): left <= 3, or with GSO left * 3 <
    // cwnd and left under the release's bound.
    assert!(cwnd_limited_3_x(20, 20, None));
    assert!(cwnd_limited_3_x(20, 17, None));
    assert!(!cwnd_limited_3_x(20, 16, None));
    let bound = Some(gso_max_segs_3_11(1448)); // 46 segments of 1448 B < 64 KiB
    assert_eq!(bound, Some(46));
    assert!(cwnd_limited_3_x(20, 14, bound), "left 6: 18 < 20");
    assert!(!cwnd_limited_3_x(20, 13, bound), "left 7: 21 >= 20");
    assert!(!cwnd_limited_3_x(200, 150, bound), "left 50 is past 64 KiB");
    // 3.12-3.15: the bound is xmit_size_goal_segs, 2 at these rates.
    assert!(!cwnd_limited_3_x(20, 14, Some(2)), "left 6 >= 2 segments");
}

#[test]
fn the_3_14_size_goal_is_half_a_millisecond_at_the_pacing_rate_and_at_least_two_segments() {
    // 5 Mbit/s-class subflow: cwnd 40, srtt 80 ms -> rate 2 * 1448 * 40 / 0.08 =
    // 1.448 MB/s, 724 B per half-ms tick -> max(724, 2 * 1448) -> 2 segments.
    assert_eq!(xmit_size_goal_segs_3_14(40, 40, SimTime::from_ms(80), 1448, u64::MAX), 2);
    // 1 Gbit/s-class: cwnd 1000, srtt 10 ms -> 289.6 MB/s -> 144 800 B, capped at
    // 65 535 - 52 = 65 483 B -> 45 segments.
    assert_eq!(xmit_size_goal_segs_3_14(1000, 1000, SimTime::from_ms(10), 1448, u64::MAX), 45);
    // Half the peer's window bounds it: 40 000 B window -> 20 000 B -> 13 segments.
    assert_eq!(xmit_size_goal_segs_3_14(1000, 1000, SimTime::from_ms(10), 1448, 40_000), 13);
    // No RTT sample yet: the GSO maximum.
    assert_eq!(xmit_size_goal_segs_3_14(10, 0, SimTime::ZERO, 1448, u64::MAX), 45);
}

#[test]
fn reno_grows_in_slow_start_with_half_the_window_idle_under_4x_and_not_under_3_14() {
    // 12 of 20 packets in flight, no loss (ssthresh infinite): 4.x allows growth up to
    // 2 x max_packets_out = 24; 3.x sees left = 8 (> 3, and 24 >= 20 with GSO).
    for (v, grows) in [(CwndValidation::Linux4, true), (CwndValidation::Linux5_18, true), (CwndValidation::Linux3_14, false), (CwndValidation::Linux3_11, false)] {
        let mut t = tx_with(v, true);
        send_n(&mut t, 12, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, false, false);
        let ack = t.snd_una.wrapping_add(2000);
        t.on_ack(SimTime::from_ms(50), ack, &[], &Coupling::alone());
        assert_eq!(t.st.cwnd > 20, grows, "{v:?}: cwnd {}", t.st.cwnd);
    }
}

#[test]
fn linux_4_slow_start_ignores_is_cwnd_limited_once_cwnd_is_twice_the_window_and_5_18_does_not() {
    for (v, grows) in [(CwndValidation::Linux4, false), (CwndValidation::Linux5_18, true)] {
        let mut t = tx_with(v, true);
        send_n(&mut t, 20, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, true, false); // cwnd-limited window of 20
        t.st.cwnd = 50; // >= 2 x max_packets_out, still in slow start
        let ack = t.snd_una.wrapping_add(1000);
        t.on_ack(SimTime::from_ms(50), ack, &[], &Coupling::alone());
        assert_eq!(t.st.cwnd > 50, grows, "{v:?}: cwnd {}", t.st.cwnd);
    }
}

#[test]
fn linux_6_remembers_a_cwnd_limited_window_when_a_later_send_has_room_and_4x_forgets_it() {
    // The sequence of "tcp: fix tcp_cwnd_validate() to not forget is_cwnd_limited"
    // (2022): cwnd-limited with 20 out, then in the same window cwnd has room and 22
    // are out. 3.16-5.17 overwrite is_cwnd_limited with false (22 > 20); 6.x keep it
    // for the window. Congestion avoidance, so no slow-start allowance.
    for (v, limited) in [(CwndValidation::Linux4, false), (CwndValidation::Linux5_18, true)] {
        let mut t = tx_with(v, true);
        t.st.ssthresh = 10;
        send_n(&mut t, 20, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, true, false);
        t.st.cwnd = 25;
        send_n(&mut t, 2, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, false, false);
        assert_eq!(t.cwnd_limited(), limited, "{v:?}");
    }
}

#[test]
fn rfc2861_decay_hits_a_sender_short_of_cwnd_under_3_14_but_not_one_4x_slow_start_counts_as_limited() {
    // 18 of 20 packets out for more than an RTO (1 s before any sample): 3.14
    // tcp_cwnd_validate sees packets_out < cwnd and tcp_cwnd_application_limited
    // sets cwnd = (20 + 18) / 2; 4.x slow start has 20 < 2 x 18 and keeps 20.
    for (v, cwnd) in [(CwndValidation::Linux3_14, 19), (CwndValidation::Linux4, 20)] {
        let mut t = tx_with(v, true);
        send_n(&mut t, 18, SimTime::ZERO);
        t.validate_cwnd(SimTime::ZERO, false, false);
        t.validate_cwnd(SimTime::from_ms(1100), false, false);
        assert_eq!(t.st.cwnd, cwnd, "{v:?}");
    }
}

#[test]
fn after_idle_cwnd_restarts_and_the_srtt_the_scheduler_reads_stays_as_last_sampled() {
    // tcp_cwnd_restart (tcp_output.c, 3.14 and 4.x alike): idle longer than the RTO
    // halves cwnd once per RTO down to min(IW, cwnd); no RTT sample, so srtt, which
    // the minRTT scheduler compares, keeps its last value.
    let mut t = tx_with(CwndValidation::Linux3_14, true);
    t.st.cwnd = 80;
    send_n(&mut t, 1, SimTime::ZERO);
    let nxt = t.snd_nxt;
    t.on_ack(SimTime::from_ms(300), nxt, &[], &Coupling::alone());
    let srtt = t.st.srtt;
    assert_eq!(srtt, SimTime::from_ms(300));
    let rto = t.rto;
    let cwnd = t.st.cwnd;
    // Idle for 2.5 RTOs after the last send at 0: two halvings.
    let now = SimTime::from_ns(rto.ns() * 5 / 2);
    t.send_new(now, 1000, 1000);
    assert_eq!(t.st.cwnd, (cwnd >> 2).max(10), "cwnd {cwnd} rto {rto:?}");
    assert_eq!(t.st.srtt, srtt);
}

#[test]
fn the_upstream_restart_check_halves_again_on_every_call_until_data_leaves() {
    // Linux >= 4.x `tcp_slow_start_after_idle_check` runs from `tcp_skb_entail` for
    // each skb queued and measures the idle time from `lsndtime`, which only a send
    // moves: a subflow idle for 1.5 RTOs that queues two skbs halves cwnd twice,
    // and restarts no more once data has left (docs/kernel.md, "The restart after
    // idle runs once per skb queued").
    let idle = |calls: usize, in_flight: bool| {
        let mut t = tx_with(CwndValidation::Linux5_18, true);
        t.restart_on_entail = true;
        t.st.cwnd = 88;
        send_n(&mut t, 1, SimTime::ZERO);
        let nxt = t.snd_nxt;
        t.on_ack(SimTime::from_ms(100), nxt, &[], &Coupling::alone());
        let (cwnd, rto) = (t.st.cwnd, t.rto);
        if in_flight {
            send_n(&mut t, 1, SimTime::from_ms(100));
        }
        let now = t.last_send + SimTime::from_ns(rto.ns() * 3 / 2);
        let restarted = (0..calls).filter(|_| t.idle_restart_check(now)).count();
        // The send that follows does not restart again.
        t.send_new(now, 1000, 1000);
        (cwnd, t.st.cwnd, restarted)
    };
    let (cwnd, one, n1) = idle(1, false);
    assert_eq!((one, n1), (cwnd / 2, 1), "one skb: one halving");
    let (cwnd, two, n2) = idle(2, false);
    assert_eq!((two, n2), (cwnd / 4, 2), "two skbs: two halvings");
    let (cwnd, busy, n0) = idle(2, true);
    assert_eq!((busy, n0), (cwnd, 0), "data in flight: no restart");
}
