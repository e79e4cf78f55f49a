//! One connection (both ends). Sans-IO: every method takes `now` and appends the packets
//! to transmit to an outbox; timers are deadlines the engine polls.
//!
//! This file owns the connection's state (`Connection`, its configuration and counters),
//! its construction and the packet dispatch (`on_packet`). The rest is in parts:
//!
//! | file | owns |
//! |---|---|
//! | `subflow.rs` | a subflow's life: handshake, join, backup and failure status, the path manager's events |
//! | `send.rs` | the MPTCP level's sending: the application's writes, the scheduler's decisions |
//! | `transmit.rs` | a subflow's output: skbs, GSO packets, cwnd / pacing / window checks, the loss probe |
//! | `ack.rs` | a subflow's ACK at the sender: scoreboard, CC, DATA_ACK, send-buffer tuning |
//! | `receive.rs` | the receiving end: reassembly, receive memory, the reader, ACKs and windows |
//! | `timers.rs` | which deadlines the engine schedules and what each does when it fires |
//! | `delay.rs` | the streaming delay samples (seed 002) |
//! | `observe.rs` | what the engine collects besides packets (`Observations`) |
//! | `order.rs` | the order the subflows are walked in (`WalkOrder`) |
//!
//! The parts of a connection and where each lives:
//!
//! * the **meta sender**: its state is `MetaSender` (`mptcp/meta/sender.rs`: data
//!   sequence space, shared send buffer, mappings until DATA_ACK, reinjection queue); the
//!   scheduling that fills subflows from it is `send.rs` with the `Scheduler` trait
//!   (`mptcp/scheduler/`), reinjection and the MPTCP-level timers are `timers.rs` with
//!   `MetaUp` (`mptcp/upstream.rs`);
//! * the **meta receiver**: its state is `MetaReceiver` (`mptcp/meta/receiver.rs`:
//!   reassembly, window edge, DATA_ACK) and, under Linux's skb memory, `RcvMem` and each
//!   subflow's `HeldQueue` (`mptcp/rcvmem.rs`); `receive.rs` moves a subflow's data into
//!   it and sends the ACKs;
//! * the **subflow state machine**: `subflow.rs`, over `tcp::SubflowTx`/`SubflowRx`;
//! * what differs between stacks: `StackPolicy` (`mptcp/stack/`), read, never tested
//!   by name.

use super::meta::{MetaReceiver, MetaSender, VIA_NONE};
use super::rcvmem::{self, Admission, HeldQueue, RcvMem};
use crate::app::App;
use super::pm::{AnyPm, PathManager, PmAction};
use super::scheduler::{Action, AnyScheduler, MetaSegs, MetaView, SchedCounters, SchedView, Scheduler, Segment, StatusNote, SubflowMem, SubflowView};
use super::stack::{PmStart, SendMemory, Stack, StackPolicy};
use super::upstream::{self as up, MetaUp, SubflowUp};
use crate::cc::{self, CongestionControl, Coupling, LazySiblings, SiblingView};
use crate::metrics::delay::{path_delay, PathDelay};
use crate::net::packet::{Packet, PacketKind};
use crate::rng::Rng;
use crate::tcp::TimerOutcome;
use crate::sim::TimerKind;
use crate::tcp::seq::after;
use crate::tcp::{AckDecision, BaseKernel, ReceiveMemory, SubflowRx, SubflowTx, TcpConfig};
use crate::units::{Bandwidth, SimTime};
use std::cell::Cell;
use std::collections::VecDeque;

mod ack;
mod delay;
mod observe;
mod order;
mod receive;
mod send;
mod subflow;
#[cfg(test)]
mod tests;
mod timers;
mod transmit;

pub use delay::DelaySample;
pub use observe::Observations;
use order::WalkOrder;
pub use subflow::{NetDrops, StatusChange, SubState, Subflow, SubflowStatus, TauStats};

/// IPv4 (20) + TCP (20) + timestamps option (12) bytes.
pub const TCP_HEADER_BYTES: u32 = 52;
/// MPTCP DSS option with a 64-bit mapping, no DATA_ACK and no checksum (RFC 8684 §3.3:
/// 4 + 8 + 4 + 2 = 18 bytes, padded to 20; the packet captures write exactly this).
pub const DSS_BYTES: u32 = 20;
/// TCP option bytes of an MPTCP data segment beyond the timestamps, as Linux 6.18 sends
/// them (a DSS with a 64-bit DATA_ACK and a mapping): its data segments' TCP headers are
/// 56 bytes in the kernel backend's captures, 32 of them the base header and timestamps.
pub const MPTCP_DATA_OPT_LEN: u32 = 24;
pub const SYN_BYTES: u32 = 60;

/// One path of a connection: its routes and whether its subflows are backups.
#[derive(Clone, Copy, Debug)]
pub struct ConnPath {
    pub route_fwd: u32,
    pub route_rev: u32,
    pub backup: bool,
}

/// Subflows per connection: `MetaSeg::path_mask` has one bit per subflow (the
/// out-of-tree kernel's `path_index_bits` is one `unsigned long` too).
pub const MAX_SUBFLOWS: usize = 64;

/// Subflow `i`'s bit in a mask of subflows (`MAX_SUBFLOWS` fit a `u64`).
#[inline(always)]
pub(crate) fn sub_bit(i: usize) -> u64 { 1u64 << (i & 63) }

#[derive(Clone, Debug)]
pub struct ConnConfig {
    pub name: String,
    pub mptcp: bool,
    pub tcp: TcpConfig,
    pub cc: String,
    pub cc_params: cc::CcParams,
    pub send_buffer: u64,
    pub receive_buffer: u64,
    pub read_rate: Option<Bandwidth>,
    pub app: App,
    pub initial_path: usize,
    pub start: SimTime,
    /// Record a delay sample per data segment at its DATA_ACK (streaming apps, or
    /// `run.delay_samples`); off for bulk runs, where it would only cost time.
    pub delay_samples: bool,
    /// The MPTCP implementation the connection follows (`run.profile`).
    pub stack: Stack,
    /// Upstream stack without a `send_buffer`: the send buffers auto-tune
    /// (`tcp_sndbuf_expand`, `__mptcp_sync_sndbuf`) and `send_buffer` is only the start.
    pub send_buffer_auto: bool,
    /// The scenario gave `receive_buffer` (SO_RCVBUF locked) rather than the default.
    pub receive_buffer_locked: bool,
}

#[derive(Clone, Debug, Default)]
pub struct ConnStats {
    pub data_segs_sent: u64,
    pub acks_sent: u64,
    pub ooo_max_bytes: u64,
    pub rcvbuf_max_bytes: u64,
    pub penalisations: u64,
    pub opportunistic_retrans: u64,
    pub reinjections: u64,
    /// Upstream stack: times the MPTCP retransmit timer fired, segments it retransmitted,
    /// subflows it marked stale.
    pub meta_rtx_fired: u64,
    pub meta_rtx_segs: u64,
    pub stale_marked: u64,
    /// `tcp.receive_memory = "skb"`: segments a subflow over its buffer dropped in
    /// sequence (`TCPRcvQDrop`) and out of order (`TCPOFODrop`), and when the MPTCP socket
    /// was first over its buffer with nothing in order to read (its receive deadlock).
    pub rcvq_drops: u64,
    pub ofo_drops: u64,
    pub rcv_stalled_at: Option<SimTime>,
    /// The MPTCP socket's largest `sk_rmem_alloc` (truesize) after an arrival.
    pub rcv_rmem_max: u64,
}

pub struct Connection {
    pub id: u32,
    pub cfg: ConnConfig,
    /// The application writing into the send buffer (its configuration is `cfg.app`).
    pub app: App,
    /// The paths (address pairs) this connection may use, by connection path index.
    pub paths: Vec<ConnPath>,
    /// Initial sequence numbers for subflows opened later.
    iss: Rng,
    pub subflows: Vec<Subflow>,
    pub snd: MetaSender,
    pub rcv: MetaReceiver,
    pub sched: AnyScheduler,
    pub pm: AnyPm,
    pub completed_at: Option<SimTime>,
    pub started: bool,
    pub stats: ConnStats,
    views: Vec<SubflowView>,
    siblings: Vec<SiblingView>,
    /// The order the subflows are walked in (the kernel's `conn_list`); `siblings`
    /// follows it.
    walk: WalkOrder,
    /// Connection-level state of a coupled controller (Linux: the meta socket's CC).
    meta_cc: Cell<[u64; 2]>,
    actions: Vec<Action>,
    pm_actions: Vec<PmAction>,
    /// The subflows that sent data since `push_written` began (`emit_data` sets a bit:
    /// every data segment leaves through it), instead of each subflow's segment count
    /// read before and after (issue 16: two passes over 8 subflows' lines per push).
    sent_mask: u64,
    /// Scratch: status notes drained from the scheduler.
    notes: Vec<StatusNote>,
    /// What the engine collects besides packets (delay samples, the scheduler's trace,
    /// status changes, MP_PRIO signals).
    pub obs: Observations,
    /// The application has a timer (a stream); checked first on the hot path.
    app_timer: bool,
    /// The application's timer event, when one is scheduled.
    app_event_at: Option<SimTime>,
    /// Upstream stack: the MPTCP retransmit timer and the path manager's notification.
    pub up: MetaUp,
    /// What this connection's stack does (`cfg.stack.policy()`, chosen once here).
    pub policy: StackPolicy,
    /// Scratch: the segments an MPTCP-level retransmission resends.
    rtx_scratch: Vec<(u64, u32)>,
    /// Send-buffer state of each subflow for the scheduler (`SchedView::mem`), kept only
    /// when subflow send buffers are modelled.
    mem: Vec<SubflowMem>,
    /// A timer beyond the subflows' own: the application's (a stream), the MPTCP
    /// retransmit timer (upstream) or a delayed join; checked once on the hot path.
    extra_timers: bool,
    /// Subflows whose timer deadlines may have moved since `poll_timers` last looked, one
    /// bit each. Every entry point sets all of them except `on_packet` for data and ACKs,
    /// which sets the packet's subflow and those it sent on: a poll then reads 2 of the
    /// 8 subflows of a k = 8 FatTree's connections, not all (issue 16: the walk over
    /// every subflow's deadlines was a seventh of the run's L1 misses, cachegrind).
    timer_scope: u64,
    /// The host's jiffy clock: the offset of its ticks in ns (in [0, 4 ms)); None: exact
    /// timers (`set_jiffy_phase`).
    jiffy_phase: Option<u64>,
    /// `run.join_jitter` and its random stream ("conn/<name>/join"): each join waits an
    /// offset drawn uniformly from [0, join_jitter). None: joins leave at once.
    join_jitter: Option<(SimTime, Rng)>,
}

/// One executed scheduler action, for the per-decision trace: a `Send` that left
/// ("new", "reinject", "copy"), an `Enqueue` ("enqueue") or a `Penalise` ("penalise";
/// dsn and len 0). `Wait` and sends the connection could not carry out are not recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedRecord {
    pub at: SimTime,
    pub subflow: usize,
    pub kind: &'static str,
    pub dsn: u64,
    pub len: u32,
    /// The subflow's cwnd and packets in flight as the scheduler saw them.
    pub cwnd: u32,
    pub in_flight: u32,
}

/// Timer work the engine must schedule: (deadline, subflow, kind).
pub type TimerRequest = (SimTime, u16, TimerKind);

impl Connection {
    /// `routes[i]` = (forward route, reverse route) of path i and `backup[i]` its backup
    /// flag. `iss` is the connection's stream of initial sequence numbers: one draw per
    /// path now, then one per subflow opened later on an already used path.
    pub fn new(id: u32, cfg: ConnConfig, routes: &[(u32, u32)], backup: &[bool], mut iss: Rng, sched: AnyScheduler, pm: AnyPm) -> Result<Self, String> {
        let paths: Vec<ConnPath> = routes.iter().enumerate().map(|(i, &(fwd, rev))| ConnPath { route_fwd: fwd, route_rev: rev, backup: backup.get(i).copied().unwrap_or(false) }).collect();
        // One idle subflow per path up front, so the first subflow of path i is subflow i
        // (fullmesh and default never open more; result tables keep that numbering).
        let mut subflows = Vec::with_capacity(routes.len());
        for (i, p) in paths.iter().enumerate() {
            subflows.push(Subflow::new(&cfg, i, p, iss.next_u64() as u32)?);
        }
        let mut rcv = MetaReceiver::with_accounting(cfg.receive_buffer, cfg.tcp.rcvbuf_accounting, cfg.tcp.mss);
        if cfg.mptcp && cfg.tcp.receive_memory == ReceiveMemory::Skb {
            let b = rcvmem::sk_rcvbuf(cfg.receive_buffer, cfg.tcp.rcvbuf_accounting, cfg.receive_buffer_locked);
            rcv.set_skb_memory(RcvMem::new(b, cfg.receive_buffer_locked, cfg.tcp.mss));
        }
        let policy = cfg.stack.policy();
        rcv.drop_ofo_beyond_edge = cfg.mptcp && policy.drop_ofo_beyond_edge;
        // Auto-tuned: `mptcp_init_sock` starts the send buffer at tcp_wmem[1]. Upstream with
        // a `send_buffer`: `SO_SNDBUF` doubled, counted in `sk_wmem_queued` bytes
        // (`upstream::locked_sndbuf`, `MetaSender::frag_charge`).
        let frags = policy.send_memory == SendMemory::Frags;
        let sndbuf = if cfg.send_buffer_auto {
            up::TCP_WMEM[1]
        } else if frags {
            up::locked_sndbuf(cfg.send_buffer)
        } else {
            cfg.send_buffer
        };
        // Linux receive memory: the sender's MPTCP window starts at the SYN-ACK's 65 535 B
        // (`MetaReceiver::handshake_edge`, which `set_skb_memory` set).
        let edge0 = if rcv.skb.is_some() { rcv.edge() } else { rcv.window_edge() };
        rcv.advertised_edge = edge0;
        let mut snd = MetaSender::new(sndbuf, edge0);
        snd.frag_charge = frags;
        snd.fill_window = policy.fill_window;
        snd.record_times = cfg.delay_samples;
        let mut up = MetaUp::new(frags && !cfg.send_buffer_auto);
        // `bbr_sndbuf_expand` provisions 3 x cwnd; other controllers 2.
        up.sndbuf_factor = if cfg.cc == "bbr" || cfg.cc == "coupled_bbr" { 3 } else { 2 };
        up.model_sndbuf = policy.subflow_send_memory || sched.queues_data();
        let app_timer = matches!(cfg.app, App::Stream(_));
        Ok(Connection {
            id,
            app: cfg.app.clone(),
            cfg,
            paths,
            iss,
            subflows,
            snd,
            rcv,
            sched,
            pm,
            completed_at: None,
            started: false,
            stats: ConnStats::default(),
            views: Vec::new(),
            siblings: Vec::new(),
            walk: WalkOrder::new(routes.len()),
            meta_cc: Cell::new([0; 2]),
            actions: Vec::new(),
            pm_actions: Vec::new(),
            sent_mask: 0,
            notes: Vec::new(),
            obs: Observations::default(),
            app_timer,
            app_event_at: None,
            up,
            rtx_scratch: Vec::new(),
            mem: Vec::new(),
            extra_timers: app_timer || policy.meta_retransmit_timer,
            timer_scope: u64::MAX,
            policy,
            jiffy_phase: None,
            join_jitter: None,
        })
    }

    /// `run.join_jitter`: delay each subflow the path manager opens by an offset drawn
    /// from `rng` in [0, `jitter`). A testbed's joins follow the MP_CAPABLE handshake
    /// after host- and daemon-dependent delays; seeds then differ where a loss-free
    /// network would replay the same run.
    pub fn set_join_jitter(&mut self, jitter: SimTime, rng: Rng) {
        if jitter > SimTime::ZERO {
            self.join_jitter = Some((jitter, rng));
            self.extra_timers = true;
        }
    }

    /// The receivers' delayed-ACK timers run on the host's jiffy clock (HZ = 250 on the
    /// kernel backend's host), its ticks offset by `phase` ns (`tcp::receiver::JIFFY_NS`):
    /// `tcp_send_delayed_ack` arms `jiffies + ato` and the timer wheel runs it on a tick.
    pub fn set_jiffy_phase(&mut self, phase: u64) { self.jiffy_phase = Some(phase); }

    fn data_header(&self) -> u32 {
        TCP_HEADER_BYTES
            + if self.cfg.mptcp { self.policy.dss_bytes } else { 0 }
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.timer_scope = u64::MAX;
        self.started = true;
        let p = self.cfg.initial_path;
        self.send_syn(now, p, out);
    }

    /// Executed scheduler actions since the last call, oldest first (empty unless
    /// `trace_sched`).
    pub fn poll_sched_trace(&mut self) -> std::vec::Drain<'_, SchedRecord> { self.obs.poll_sched() }

    fn record_sched(&mut self, now: SimTime, sub: usize, kind: &'static str, dsn: u64, len: u32) {
        let views = &self.views;
        self.obs.sched_decision(|| {
            let v = views.get(sub).copied().unwrap_or_default();
            SchedRecord { at: now, subflow: sub, kind, dsn, len, cwnd: v.cwnd, in_flight: v.in_flight }
        });
    }

    /// Keep the MP_PRIO signals (`poll_prio_signals`): on while a packet capture is attached.
    pub fn record_prio(&mut self, on: bool) { self.obs.record_prio(on); }

    /// MP_PRIO signals wait to be collected.
    #[inline]
    pub fn has_prio_signals(&self) -> bool { self.obs.has_prio() }

    /// MP_PRIO signals since the last call (subflow, backup), oldest first.
    pub fn poll_prio_signals(&mut self) -> Vec<(usize, bool)> { self.obs.poll_prio() }

    /// Status changes since the last call, oldest first.
    pub fn poll_status_changes(&mut self) -> std::vec::Drain<'_, StatusChange> { self.obs.poll_status() }

    /// Status changes wait to be collected.
    #[inline]
    pub(crate) fn has_status_changes(&self) -> bool { self.obs.has_status() }

    fn ctl(&self, kind: PacketKind, i: usize, forward: bool, now: SimTime) -> Packet {
        let s = &self.subflows[i];
        let mut p = Packet::new(kind, self.id, i as u16, if forward { s.route_fwd } else { s.route_rev }, TCP_HEADER_BYTES + 12);
        p.ts = now;
        p
    }

    /// A packet for this connection reached its destination end.
    #[inline]
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let first = out.len();
        self.handle_packet(now, pkt, out);
        // Data and ACKs move the deadlines of their own subflow and of those they send
        // on (and pacing's, marked where it is set); a handshake packet may open or
        // change any subflow.
        self.timer_scope |= match pkt.kind {
            PacketKind::Data | PacketKind::Ack => out[first..].iter().fold(sub_bit(pkt.sub as usize), |m, p| m | sub_bit(p.sub as usize)),
            _ => u64::MAX,
        };
    }

    #[inline(always)]
    fn handle_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.sub as usize;
        match pkt.kind {
            PacketKind::Syn => {
                let s = &mut self.subflows[i];
                if s.rx.is_none() {
                    let mut rx = SubflowRx::new(pkt.seq, s.tx.cfg.mss, s.tx.cfg.delayed_ack, s.tx.cfg.delack_timeout);
                    // Linux receive memory: Linux's quick-ACK rules (the SYN-ACK leaves now).
                    if let Some(m) = &self.rcv.skb {
                        let mut l = crate::tcp::LinuxAcks::new(m.sk_rcvbuf, m.scaling_ratio, s.tx.cfg.mss, now);
                        l.data_opt_len = if self.cfg.mptcp { MPTCP_DATA_OPT_LEN } else { 0 };
                        l.jiffy_phase = self.jiffy_phase;
                        rx.linux = Some(l);
                    }
                    s.rx = Some(rx);
                }
                let mut p = self.ctl(PacketKind::SynAck, i, false, now);
                p.ts = pkt.ts;
                // Linux receive memory: the MP_CAPABLE SYN-ACK offers at most 65 535 B
                // (`MetaReceiver::handshake_edge`); an MP_JOIN SYN-ACK moves nothing.
                p.rwnd_edge = if self.rcv.skb.is_none() {
                    self.rcv.window_edge()
                } else if i == self.cfg.initial_path {
                    self.rcv.handshake_edge()
                } else {
                    self.rcv.edge()
                };
                out.push(p);
            }
            PacketKind::SynAck => {
                let s = &mut self.subflows[i];
                if s.state != SubState::SynSent {
                    return;
                }
                if s.syn_retries == 0 {
                    // Linux seeds the RTT estimator from the handshake (tcp_synack_rtt_meas).
                    let m = now - s.syn_sent_at;
                    s.tx.rtt.sample(m, s.tx.snd_una, s.tx.snd_nxt);
                    s.tx.rto = s.tx.rtt.rto();
                    s.tx.st.srtt = s.tx.rtt.srtt();
                    s.tx.st.min_rtt = s.tx.rtt.min_rtt();
                }
                // Linux initialises congestion control when the handshake completes
                // (tcp_init_transfer), with the handshake's RTT known.
                s.tx.init_cc(now);
                // `tcp_ack` on the SYN-ACK runs `tcp_cong_control` (the SYN was out), which
                // stores the first `sk_pacing_rate` (`tcp_update_pacing_rate`).
                if !s.tx.cc.has_cong_control() {
                    s.tx.update_pacing_rate();
                }
                if self.up.model_sndbuf {
                    // tcp_init_transfer -> tcp_init_buffer_space -> tcp_sndbuf_expand; and
                    // tcp_ack stamps rcv_tstamp.
                    s.up.rcv_tstamp = now;
                    if !self.up.sndbuf_locked {
                        s.up.sndbuf = s.up.sndbuf.max(up::sndbuf_expand(s.tx.cfg.mss, s.tx.st.cwnd, self.up.sndbuf_factor));
                    }
                }
                let initial = i == self.cfg.initial_path;
                if initial || !self.cfg.mptcp {
                    s.state = SubState::Established;
                    s.established_at = Some(now);
                    s.handshake_deadline = None;
                    self.update_status(now, i, "established");
                    self.app.on_established(now);
                } else {
                    s.state = SubState::PreEstablished;
                    s.handshake_deadline = Some(now + s.tx.rto);
                }
                let p = self.ctl(PacketKind::HandshakeAck, i, true, now);
                out.push(p);
                self.snd.on_data_ack(0, pkt.rwnd_edge);
                self.subflows[i].tx.snd_wnd = pkt.rwnd_edge;
                self.subflows[i].tx.max_window = self.subflows[i].tx.max_window.max(pkt.rwnd_edge);
                if self.policy.send_memory == SendMemory::Frags {
                    self.sync_sndbuf();
                }
                // The path manager starts here or once the connection is fully
                // established (`on_ack`).
                if initial && self.cfg.mptcp && self.policy.pm_start == PmStart::SynAck {
                    self.pm_established(now, i, out);
                }
                self.push(now, out);
            }
            PacketKind::HandshakeAck => {
                let rto_min = self.cfg.tcp.rto_min;
                if let Some(rx) = self.subflows[i].rx.as_mut() {
                    rx.handshake_done(now, rto_min);
                }
                if self.cfg.mptcp && i != self.cfg.initial_path {
                    let p = self.ctl(PacketKind::JoinAck, i, false, now);
                    out.push(p);
                }
            }
            PacketKind::JoinAck => {
                let s = &mut self.subflows[i];
                if s.state == SubState::PreEstablished {
                    s.state = SubState::Established;
                    s.established_at = Some(now);
                    s.handshake_deadline = None;
                    self.update_status(now, i, "established");
                    self.push(now, out);
                }
            }
            PacketKind::Data => self.on_data(now, pkt, out),
            PacketKind::Ack => self.on_ack(now, pkt, out),
        }
    }

    /// Invariants for property tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, s) in self.subflows.iter().enumerate() {
            s.tx.check_invariants().map_err(|e| format!("{} subflow {i}: {e}", self.cfg.name))?;
        }
        if self.rcv.rcv_nxt > self.snd.written {
            return Err(format!("{}: delivered {} > written {}", self.cfg.name, self.rcv.rcv_nxt, self.snd.written));
        }
        if self.snd.data_una > self.rcv.rcv_nxt {
            return Err(format!("{}: DATA_ACK beyond delivered data", self.cfg.name));
        }
        if self.rcv.occupancy() > self.rcv.rcvbuf.max(self.cfg.tcp.mss as u64) {
            return Err(format!("{}: receive buffer holds {} > {}", self.cfg.name, self.rcv.occupancy(), self.rcv.rcvbuf));
        }
        if self.snd.written > self.snd.write_limit() {
            return Err(format!("{}: send buffer over its bound", self.cfg.name));
        }
        if self.rcv.beyond_window > 0 {
            return Err(format!("{}: data beyond the advertised window", self.cfg.name));
        }
        Ok(())
    }
}
