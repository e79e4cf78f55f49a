//! The connection's tests: both ends of one connection over ideal paths (`Pair`).

use super::*;
use super::send::penalise;
use crate::app::Bulk;
use crate::mptcp::{pm, scheduler};
use crate::tcp::CwndValidation;
use crate::options::{OptValue, Params};

const ONE_WAY: SimTime = SimTime::from_ms(10);

/// Both ends of one connection, joined by paths with a fixed one-way delay and no
/// rate limit; a path can be cut (both directions drop everything).
struct Pair {
    c: Connection,
    now: SimTime,
    wire: VecDeque<(SimTime, Packet)>,
    timers: Vec<TimerRequest>,
    down: Vec<bool>,
}

impl Pair {
    fn new(backup: &[bool], pm_name: &str, pm_params: &Params, total: u64) -> Pair { Pair::with(backup, pm_name, pm_params, total, |_| {}) }

    fn with(backup: &[bool], pm_name: &str, pm_params: &Params, total: u64, edit: impl FnOnce(&mut ConnConfig)) -> Pair {
        let mut cfg = ConnConfig {
            name: "c".into(),
            mptcp: true,
            tcp: TcpConfig::default(),
            cc: "reno".into(),
            cc_params: Default::default(),
            send_buffer: 1 << 20,
            // Bounds the sending rate: 64 KB per 20 ms round trip.
            receive_buffer: 64 << 10,
            read_rate: None,
            app: App::Bulk(Bulk { total: Some(total), poll_chunk: None }),
            initial_path: 0,
            start: SimTime::ZERO,
            delay_samples: false,
            stack: Stack::OutOfTree,
            send_buffer_auto: false,
            receive_buffer_locked: true,
        };
        edit(&mut cfg);
        let routes: Vec<(u32, u32)> = (0..backup.len() as u32).map(|p| (2 * p, 2 * p + 1)).collect();
        let sched = scheduler::make("minrtt", &Default::default(), scheduler::MinRttOptions { opportunistic_retransmission: true, penalisation: true }).unwrap();
        let names: Vec<String> = (0..backup.len()).map(|i| format!("p{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let pm = pm::make(pm_name, pm_params, &names).unwrap();
        let c = Connection::new(0, cfg, &routes, backup, Rng::stream(1, "iss"), sched, pm).unwrap();
        let mut p = Pair { c, now: SimTime::ZERO, wire: VecDeque::new(), timers: vec![], down: vec![false; backup.len()] };
        let mut out = vec![];
        p.c.start(SimTime::ZERO, &mut out);
        p.after(out);
        p
    }

    fn after(&mut self, out: Vec<Packet>) {
        for pkt in out {
            if !self.down[self.c.subflows[pkt.sub as usize].path] {
                self.wire.push_back((self.now + ONE_WAY, pkt));
            }
        }
        self.c.poll_timers(&mut self.timers);
    }

    fn run_until(&mut self, until: SimTime) {
        loop {
            let next_pkt = self.wire.front().map(|w| w.0);
            let next_timer = self.timers.iter().enumerate().min_by_key(|(_, t)| t.0).map(|(k, t)| (k, t.0));
            let t = match (next_pkt, next_timer) {
                (Some(a), Some((_, b))) => a.min(b),
                (Some(a), None) => a,
                (None, Some((_, b))) => b,
                (None, None) => break,
            };
            if t > until {
                break;
            }
            self.now = t;
            let mut out = vec![];
            if next_pkt == Some(t) {
                let (_, pkt) = self.wire.pop_front().unwrap();
                if !self.down[self.c.subflows[pkt.sub as usize].path] {
                    self.c.on_packet(t, &pkt, &mut out);
                }
            } else {
                let (k, _) = next_timer.unwrap();
                let (_, sub, kind) = self.timers.swap_remove(k);
                self.c.on_timer(t, sub as usize, kind, &mut out);
            }
            self.after(out);
            self.c.check_invariants().unwrap();
        }
        self.now = until;
    }

    fn events(&mut self) -> Vec<(usize, &'static str, &'static str, &'static str)> {
        self.c.poll_status_changes().map(|e| (e.subflow, e.from.as_str(), e.to.as_str(), e.reason)).collect()
    }

    fn sent(&self, i: usize) -> u64 { self.c.subflows[i].tx.stats.bytes_sent }
}

/// `tcp_write_xmit` (Linux 6.x): `is_cwnd_limited |= packets_in_flight >= cwnd`, and
/// `tcp_cwnd_validate` runs when the subflow sent nothing but was cwnd-limited. A
/// subflow whose queue holds data behind a full cwnd is cwnd-limited for its window
/// under `linux_5_18`; under `linux_4` only a subflow that sent something is validated.
#[test]
fn a_subflow_with_data_queued_behind_a_full_cwnd_counts_as_cwnd_limited_under_linux_6() {
    for (v, limited) in [(CwndValidation::Linux4, false), (CwndValidation::Linux5_18, true)] {
        let mut p = Pair::with(&[false], "fullmesh", &Params::new(), 10_000_000, |c| {
            c.stack = Stack::Upstream;
            c.tcp.mss = 1424;
            c.tcp.cwnd_validation = v;
            c.receive_buffer = 4 << 20;
        });
        p.run_until(SimTime::from_ms(100));
        let s = &mut p.c.subflows[0];
        assert!(s.tx.sb.packets_out > 0, "{v:?}: data out");
        // Congestion avoidance (no slow-start allowance), a fresh window, cwnd full,
        // then two segments handed to the subflow (`__subflow_push_pending`).
        s.tx.st.ssthresh = 2;
        s.tx.st.cwnd = s.tx.in_flight();
        s.tx.clear_cwnd_usage();
        let sent = s.tx.stats.segs_sent;
        let mut out = vec![];
        p.c.push_on(p.now, 0, 2 * 1424, &mut out);
        assert!(!p.c.subflows[0].queue.is_empty(), "{v:?}: data queued");
        p.c.push(p.now, &mut out);
        let s = &p.c.subflows[0];
        assert_eq!(s.tx.stats.segs_sent, sent, "{v:?}: nothing sent past a full cwnd");
        assert_eq!(s.tx.cwnd_limited(), limited, "{v:?}");
    }
}

/// Both subflows open, one 1 424-B segment delivered, the 6.18 receive memory with the
/// kernel backend's 200 KB (sk_rcvbuf 326 114).
fn upstream_receiver_pair() -> Pair {
    let mut p = Pair::with(&[false, false], "fullmesh", &Params::new(), 1424, |c| {
        c.stack = Stack::Upstream;
        c.tcp.mss = 1424;
        c.tcp.receive_memory = ReceiveMemory::Skb;
        c.receive_buffer = 200_000;
    });
    p.run_until(SimTime::from_ms(300));
    p
}

/// The receive deadlock of upstream 6.18 (rcvmem.rs; the measured composition of
/// docs/research/upstream-receive-deadlock-measured.md 5.2): a hole at the left edge
/// on subflow 1, then exactly one window (201 276 B) of out-of-order data on subflow 0
/// in 141 full skbs and one of the 1 280-B bucket, which leaves the MPTCP socket at
/// 326 144 B = sk_rcvbuf + 30. The hole filler then waits in subflow 1 for good (no
/// pull above the buffer, nothing to read); the copies the MPTCP retransmit timer
/// would send queue on subflow 0 until it is over its own buffer and drops.
#[test]
fn a_window_of_out_of_order_skbs_over_the_buffer_deadlocks_the_receiver_for_good() {
    let mut p = upstream_receiver_pair();
    assert!(p.c.subflows.iter().all(|s| s.rx.is_some()), "both subflows are open");
    assert_eq!(p.c.rcv.read_total, 1424);
    let b = p.c.rcv.rcvbuf;
    assert_eq!(b, 326_114);
    let base = p.c.rcv.rcv_nxt;
    let w = p.c.rcv.window_edge() - base;
    assert_eq!(w, 201_276, "ALIGN4(158 x 326 114 / 256) with nothing held");
    let mut seq = [p.c.subflows[0].rx.as_ref().unwrap().rcv_nxt, p.c.subflows[1].rx.as_ref().unwrap().rcv_nxt];
    let mut t = p.now;
    let mut send = |p: &mut Pair, sub: usize, dsn: u64, len: u32, gap: u32| -> Vec<Packet> {
        let mut pkt = Packet::new(PacketKind::Data, 0, sub as u16, 0, 1500);
        seq[sub] = seq[sub].wrapping_add(gap);
        pkt.seq = seq[sub];
        pkt.len = len;
        pkt.dsn = dsn;
        seq[sub] = seq[sub].wrapping_add(len);
        t = t + SimTime::from_us(100);
        let mut out = vec![];
        p.c.on_packet(t, &pkt, &mut out);
        out
    };
    let hole = 240u32;
    let mut dsn = base + hole as u64;
    for _ in 0..141 {
        send(&mut p, 0, dsn, 1424, 0);
        dsn += 1424;
    }
    let tail = (base + w - dsn) as u32;
    assert_eq!(tail, 252);
    send(&mut p, 0, dsn, tail, 0);
    let m = p.c.rcv.skb.as_ref().unwrap();
    assert_eq!(m.rmem, 141 * 2304 + 1280);
    assert_eq!(m.rmem, b + 30, "the measured deadlock fill");
    send(&mut p, 1, base, hole, 0);
    assert_eq!(p.c.rcv.rcv_nxt, base, "the hole filler is not pulled");
    assert_eq!(p.c.subflows[1].held.len(), 1);
    assert!(p.c.stats.rcv_stalled_at.is_some());
    // Copies of the head on subflow 0 (in sequence at TCP level) are held, not pulled,
    // until the subflow is over its buffer; then it drops and ACKs.
    let mut acks = 0;
    for k in 0..142u64 {
        let out = send(&mut p, 0, base + (k % 20) * 1424, 1424, 0);
        acks += out.iter().filter(|q| q.kind == PacketKind::Ack).count();
    }
    assert_eq!(p.c.subflows[0].held.len(), 142, "142 x 2 304 = 327 168 > 326 114");
    assert_eq!(p.c.stats.rcvq_drops, 0);
    let out = send(&mut p, 0, base, 1424, 0);
    assert_eq!(p.c.stats.rcvq_drops, 1, "TCPRcvQDrop");
    assert!(out.iter().any(|q| q.kind == PacketKind::Ack), "an in-sequence drop is ACKed at once");
    assert!(acks > 0);
    // An out-of-order segment on subflow 0 is dropped without an ACK.
    let out = send(&mut p, 0, base, 1424, 5000);
    assert_eq!(p.c.stats.ofo_drops, 1, "TCPOFODrop");
    assert!(out.is_empty());
    // Nothing was delivered since the fill, and the window stayed shut.
    assert_eq!(p.c.rcv.read_total, 1424);
    assert_eq!(p.c.rcv.rcv_nxt, base);
    assert_eq!(p.c.rcv.window_edge(), base + w);
}

/// Linux 6.18's receiver ACKs a pushed segment once its reader drained it
/// (`tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED on a short segment or a full one with
/// PSH; `mptcp_recvmsg` -> `mptcp_cleanup_rbuf` -> `__tcp_cleanup_rbuf` sends the
/// scheduled ACK when the subflow holds nothing more). Measured on the kernel: 57 % of
/// path1's short segments ACKed within 1 ms (docs/kernel.md, "What moves the kernel's
/// window edge", item 4). A lone full segment without PSH still waits for the timer.
#[test]
fn a_pushed_segment_is_acked_as_soon_as_the_reader_drained_it() {
    let mut p = upstream_receiver_pair();
    let mut seq = p.c.subflows[0].rx.as_ref().unwrap().rcv_nxt;
    let mut dsn = p.c.rcv.rcv_nxt;
    let mut t = p.now;
    let mut send = |p: &mut Pair, len: u32, psh: bool| -> usize {
        let mut pkt = Packet::new(PacketKind::Data, 0, 0, 0, 1500);
        (pkt.seq, pkt.len, pkt.dsn, pkt.psh) = (seq, len, dsn, psh);
        seq = seq.wrapping_add(len);
        dsn += len as u64;
        t = t + SimTime::from_ms(1);
        let mut out = vec![];
        p.c.on_packet(t, &pkt, &mut out);
        out.iter().filter(|q| q.kind == PacketKind::Ack).count()
    };
    // Full segments until the quick ACKs are spent and one waits.
    let spent = (0..400).any(|_| send(&mut p, 1424, false) == 0);
    assert!(spent, "the quick ACKs end");
    assert_eq!(send(&mut p, 1424, false), 1, "two full segments unacknowledged: ACK now");
    assert_eq!(send(&mut p, 1424, false), 0, "a lone full segment without PSH waits");
    assert_eq!(send(&mut p, 1424, true), 1, "the second one is ACKed anyway");
    assert_eq!(send(&mut p, 500, true), 1, "a lone short pushed segment, drained at once: ACK now");
    assert_eq!(send(&mut p, 1424, true), 1, "a lone full segment with PSH, drained at once: ACK now");
}

/// The same fill with a tail of 148 B, which fits the 198 B tailroom of its DSN
/// predecessor and merges into it at no cost (`mptcp_ooo_try_coalesce`): the MPTCP
/// socket ends 1 250 B under its buffer (a measured clean-fill margin), takes the hole
/// filler and delivers everything.
#[test]
fn a_window_of_out_of_order_skbs_under_the_buffer_drains_when_the_hole_fills() {
    let mut p = upstream_receiver_pair();
    let base = p.c.rcv.rcv_nxt;
    // The whole memory window offered, as by a connection that has run a while (the
    // SYN-ACK offers 65 535 B, and the rcv_ssthresh-capped ACKs grow the edge from there).
    assert_eq!(p.c.rcv.window_edge() - base, 201_276);
    let mut seq = [p.c.subflows[0].rx.as_ref().unwrap().rcv_nxt, p.c.subflows[1].rx.as_ref().unwrap().rcv_nxt];
    let mut deliver = |p: &mut Pair, sub: usize, dsn: u64, len: u32| {
        let mut pkt = Packet::new(PacketKind::Data, 0, sub as u16, 0, 1500);
        (pkt.seq, pkt.len, pkt.dsn) = (seq[sub], len, dsn);
        seq[sub] = seq[sub].wrapping_add(len);
        p.c.on_packet(p.now, &pkt, &mut vec![]);
    };
    let hole = 344u32;
    let mut dsn = base + hole as u64;
    for _ in 0..141 {
        deliver(&mut p, 0, dsn, 1424);
        dsn += 1424;
    }
    deliver(&mut p, 0, dsn, 148);
    assert_eq!(p.c.rcv.skb.as_ref().unwrap().rmem, 141 * 2304);
    assert_eq!(p.c.rcv.skb.as_ref().unwrap().ofo_merged, 1);
    assert!(!p.c.rcv.over());
    deliver(&mut p, 1, base, hole);
    assert_eq!(p.c.rcv.rcv_nxt, dsn + 148);
    assert_eq!(p.c.rcv.read_total - 1424, dsn + 148 - base);
    assert_eq!(p.c.rcv.skb.as_ref().unwrap().rmem, 0);
    assert!(p.c.stats.rcv_stalled_at.is_none());
}

/// Upstream `__mptcp_retrans` ends in `mptcp_check_and_set_pending` and then re-arms
/// the timer with the interval it had; the push that the flag runs at the socket's
/// release goes through `mptcp_subflow_get_send`, whose `__mptcp_set_timeout` takes
/// the interval from the subflow timers the retransmission has just armed. So with
/// data still unsent, the next period follows the subflows' (backed-off) RTO.
#[test]
fn an_upstream_meta_retransmission_with_unsent_data_takes_its_next_interval_from_the_subflow_timers() {
    let mut p = Pair::with(&[false, false], "fullmesh", &Params::new(), 64 << 20, |c| c.stack = Stack::Upstream);
    p.run_until(SimTime::from_ms(400));
    assert!(p.c.subflows.iter().all(|s| s.state == SubState::Established));
    // Path 0 fails: its data holds the left edge, subflow 1 fills the rest of the
    // 64 KB window, is acknowledged and idles behind the shut window.
    p.down = vec![true, false];
    let fired = p.c.stats.meta_rtx_fired;
    while !(p.c.holds_data(0) && !p.c.holds_data(1)) {
        p.run_until(p.now + SimTime::from_ms(1));
        assert_eq!(p.c.stats.meta_rtx_fired, fired, "subflow 1 idles before the MPTCP timer fires");
    }
    assert!(p.c.snd.unsent() > 0, "the bulk sender still has data to send");
    assert!(p.c.holds_data(0) && !p.c.holds_data(1), "subflow 0 stuck, subflow 1 idle");
    let now = p.now;
    p.c.up.rtx_deadline = None;
    // An interval left from an earlier period, unlike any timer pending now.
    let old = SimTime::from_ms(1234);
    p.c.up.timer_ival = old;
    let mut out = vec![];
    p.c.meta_retrans(now, &mut out);
    assert!(p.c.holds_data(1), "the head frag went out again on the idle subflow");
    assert_eq!(p.c.up.rtx_deadline, Some(now + old), "the timer is re-armed with the old interval");
    // `mptcp_timeout_from_subflow`: a pending timer of a subflow with no period
    // without progress; subflow 0 has just counted one (`mptcp_pm_subflow_chk_stale`).
    assert!(p.c.subflows[0].up.stale_count > 0);
    let rto1 = p.c.subflows[1].tx.rto_deadline.expect("armed by the retransmission") - now;
    assert_eq!(p.c.up.timer_ival, rto1, "the next interval is subflow 1's fresh RTO (was {old:?})");
    assert_ne!(rto1, old);
}

/// Linux `tcp_send_loss_probe` on an MPTCP subflow: with data pushed to the subflow
/// and still in its queue (cwnd full), the probe sends the next queued segment past
/// cwnd as new data; with nothing queued, the last segment again.
#[test]
fn a_loss_probe_sends_the_subflows_next_queued_segment_past_cwnd_else_the_last_one_again() {
    let mut p = Pair::with(&[false], "fullmesh", &Params::new(), 1 << 30, |c| {
        c.stack = Stack::Upstream;
        c.tcp.tail_loss_probe = true;
        c.receive_buffer = 8 << 20;
    });
    p.run_until(SimTime::from_ms(300));
    let now = p.now;
    let mut out = vec![];
    // cwnd full, then a push: the subflow holds it in its queue.
    let tx = &mut p.c.subflows[0].tx;
    tx.st.cwnd = tx.sb.packets_out.max(1);
    let taken = p.c.push_on(now, 0, 4 * 1448, &mut out);
    assert!(taken && !p.c.subflows[0].queue.is_empty(), "the push waits in the subflow's queue: taken {taken}, {} out, window {}", p.c.subflows[0].tx.sb.packets_out, p.c.snd.rwnd_edge);
    let queued = p.c.subflows[0].queue.len();
    let (sent, retrans) = (p.c.subflows[0].tx.stats.segs_sent, p.c.subflows[0].tx.stats.segs_retrans);
    out.clear();
    p.c.send_loss_probe(now, 0, &mut out);
    let tx = &p.c.subflows[0].tx;
    assert_eq!((tx.stats.segs_sent, tx.stats.segs_retrans, tx.stats.loss_probes), (sent + 1, retrans, 1), "one new segment");
    assert_eq!(out.len(), 1);
    assert_eq!(p.c.subflows[0].queue.len(), queued - 1, "the queue's head left");
    // Nothing queued (a fresh connection, every push sent): the last segment again.
    let later = now + SimTime::from_ms(1);
    let mut u = Pair::with(&[false], "fullmesh", &Params::new(), 1 << 30, |c| {
        c.stack = Stack::Upstream;
        c.tcp.tail_loss_probe = true;
    });
    u.run_until(SimTime::from_ms(300));
    let retrans = u.c.subflows[0].tx.stats.segs_retrans;
    out.clear();
    u.c.send_loss_probe(later, 0, &mut out);
    assert_eq!((u.c.subflows[0].tx.stats.segs_retrans, u.c.subflows[0].tx.stats.loss_probes), (retrans + 1, 1));
    assert_eq!(out.len(), 1);
}

/// Linux 5.11+ (upstream profile): `tcp_write_xmit` splits an skb it sends in part
/// (`tso_fragment`, here at the cwnd's quota), and the split freezes the MPTCP mapping
/// of both halves (`mptcp_skb_ext_copy`), so `mptcp_sendmsg_frag` appends nothing more
/// to the rest: the next push starts a new skb behind it, and the short rest, no longer
/// last in the write queue, leaves as it is. A short skb that never left in part still
/// grows (docs/kernel.md, "A split skb's frozen mapping").
#[test]
fn a_short_rest_of_a_partly_sent_skb_keeps_its_size_and_a_short_unsent_skb_grows() {
    let lens = |p: &Pair| p.c.subflows[0].queue.iter().map(|&(_, l, ..)| l).collect::<Vec<u32>>();
    let setup = || {
        let mut p = Pair::with(&[false], "fullmesh", &Params::new(), 1 << 30, |c| {
            c.stack = Stack::Upstream;
        });
        p.run_until(SimTime::from_ms(300));
        assert!(p.c.subflows[0].queue.is_empty(), "nothing waits in the subflow's queue: {:?}", lens(&p));
        assert!(p.c.snd.unsent() > 8 * 1448, "data to push: {}", p.c.snd.unsent());
        // The peer's window opens (as an ACK would open it) so the pushes below fit.
        p.c.snd.rwnd_edge = p.c.snd.dsn_nxt + (1 << 20);
        let tx = &mut p.c.subflows[0].tx;
        tx.next_send_at = SimTime::ZERO;
        p
    };
    let mss = setup().c.cfg.tcp.mss;
    // The split: cwnd lets one segment of a push of MSS + 500 out.
    let mut p = setup();
    let now = p.now;
    let mut out = vec![];
    let tx = &mut p.c.subflows[0].tx;
    tx.st.cwnd = tx.in_flight() + 1;
    assert!(p.c.push_on(now, 0, mss as u64 + 500, &mut out));
    assert_eq!((out.iter().map(|k| k.len).collect::<Vec<_>>(), lens(&p)), (vec![mss], vec![500]), "one segment out, 500 B left");
    // The next push (cwnd full) starts a new skb behind the frozen rest.
    out.clear();
    assert!(p.c.push_on(now, 0, mss as u64, &mut out));
    assert!(out.is_empty());
    assert_eq!(lens(&p), vec![500, mss], "the rest keeps its size");
    // With room, the rest leaves as it is: not last in the queue, Nagle does not hold it.
    let tx = &mut p.c.subflows[0].tx;
    tx.st.cwnd = tx.in_flight() + 2;
    p.c.drain(now, 0, &mut out);
    assert_eq!(out.iter().map(|k| k.len).collect::<Vec<_>>(), vec![500, mss]);
    // No split: a push of 500 B waits whole (cwnd full) and the next push grows it.
    let mut q = setup();
    let now = q.now;
    out.clear();
    let tx = &mut q.c.subflows[0].tx;
    tx.st.cwnd = tx.in_flight();
    assert!(q.c.push_on(now, 0, 500, &mut out));
    assert!(q.c.push_on(now, 0, mss as u64, &mut out));
    assert!(out.is_empty());
    assert_eq!(lens(&q), vec![mss, 500], "the unsplit short skb grew to the MSS");
}

/// Linux 6.x (upstream profile): `tcp_write_xmit` takes one skb at a time
/// (`tcp_send_head`), so a GSO packet never spans two skbs; and the PSH that
/// `tcp_push` left on a push's last skb stays there when the next push cannot extend
/// that skb (here frozen by a split: `mptcp_sendmsg_frag` sets `eor` and
/// `tcp_build_frag` opens another). docs/kernel.md, "GSO packets end at skb
/// boundaries".
#[test]
fn a_gso_packet_ends_with_its_skb_and_a_push_mark_stays_on_a_tail_the_next_push_cannot_extend() {
    let mut p = Pair::with(&[false], "fullmesh", &Params::new(), 1 << 30, |c| {
        c.stack = Stack::Upstream;
    });
    p.run_until(SimTime::from_ms(300));
    assert!(p.c.subflows[0].queue.is_empty());
    p.c.snd.rwnd_edge = p.c.snd.dsn_nxt + (1 << 20);
    let mss = p.c.cfg.tcp.mss;
    let now = p.now;
    let tx = &mut p.c.subflows[0].tx;
    tx.next_send_at = SimTime::ZERO;
    // 10 Mbit/s: GSO packets of two segments (`tcp_tso_segs`).
    tx.sk_pacing_rate = 1_250_000;
    assert_eq!(tx.tso_segs(), 2);
    // A push of 3 MSS + 500 B with cwnd for one segment: the rest is split off, frozen.
    tx.st.cwnd = tx.in_flight() + 1;
    let mut out = vec![];
    assert!(p.c.push_on(now, 0, 3 * mss as u64 + 500, &mut out));
    assert_eq!(out.len(), 1);
    // The next push (cwnd full) opens a new skb; the rest keeps the first push's mark.
    out.clear();
    assert!(p.c.push_on(now, 0, 3 * mss as u64, &mut out));
    assert!(out.is_empty());
    let flags = |p: &Pair| p.c.subflows[0].queue.iter().map(|&(_, l, _, psh, end)| (l, psh, end)).collect::<Vec<_>>();
    assert_eq!(
        flags(&p),
        vec![(mss, false, false), (mss, false, false), (500, true, true), (mss, false, false), (mss, false, false), (mss, true, false)],
        "the rest ends its skb and keeps its mark"
    );
    // With room for all: packets [mss, mss] [500] [mss, mss] [mss], each ending in PSH.
    let tx = &mut p.c.subflows[0].tx;
    tx.st.cwnd = tx.in_flight() + 10;
    p.c.drain(now, 0, &mut out);
    assert_eq!(out.iter().map(|k| (k.len, k.psh)).collect::<Vec<_>>(), vec![(mss, false), (mss, true), (500, true), (mss, false), (mss, true), (mss, true)]);
}

/// Linux >= 4.x (upstream profile): the restart after idle runs from `tcp_skb_entail`
/// for every skb a push queues, and `lsndtime` moves only when data leaves, so after an
/// idle of between one and two RTOs a push of two data frags (65 456 B: two skbs of at
/// most `size_goal`) halves cwnd twice and a push of one frag once (docs/kernel.md,
/// "The restart after idle runs once per skb queued").
#[test]
fn a_push_after_idle_halves_cwnd_once_for_every_skb_it_queues() {
    let cwnd_after = |bytes: u64| {
        let mut p = Pair::with(&[false], "fullmesh", &Params::new(), 1 << 30, |c| {
            c.stack = Stack::Upstream;
        });
        p.run_until(SimTime::from_ms(300));
        assert!(p.c.snd.unsent() >= 2 * 32_728, "data to push: {}", p.c.snd.unsent());
        p.c.snd.rwnd_edge = p.c.snd.dsn_nxt + (1 << 20);
        let now = p.now;
        let tx = &mut p.c.subflows[0].tx;
        // Everything out is acknowledged and the subflow idles; a 200 kB window makes
        // the skbs 45 segments (`upstream::size_goal`).
        let nxt = tx.snd_nxt;
        tx.on_ack(now, nxt, &[], &Coupling::alone());
        assert_eq!(tx.sb.packets_out, 0);
        tx.st.cwnd = 88;
        tx.max_window = 200_000;
        tx.next_send_at = SimTime::ZERO;
        let later = now + SimTime::from_ns(tx.rto.ns() * 13 / 10);
        assert!(p.c.subflows[0].queue.is_empty());
        let mut out = vec![];
        assert!(p.c.push_on(later, 0, bytes, &mut out));
        assert!(!out.is_empty(), "the push sends");
        p.c.subflows[0].tx.st.cwnd
    };
    assert_eq!(cwnd_after(32_728), 44, "one skb: one halving");
    assert_eq!(cwnd_after(2 * 32_728), 22, "two skbs: two halvings");
}

/// The kernel backend's writer (`Bulk::poll_chunk`) writes a chunk only while the
/// socket polls writeable (free >= wmem / 2), so it keeps the MPTCP send buffer between
/// two thirds of `sk_sndbuf` and one chunk more; a blocking writer fills it.
#[test]
fn a_polling_writer_tops_the_send_buffer_up_a_chunk_at_a_time_and_a_blocking_one_fills_it() {
    let held = |poll: Option<u64>| {
        let mut p = Pair::with(&[false, false], "fullmesh", &Params::new(), 1 << 40, |c| {
            c.stack = Stack::Upstream;
            c.send_buffer = 200_000;
            c.app = App::Bulk(Bulk { total: None, poll_chunk: poll });
        });
        let mut most = 0;
        for k in 1..=40 {
            p.run_until(SimTime::from_ms(50 * k));
            most = most.max(up::msk_wmem_queued(p.c.snd.data_una, p.c.snd.written));
        }
        (most, p.c.snd.sndbuf)
    };
    let (poll_max, sndbuf) = held(Some(65_536));
    let (block_max, _) = held(None);
    assert_eq!(sndbuf, 400_000, "SO_SNDBUF is doubled");
    assert!(block_max >= sndbuf, "the blocking writer fills the buffer: {block_max}");
    assert!(poll_max <= sndbuf * 2 / 3 + 65_536 + 1_000, "the polling writer stops a chunk past two thirds: {poll_max}");
    assert!(poll_max > sndbuf * 2 / 3, "{poll_max}");
}

#[test]
fn a_backup_subflow_stands_by_takes_over_when_the_active_one_fails_and_hands_back() {
    let total = 8 << 20;
    let mut p = Pair::new(&[false, true], "fullmesh", &Params::new(), total);
    p.run_until(SimTime::from_ms(500));
    assert_eq!(
        p.events(),
        vec![
            (0, "idle", "opening", "opened"),
            (0, "opening", "active", "established"),
            (1, "idle", "opening", "opened"),
            (1, "opening", "standby", "established"),
        ]
    );
    assert!(p.sent(0) > 0);
    assert_eq!(p.sent(1), 0, "a standby subflow carries no data");

    // Cut the active path: one RTO later it is failed and the backup carries the data.
    p.down[0] = true;
    let cut = p.now;
    p.run_until(cut + SimTime::from_secs(1));
    let ev = p.events();
    assert_eq!(ev, vec![(0, "active", "failed", "rto"), (1, "standby", "backup", "no_active_usable")]);
    assert!(p.sent(1) > 0, "the backup took over");
    let on_backup = p.sent(1);

    // Restore it: the next retransmission gets through, its ACK clears pf.
    p.down[0] = false;
    p.run_until(cut + SimTime::from_secs(8));
    assert_eq!(p.events(), vec![(0, "failed", "active", "ack_received"), (1, "backup", "standby", "active_usable")]);
    let back = p.sent(1);
    assert!(back >= on_backup);
    p.run_until(cut + SimTime::from_secs(20));
    assert_eq!(p.c.rcv.read_total, total, "every byte delivered");
    assert_eq!(p.sent(1), back, "standby again: no new data on the backup");
}

#[test]
fn an_rto_marks_the_subflow_failed_and_its_data_goes_to_the_other_subflow() {
    let total = 4 << 20;
    let mut p = Pair::new(&[false, false], "fullmesh", &Params::new(), total);
    p.run_until(SimTime::from_ms(300));
    p.events();
    p.down[1] = true;
    // Stays down: the connection finishes on subflow 0 alone.
    p.run_until(SimTime::from_secs(30));
    let ev = p.events();
    assert_eq!(ev.first(), Some(&(1, "active", "failed", "rto")));
    assert!(ev.iter().all(|e| e.0 == 1), "{ev:?}");
    assert!(p.c.subflows[1].pf);
    assert!(p.c.stats.reinjections > 0);
    assert_eq!(p.c.rcv.read_total, total);
    assert!(p.c.completed_at.is_some());
}

#[test]
fn ndiffports_opens_subflows_over_the_initial_path() {
    let params: Params = [("subflows".to_string(), OptValue::Int(3))].into_iter().collect();
    // Two paths listed: ndiffports uses only the initial one.
    let mut p = Pair::new(&[false, false], "ndiffports", &params, 4 << 20);
    p.run_until(SimTime::from_ms(200));
    let paths: Vec<(usize, SubState)> = p.c.subflows.iter().map(|s| (s.path, s.state)).collect();
    assert_eq!(paths, vec![(0, SubState::Established), (1, SubState::Idle), (0, SubState::Established), (0, SubState::Established)]);
    // Distinct initial sequence numbers (distinct 4-tuples, distinct ISNs).
    assert_ne!(p.c.subflows[2].iss, p.c.subflows[3].iss);
    p.run_until(SimTime::from_secs(5));
    for i in [0, 2, 3] {
        assert!(p.sent(i) > 0, "subflow {i} carried no data");
    }
    assert_eq!(p.c.rcv.read_total, 4 << 20);
}

#[test]
fn penalisation_halves_a_slow_starting_subflows_ssthresh_under_v0_89_only() {
    // After a loss (ssthresh 20) the subflow slow-starts again at cwnd 8.
    let mut a = crate::cc::CcState::new(8, 1448);
    a.ssthresh = 20;
    let mut b = a.clone();
    penalise(&mut a, BaseKernel::Linux3_14);
    penalise(&mut b, BaseKernel::Linux4);
    assert_eq!((a.cwnd, a.ssthresh), (4, 10));
    assert_eq!((b.cwnd, b.ssthresh), (4, 20));
    // Infinite ssthresh (never a loss): neither release touches it.
    let mut c = crate::cc::CcState::new(8, 1448);
    penalise(&mut c, BaseKernel::Linux3_14);
    assert_eq!((c.cwnd, c.ssthresh), (4, crate::cc::INFINITE_SSTHRESH));
    // Out of slow start both halve it.
    let mut d = crate::cc::CcState::new(30, 1448);
    d.ssthresh = 20;
    penalise(&mut d, BaseKernel::Linux4);
    assert_eq!((d.cwnd, d.ssthresh), (15, 10));
}
