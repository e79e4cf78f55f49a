//! One connection (both ends). Sans-IO: every method takes `now` and appends the packets
//! to transmit to an outbox; timers are deadlines the engine polls.

use super::meta::{MetaReceiver, MetaSender, VIA_NONE};
use super::rcvmem::{self, Admission, HeldSkb, RcvMem};
use crate::app::App;
use super::pm::{AnyPm, PathManager, PmAction};
use super::scheduler::{Action, AnyScheduler, MetaSegs, MetaView, SchedCounters, SchedView, Scheduler, Segment, StatusNote, SubflowMem, SubflowView};
use super::upstream::{self as up, MetaUp, Stack, SubflowUp};
use crate::cc::{self, CongestionControl, Coupling, SiblingView};
use crate::metrics::delay::{path_delay, PathDelay};
use crate::net::packet::{Packet, PacketKind};
use crate::rng::Rng;
use crate::tcp::TimerOutcome;
use crate::sim::TimerKind;
use crate::tcp::seq::{after, before};
use crate::tcp::{AckDecision, BaseKernel, ReceiveMemory, SubflowRx, SubflowTx, TcpConfig};
use crate::units::{Bandwidth, SimTime};
use std::cell::Cell;
use std::collections::VecDeque;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubState {
    /// Not opened yet.
    Idle,
    SynSent,
    /// MP_JOIN: SYN-ACK received, waiting for the fourth ACK.
    PreEstablished,
    Established,
}

/// What a subflow does, as the event log reports it: a view over its `SubState`, its
/// backup flag and `pf`. Backup subflows are `Standby` while an active subflow works and
/// `Backup` (carrying the data) while none does, the MP_PRIO rule of `mptcp_sched.c`
/// (v0.95 `get_available_subflow`: active subflows first, backups only when no active
/// one is usable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowStatus {
    /// Not opened.
    Idle,
    /// Handshake under way (SYN sent, or MP_JOIN waiting for its fourth ACK).
    Opening,
    /// Established, not backup, not failed.
    Active,
    /// Established backup subflow while some subflow is `Active`: no new data goes there.
    Standby,
    /// Established backup subflow while no subflow is `Active`: it takes the data.
    Backup,
    /// Potentially failed (`pf`): an RTO fired and nothing has arrived on it since
    /// (out-of-tree), or stale (upstream: MPTCP retransmission periods without an ACK).
    Failed,
    /// An otherwise `Active` subflow that the scheduler qualifies with a status of its
    /// own (`StatusNote`): RBPM's "inactive" (no new data), AR&P's "redundant".
    Sched(&'static str),
}

impl SubflowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SubflowStatus::Idle => "idle",
            SubflowStatus::Opening => "opening",
            SubflowStatus::Active => "active",
            SubflowStatus::Standby => "standby",
            SubflowStatus::Backup => "backup",
            SubflowStatus::Failed => "failed",
            SubflowStatus::Sched(s) => s,
        }
    }
}

/// One change of a subflow's status, with what caused it (`reason`): "opened",
/// "established", "rto", "ack_received" for the subflow concerned; "no_active_usable"
/// and "active_usable" for backups reacting to another subflow's change; the scheduler's
/// name (e.g. "rbpm") for a change of its own status (`SubflowStatus::Sched`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusChange {
    pub at: SimTime,
    pub subflow: usize,
    /// The subflow's connection path index.
    pub path: usize,
    pub from: SubflowStatus,
    pub to: SubflowStatus,
    pub reason: &'static str,
}

pub struct Subflow {
    /// Index into the connection's path list (several subflows may share a path).
    pub path: usize,
    pub route_fwd: u32,
    pub route_rev: u32,
    pub state: SubState,
    pub backup: bool,
    pub tx: SubflowTx,
    /// Receiver side (server), created by the SYN.
    pub rx: Option<SubflowRx>,
    iss: u32,
    syn_sent_at: SimTime,
    syn_retries: u32,
    handshake_deadline: Option<SimTime>,
    /// Data handed to the subflow and not sent yet (AR&P `Enqueue`, upstream `Push`),
    /// sent when cwnd allows: (dsn, len, new data rather than a retransmission, PSH
    /// (`tcp_mark_push`), last segment of its skb (upstream: a GSO packet ends there)).
    pub queue: VecDeque<(u64, u32, bool, bool, bool)>,
    pub queued_bytes: u64,
    /// Upstream: the DSN where the skb holding the queue's last new-data entry starts
    /// (one push, and what later pushes appended to it), and whether part of that skb has
    /// left. Linux splits an skb it sends in part (`tcp_write_xmit` -> `tso_fragment`,
    /// the cwnd's quota or a sub-MSS tail that Nagle holds: `tcp_mss_split_point`), and
    /// the split freezes the MPTCP mapping of both halves (`mptcp_skb_ext_copy` sets
    /// `mpext->frozen`, include/net/mptcp.h), so `mptcp_sendmsg_frag` appends no more
    /// data to the rest (`mptcp_skb_can_collapse_to`: `!mpext->frozen`).
    tail_skb_start: u64,
    tail_skb_len: u64,
    tail_frozen: bool,
    pub rto_event_at: Option<SimTime>,
    pub delack_event_at: Option<SimTime>,
    /// `run.join_jitter`: the path manager asked for this subflow, and its MP_JOIN SYN
    /// leaves at this time (a Join timer), not at once.
    pub join_at: Option<SimTime>,
    pub join_event_at: Option<SimTime>,
    /// The pacer holds back data until then (a Pace timer wakes the sender).
    pub pace_deadline: Option<SimTime>,
    pub pace_event_at: Option<SimTime>,
    pub established_at: Option<SimTime>,
    /// What the scheduler sent on this subflow (sends by kind, penalisations).
    pub sched: SchedCounters,
    /// Potentially failed (out-of-tree `tcp_sock.pf`): set by an RTO, cleared by the next
    /// segment that arrives on the subflow. Schedulers see such a subflow as unusable.
    /// The upstream stack sets it for a stale subflow (`mptcp_subflow_context.stale`,
    /// also cleared by the next ACK) and never at an RTO.
    pub pf: bool,
    /// Last reported status (see `SubflowStatus`).
    pub status: SubflowStatus,
    /// The scheduler's own status for this subflow (`StatusNote`), if any.
    pub sched_status: Option<&'static str>,
    /// Its data packets dropped in the network (the engine counts them).
    pub drops: NetDrops,
    /// Its SRTT at the connection's delay samples (τ_i of seed 002 Sec. IV).
    pub tau: TauStats,
    /// Upstream stack: stale state and send buffer (`Stack::Upstream` only).
    pub up: SubflowUp,
    /// `tcp.receive_memory = "skb"`: skbs the subflow received and the MPTCP socket has
    /// not pulled yet, in subflow sequence order, and their truesize (its `sk_rmem_alloc`).
    pub held: VecDeque<HeldSkb>,
    pub held_mem: u64,
}

/// Data packets of one subflow dropped in the network, by cause: the ground truth a
/// sender only infers (reference `metrics.md` §6.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetDrops {
    /// DropTail overflow.
    pub queue: u64,
    /// The link's random loss model.
    pub loss: u64,
    /// The link was down.
    pub down: u64,
}

impl NetDrops {
    pub fn total(&self) -> u64 { self.queue + self.loss + self.down }
}

/// SRTT of a subflow over the delay samples: count, sum and max.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TauStats {
    pub samples: u64,
    pub sum_ms: f64,
    pub max: SimTime,
}

impl Subflow {
    /// The head of the subflow's send queue leaves it: (dsn, len). Pre-scheduled new data
    /// counts as new when it leaves.
    /// The queue's head: (DSN, length, PSH, whether it ends its skb).
    fn pop_queued(&mut self) -> Option<(u64, u32, bool, bool)> {
        let (dsn, len, new, psh, skb_end) = self.queue.pop_front()?;
        self.queued_bytes -= len as u64;
        // Part of the last skb leaves while the rest waits: the skb was split, and its
        // mapping is frozen (`tail_skb_start`).
        if new && dsn >= self.tail_skb_start && !self.queue.is_empty() {
            self.tail_frozen = true;
        }
        if new {
            self.sched.new_segs += 1;
        }
        Some((dsn, len, psh, skb_end))
    }

    fn new(cfg: &ConnConfig, path: usize, p: &ConnPath, iss: u32) -> Result<Subflow, String> {
        let cc = cc::make(&cfg.cc, &cfg.cc_params).map_err(|e| e.message)?;
        Ok(Subflow {
            path,
            route_fwd: p.route_fwd,
            route_rev: p.route_rev,
            state: SubState::Idle,
            backup: p.backup,
            tx: {
                let mut tx = SubflowTx::new(cfg.tcp, iss, cc, SimTime::ZERO);
                tx.restart_on_entail = cfg.mptcp && cfg.stack == Stack::Upstream;
                tx
            },
            rx: None,
            iss,
            syn_sent_at: SimTime::ZERO,
            syn_retries: 0,
            handshake_deadline: None,
            queue: VecDeque::new(),
            queued_bytes: 0,
            tail_skb_start: u64::MAX,
            tail_skb_len: 0,
            tail_frozen: false,
            rto_event_at: None,
            delack_event_at: None,
            join_at: None,
            join_event_at: None,
            pace_deadline: None,
            pace_event_at: None,
            established_at: None,
            sched: SchedCounters::default(),
            pf: false,
            status: SubflowStatus::Idle,
            sched_status: None,
            drops: NetDrops::default(),
            tau: TauStats::default(),
            up: SubflowUp::default(),
            held: VecDeque::new(),
            held_mem: 0,
        })
    }
}

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
    /// Subflow indices in creation order, and in the kernel's iteration order (newest
    /// first: `mptcp_add_sock` links each new subflow at the head of the list), with the
    /// position of each subflow in the latter (`siblings` follows that order).
    created: Vec<usize>,
    order: Vec<usize>,
    order_pos: Vec<usize>,
    /// Connection-level state of a coupled controller (Linux: the meta socket's CC).
    meta_cc: Cell<[u64; 2]>,
    actions: Vec<Action>,
    pm_actions: Vec<PmAction>,
    /// Scratch: each subflow's segment count when `push` started.
    sent_before: Vec<u64>,
    /// Status changes not yet collected by the engine (`poll_status_changes`).
    status_changes: Vec<StatusChange>,
    /// Scratch: status notes drained from the scheduler.
    notes: Vec<StatusNote>,
    /// Record each executed scheduler action in `sched_trace` (the engine sets this for
    /// traced flows).
    pub trace_sched: bool,
    /// Executed scheduler actions not yet collected by the engine (`poll_sched_trace`).
    sched_trace: Vec<SchedRecord>,
    /// MP_PRIO signals (subflow, backup) not yet collected, for packet captures: Some
    /// only while a capture is attached (`record_prio`).
    prio_signals: Option<Vec<(usize, bool)>>,
    advertised_edge: u64,
    /// `msk->old_wspace`: the window the last ACK announced (edge - DATA_ACK).
    old_wspace: u64,
    /// The application has a timer (a stream); checked first on the hot path.
    app_timer: bool,
    /// The application's timer event, when one is scheduled.
    app_event_at: Option<SimTime>,
    /// Delay samples not yet collected by the engine (`poll_delay_samples`).
    delay_out: Vec<DelaySample>,
    /// Upstream stack: the MPTCP retransmit timer and the path manager's notification.
    pub up: MetaUp,
    /// Scratch: the segments an MPTCP-level retransmission resends.
    rtx_scratch: Vec<(u64, u32)>,
    /// Send-buffer state of each subflow for the scheduler (`SchedView::mem`), kept only
    /// when subflow send buffers are modelled.
    mem: Vec<SubflowMem>,
    /// A timer beyond the subflows' own: the application's (a stream), the MPTCP
    /// retransmit timer (upstream) or a delayed join; checked once on the hot path.
    extra_timers: bool,
    /// The host's jiffy clock: the offset of its ticks in ns (in [0, 4 ms)); None: exact
    /// timers (`set_jiffy_phase`).
    jiffy_phase: Option<u64>,
    /// `run.join_jitter` and its random stream ("conn/<name>/join"): each join waits an
    /// offset drawn uniformly from [0, join_jitter). None: joins leave at once.
    join_jitter: Option<(SimTime, Rng)>,
    /// `tcp.receive_memory = "skb"`: a pull stopped at the gate with in-order data left
    /// in a subflow since the last walk over every subflow. Only then can a walk move
    /// anything (a subflow's data comes into order only by its own arrivals, each
    /// followed by its own pull).
    pull_stopped: bool,
}

/// A timer event at `now`: forget it as scheduled (`poll_timers` may ask again), and take
/// `deadline` when it is due (true).
#[inline]
fn take_due(event_at: &mut Option<SimTime>, deadline: &mut Option<SimTime>, now: SimTime) -> bool {
    if *event_at == Some(now) {
        *event_at = None;
    }
    if deadline.is_some_and(|d| d <= now) {
        *deadline = None;
        return true;
    }
    false
}

/// One data segment at its DATA_ACK (seed 002 Sec. IV, sample k; docs/streaming.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelaySample {
    /// The DATA_ACK instant.
    pub at: SimTime,
    pub dsn: u64,
    pub len: u32,
    /// When the MPTCP level took the segment from the send buffer.
    pub taken_at: SimTime,
    /// The subflow whose copy reached the receiver first.
    pub via: Option<usize>,
    /// θ on that subflow: the copy's sending time − `taken_at` (0 on every other subflow).
    pub theta: SimTime,
    /// τ (SRTT) of that subflow at `at`.
    pub tau_via: SimTime,
    /// Eq. 2 and 7 over the established subflows.
    pub model: PathDelay,
}

impl DelaySample {
    /// The protocol delay measured directly: from the MPTCP level taking the data to its
    /// DATA_ACK (seed 002 Sec. IV.B, first paragraph).
    pub fn measured(&self) -> SimTime { self.at - self.taken_at }
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
        rcv.drop_ofo_beyond_edge = cfg.mptcp && cfg.stack == Stack::Upstream;
        // Auto-tuned: `mptcp_init_sock` starts the send buffer at tcp_wmem[1]. Upstream with
        // a `send_buffer`: `SO_SNDBUF` doubled, counted in `sk_wmem_queued` bytes
        // (`upstream::locked_sndbuf`, `MetaSender::frag_charge`).
        let stack_up = cfg.stack == Stack::Upstream;
        let sndbuf = if cfg.send_buffer_auto {
            up::TCP_WMEM[1]
        } else if stack_up {
            up::locked_sndbuf(cfg.send_buffer)
        } else {
            cfg.send_buffer
        };
        // Linux receive memory: the sender's MPTCP window starts at the SYN-ACK's 65 535 B
        // (`MetaReceiver::handshake_edge`, which `set_skb_memory` set).
        let edge0 = if rcv.skb.is_some() { rcv.edge() } else { rcv.window_edge() };
        let mut snd = MetaSender::new(sndbuf, edge0);
        snd.frag_charge = stack_up;
        snd.fill_window = stack_up;
        let mut up = MetaUp::new(cfg.stack == Stack::Upstream && !cfg.send_buffer_auto);
        // `bbr_sndbuf_expand` provisions 3 x cwnd; other controllers 2.
        up.sndbuf_factor = if cfg.cc == "bbr" || cfg.cc == "coupled_bbr" { 3 } else { 2 };
        up.model_sndbuf = cfg.stack == Stack::Upstream || sched.queues_data();
        let app_timer = matches!(cfg.app, App::Stream(_));
        Ok(Connection {
            id,
            app: cfg.app.clone(),
            advertised_edge: edge0,
            old_wspace: 0,
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
            created: Vec::new(),
            order: (0..routes.len()).collect(),
            order_pos: (0..routes.len()).collect(),
            meta_cc: Cell::new([0; 2]),
            actions: Vec::new(),
            pm_actions: Vec::new(),
            sent_before: Vec::new(),
            status_changes: Vec::new(),
            notes: Vec::new(),
            trace_sched: false,
            prio_signals: None,
            sched_trace: Vec::new(),
            app_timer,
            app_event_at: None,
            delay_out: Vec::new(),
            up,
            rtx_scratch: Vec::new(),
            mem: Vec::new(),
            extra_timers: app_timer || stack_up,
            jiffy_phase: None,
            join_jitter: None,
            pull_stopped: false,
        })
    }

    fn upstream(&self) -> bool { self.cfg.stack == Stack::Upstream }

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

    /// Carry out `PmAction::OpenSubflow`: the path's idle subflow if it has one, else a
    /// new subflow on the same path (another source port, as ndiffports does). At most
    /// `MAX_SUBFLOWS`; a request beyond that is ignored.
    fn open_subflow(&mut self, now: SimTime, path: usize, backup: bool, out: &mut Vec<Packet>) {
        let Some(p) = self.paths.get(path) else { return };
        let i = match self.subflows.iter().position(|s| s.path == path && s.state == SubState::Idle) {
            Some(i) => i,
            None if self.subflows.len() < MAX_SUBFLOWS => {
                let iss = self.iss.next_u64() as u32;
                // The controller was built from the same name and options in `new`.
                let Ok(s) = Subflow::new(&self.cfg, path, p, iss) else { return };
                self.subflows.push(s);
                self.order_pos.push(0);
                self.subflows.len() - 1
            }
            None => return,
        };
        self.subflows[i].backup = backup;
        if let Some((jitter, rng)) = self.join_jitter.as_mut() {
            let at = now + SimTime(rng.below(jitter.ns()));
            if at > now {
                self.subflows[i].join_at = Some(at);
                return;
            }
        }
        self.send_syn(now, i, out);
    }

    /// Carry out `PmAction::SetBackup` (MP_PRIO): the open subflows on `path` change
    /// their backup flag; later subflows on the path still take the flag they are opened with.
    fn set_backup(&mut self, now: SimTime, path: usize, backup: bool) {
        let Some(i) = self.subflows.iter().position(|s| s.path == path && s.state != SubState::Idle) else { return };
        for (k, s) in self.subflows.iter_mut().enumerate().filter(|(_, s)| s.path == path && s.state != SubState::Idle) {
            s.backup = backup;
            if let Some(v) = self.prio_signals.as_mut() {
                v.push((k, backup));
            }
        }
        self.update_status(now, i, "mp_prio");
    }

    /// When the path manager wants `handle_pm_timeout`.
    pub fn poll_pm_timeout(&self) -> Option<SimTime> { if self.cfg.mptcp { self.pm.poll_timeout() } else { None } }

    /// The path manager's timer: carry out its actions, then send what the change allows.
    pub fn handle_pm_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut acts = std::mem::take(&mut self.pm_actions);
        acts.clear();
        self.pm.handle_timeout(now, &mut acts);
        for a in acts.drain(..) {
            match a {
                PmAction::OpenSubflow { path, backup } => self.open_subflow(now, path, backup, out),
                PmAction::SetBackup { path, backup } => self.set_backup(now, path, backup),
            }
        }
        self.pm_actions = acts;
        if self.started {
            self.push(now, out);
        }
    }

    fn data_header(&self) -> u32 {
        TCP_HEADER_BYTES
            + match (self.cfg.mptcp, self.cfg.stack) {
                (false, _) => 0,
                (true, Stack::OutOfTree) => DSS_BYTES,
                (true, Stack::Upstream) => up::DSS_OPTION_BYTES,
            }
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.started = true;
        let p = self.cfg.initial_path;
        self.send_syn(now, p, out);
    }

    fn send_syn(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        if !self.created.contains(&i) {
            self.created.push(i);
            let rest = (0..self.subflows.len()).filter(|j| !self.created.contains(j));
            // Upstream links each subflow at the tail of `conn_list` (oldest first).
            self.order = if self.upstream() { self.created.iter().copied().chain(rest).collect() } else { self.created.iter().rev().copied().chain(rest).collect() };
            for (pos, &j) in self.order.iter().enumerate() {
                self.order_pos[j] = pos;
            }
            if self.up.model_sndbuf {
                // A new socket's sk_sndbuf is tcp_wmem[1], or the locked SO_SNDBUF
                // (doubled, and copied to subflows by `sync_socket_options`).
                self.subflows[i].up.sndbuf = if self.up.sndbuf_locked { 2 * self.cfg.send_buffer } else { up::TCP_WMEM[1] };
                self.sync_sndbuf();
            }
        }
        let s = &mut self.subflows[i];
        s.state = SubState::SynSent;
        s.syn_sent_at = now;
        // SYN timeout: 1 s, doubled per retry (RFC 6298 §2.1, Linux TCP_TIMEOUT_INIT).
        s.handshake_deadline = Some(now + SimTime::from_secs(1u64 << s.syn_retries.min(6)));
        let mut p = Packet::new(PacketKind::Syn, self.id, i as u16, s.route_fwd, SYN_BYTES);
        p.seq = s.iss;
        p.ts = now;
        out.push(p);
        self.update_status(now, i, "opened");
    }

    /// Recompute every subflow's status after subflow `cause` changed, and log the
    /// changes (MPTCP connections only). A backup's status depends on the others, so a
    /// change of one subflow can move several.
    fn update_status(&mut self, now: SimTime, cause: usize, reason: &'static str) {
        let any_active = self.any_active();
        for i in 0..self.subflows.len() {
            let to = Self::status_of(&self.subflows[i], any_active);
            let why = if i == cause {
                reason
            } else if to == SubflowStatus::Backup {
                "no_active_usable"
            } else {
                "active_usable"
            };
            self.set_status(now, i, to, why);
        }
    }

    /// Some subflow carries data as an active (non-backup, working) subflow.
    fn any_active(&self) -> bool { self.subflows.iter().any(|s| s.state == SubState::Established && !s.pf && !s.backup) }

    /// Record subflow `i`'s new status, logging a change (MPTCP connections only).
    fn set_status(&mut self, now: SimTime, i: usize, to: SubflowStatus, reason: &'static str) {
        let s = &mut self.subflows[i];
        if to == s.status {
            return;
        }
        if self.cfg.mptcp {
            self.status_changes.push(StatusChange { at: now, subflow: i, path: s.path, from: s.status, to, reason });
        }
        s.status = to;
    }

    /// What the event log reports for `s`: its own status, or the scheduler's on top of
    /// `Active`.
    fn status_of(s: &Subflow, any_active: bool) -> SubflowStatus {
        let base = match s.state {
            SubState::Idle => SubflowStatus::Idle,
            SubState::SynSent | SubState::PreEstablished => SubflowStatus::Opening,
            SubState::Established if s.pf => SubflowStatus::Failed,
            SubState::Established if !s.backup => SubflowStatus::Active,
            SubState::Established if any_active => SubflowStatus::Standby,
            SubState::Established => SubflowStatus::Backup,
        };
        match (base, s.sched_status) {
            (SubflowStatus::Active, Some(n)) => SubflowStatus::Sched(n),
            (b, _) => b,
        }
    }

    /// Apply the scheduler's status notes of one decision and log the net change of each
    /// subflow they name (a note undone within the decision logs nothing). A scheduler's
    /// status does not change which subflows are active, so no other subflow moves.
    fn apply_status_notes(&mut self, now: SimTime) {
        let mut notes = std::mem::take(&mut self.notes);
        for n in notes.iter() {
            if let Some(s) = self.subflows.get_mut(n.subflow) {
                s.sched_status = n.status;
            }
        }
        let any_active = self.any_active();
        for (k, n) in notes.iter().enumerate() {
            // Once per subflow, with the reason of its last note.
            if n.subflow >= self.subflows.len() || notes[k + 1..].iter().any(|m| m.subflow == n.subflow) {
                continue;
            }
            let to = Self::status_of(&self.subflows[n.subflow], any_active);
            self.set_status(now, n.subflow, to, n.reason);
        }
        notes.clear();
        self.notes = notes;
    }

    /// Executed scheduler actions since the last call, oldest first (empty unless
    /// `trace_sched`).
    pub fn poll_sched_trace(&mut self) -> std::vec::Drain<'_, SchedRecord> { self.sched_trace.drain(..) }

    fn record_sched(&mut self, now: SimTime, sub: usize, kind: &'static str, dsn: u64, len: u32) {
        if self.trace_sched {
            let v = self.views.get(sub).copied().unwrap_or_default();
            self.sched_trace.push(SchedRecord { at: now, subflow: sub, kind, dsn, len, cwnd: v.cwnd, in_flight: v.in_flight });
        }
    }

    /// Keep the MP_PRIO signals (`poll_prio_signals`): on while a packet capture is attached.
    pub fn record_prio(&mut self, on: bool) { self.prio_signals = on.then(Vec::new); }

    /// MP_PRIO signals wait to be collected.
    #[inline]
    pub fn has_prio_signals(&self) -> bool { self.prio_signals.as_ref().is_some_and(|v| !v.is_empty()) }

    /// MP_PRIO signals since the last call (subflow, backup), oldest first.
    pub fn poll_prio_signals(&mut self) -> Vec<(usize, bool)> { self.prio_signals.as_mut().map(std::mem::take).unwrap_or_default() }

    /// Status changes since the last call, oldest first.
    pub fn poll_status_changes(&mut self) -> std::vec::Drain<'_, StatusChange> { self.status_changes.drain(..) }

    /// Status changes wait to be collected.
    #[inline]
    pub(crate) fn has_status_changes(&self) -> bool { !self.status_changes.is_empty() }

    fn ctl(&self, kind: PacketKind, i: usize, forward: bool, now: SimTime) -> Packet {
        let s = &self.subflows[i];
        let mut p = Packet::new(kind, self.id, i as u16, if forward { s.route_fwd } else { s.route_rev }, TCP_HEADER_BYTES + 12);
        p.ts = now;
        p
    }

    /// A packet for this connection reached its destination end.
    #[inline]
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
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
                if self.upstream() {
                    self.sync_sndbuf();
                }
                // The out-of-tree path managers start at the SYN-ACK; upstream waits until
                // the connection is fully established (`on_ack`).
                if initial && self.cfg.mptcp && !self.upstream() {
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

    /// Tell the path manager the connection is established (the initial subflow is `i`)
    /// and carry out what it asks.
    fn pm_established(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        let backup: Vec<bool> = self.paths.iter().map(|p| p.backup).collect();
        let mut acts = std::mem::take(&mut self.pm_actions);
        acts.clear();
        self.pm.on_established(self.paths.len(), self.subflows[i].path, &backup, &mut acts);
        for a in acts.drain(..) {
            match a {
                PmAction::OpenSubflow { path, backup } => self.open_subflow(now, path, backup, out),
                PmAction::SetBackup { path, backup } => self.set_backup(now, path, backup),
            }
        }
        self.pm_actions = acts;
    }

    /// Upstream `__mptcp_sync_sndbuf`: without `SO_SNDBUF` the connection's send buffer
    /// is tcp_wmem[0] plus every subflow's `sk_sndbuf`.
    fn sync_sndbuf(&mut self) {
        if self.cfg.send_buffer_auto {
            self.snd.sndbuf = up::TCP_WMEM[0] + self.subflows.iter().filter(|s| s.state != SubState::Idle).map(|s| s.up.sndbuf).sum::<u64>();
        }
    }

    fn on_data(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        if self.rcv.skb.is_some() {
            return self.on_data_skb(now, pkt, out);
        }
        let i = pkt.sub as usize;
        let Some(rx) = self.subflows[i].rx.as_mut() else { return };
        let o = rx.on_segment(now, pkt.seq, pkt.len);
        if o.new {
            if self.cfg.delay_samples {
                // Sender and receiver live in this one value: the first copy to arrive is
                // the one that carried the data (pkt.ts = its sending time).
                self.snd.note_arrival(pkt.dsn, i, pkt.ts);
            }
            self.rcv.on_data(pkt.dsn, pkt.len);
            if self.cfg.read_rate.is_none() {
                let n = self.rcv.unread;
                self.rcv.read(n);
            }
            self.after_delivery(now);
        }
        self.ack_as_decided(now, i, o.ack, out);
    }

    /// ACK now, or arm the delayed-ACK timer if it is not armed yet.
    #[inline(always)]
    fn ack_as_decided(&mut self, now: SimTime, i: usize, ack: AckDecision, out: &mut Vec<Packet>) {
        match ack {
            AckDecision::Now => self.send_ack(now, i, out),
            AckDecision::Delay(d) => {
                let rx = self.subflows[i].rx.as_mut().unwrap_or_else(|| unreachable!());
                match rx.delack_deadline {
                    None => rx.delack_deadline = Some(d),
                    Some(armed) => match rx.rearm_delack(now, armed, d) {
                        Some(k) => rx.delack_deadline = Some(k),
                        None => self.send_ack(now, i, out),
                    },
                }
            }
        }
    }

    /// `tcp.receive_memory = "skb"` (mptcp/rcvmem.rs): the subflow admits the segment or
    /// drops it (M7), holds it, the MPTCP socket pulls what it may (M3, `mptcp_data_ready`)
    /// and the reader drains what is in order, pulling again (M4, `mptcp_recvmsg`).
    #[inline(never)]
    fn on_data_skb(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.sub as usize;
        let b = self.rcv.rcvbuf;
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_mut() else { return };
        if after(pkt.seq.wrapping_add(pkt.len), rx.rcv_nxt) {
            let in_sequence = !after(pkt.seq, rx.rcv_nxt);
            let waiting = s.held.front().is_some_and(|h| before(h.seq, rx.rcv_nxt));
            match rcvmem::admission(s.held_mem, b, in_sequence, waiting) {
                Admission::Take => {}
                Admission::DropInSequence => {
                    self.stats.rcvq_drops += 1;
                    return self.send_ack(now, i, out);
                }
                Admission::DropOutOfOrder => {
                    self.stats.ofo_drops += 1;
                    return;
                }
            }
        }
        if after(pkt.seq.wrapping_add(pkt.len), rx.rcv_nxt) {
            rx.grow_window(pkt.len, !after(pkt.seq, rx.rcv_nxt), s.held_mem + rcvmem::truesize(pkt.len) as u64);
        }
        let o = rx.on_segment_psh(now, pkt.seq, pkt.len, pkt.psh);
        if o.new {
            let (truesize, cap) = rcvmem::skb_size(pkt.len);
            let pos = s.held.iter().rposition(|h| before(h.seq, pkt.seq)).map_or(0, |p| p + 1);
            s.held.insert(pos, HeldSkb { seq: pkt.seq, len: pkt.len, dsn: pkt.dsn, truesize, cap });
            s.held_mem += truesize as u64;
            if self.cfg.delay_samples {
                self.snd.note_arrival(pkt.dsn, i, pkt.ts);
            }
        }
        // `tcp_data_queue` -> `tcp_data_ready` -> `mptcp_data_ready` moves the skb into the
        // MPTCP socket and wakes the reader.
        self.pull(i);
        let upstream = self.upstream();
        if upstream {
            // Linux 6.x: `tcp_ack_snd_check` runs next in the same softirq, before the woken
            // reader, so an immediate ACK's window counts the segment unread. Two segments
            // are ACKed then only if "the right edge of window advances far enough"
            // (`__tcp_ack_snd_check`: `rcv_nxt - copied_seq < sk_rcvlowat ||
            // __tcp_select_window(sk) >= tp->rcv_wnd`; a subflow's sk_rcvlowat is 0,
            // `mptcp_sockopt_sync_locked`, so only the window test counts); else the ACK
            // is delayed and the reader's `mptcp_cleanup_rbuf` sends it after the read.
            // Traced: docs/kernel.md, "Who sends the receiver's ACKs".
            // But `subflow_data_ready` (net/mptcp/subflow.c) first mandates an immediate
            // ACK (ICSK_ACK_NOW) when the MPTCP socket has nothing to read after the move
            // (`mptcp_data_avail(msk) < sk_rcvlowat`, out of order at the MPTCP level) and
            // more than rcv_mss is unacknowledged.
            let mut ack = o.ack;
            if o.window_test && self.rcv.unread > 0 {
                let l = self.subflows[i].rx.as_ref().and_then(|rx| rx.linux.as_ref());
                if let Some((cap, rcv_wnd)) = l.map(|l| (l.rcv_ssthresh, l.rcv_wnd)) {
                    if self.rcv.window_capped(cap) < rcv_wnd {
                        ack = AckDecision::Delay(o.delay_at);
                    }
                }
            }
            self.ack_as_decided(now, i, ack, out);
            // Then the woken reader, ending with `mptcp_cleanup_rbuf`.
            let copied = self.reader_reads(now);
            return self.cleanup_rbuf(now, copied, out);
        }
        // Not upstream: the read, then the segment's ACK as `__tcp_ack_snd_check` decided
        // it, then the reader's cleanup.
        let copied = self.reader_reads(now);
        self.ack_as_decided(now, i, o.ack, out);
        self.cleanup_rbuf(now, copied, out);
    }

    /// The woken reader's `mptcp_recvmsg` up to its cleanup: it reads what is in order
    /// and pulls. Returns the bytes copied.
    fn reader_reads(&mut self, now: SimTime) -> u64 {
        let read_before = self.rcv.read_total;
        self.read_and_pull();
        self.after_delivery(now);
        if let Some(m) = &self.rcv.skb {
            self.stats.rcv_rmem_max = self.stats.rcv_rmem_max.max(m.rmem);
        }
        if self.stats.rcv_stalled_at.is_none() && self.rcv.over() && self.rcv.unread == 0 {
            self.stats.rcv_stalled_at = Some(now);
        }
        self.rcv.read_total - read_before
    }

    /// Linux 6.x after the reader copied `copied` bytes (`mptcp_recvmsg` ->
    /// `mptcp_cleanup_rbuf`, net/mptcp/protocol.c): when the MPTCP socket's free space
    /// (`__mptcp_space`) is at least twice the window announced last (`old_wspace`),
    /// every subflow looks at its window; otherwise only a subflow with an ACK scheduled
    /// and more than rcv_mss unacknowledged, or a pushed segment while the MPTCP socket
    /// holds nothing (`mptcp_subflow_could_cleanup`). Each runs `__tcp_cleanup_rbuf`
    /// (net/ipv4/tcp.c): ACK when the scheduled ACK covers more than rcv_mss, or covers a
    /// pushed segment and the subflow holds nothing more; else when the window it would
    /// offer is at least twice what it offers now, and that is at most half its clamp.
    fn cleanup_rbuf(&mut self, now: SimTime, copied: u64, out: &mut Vec<Packet>) {
        if copied == 0 {
            return;
        }
        let Some((space, rx_empty, new_window)) = self.rcv.skb.as_ref().map(|m| (m.space(), m.rmem == 0, m.window())) else { return };
        let cleanup = space > 0 && space >= 2 * self.old_wspace;
        for j in 0..self.subflows.len() {
            let s = &self.subflows[j];
            if s.state != SubState::Established {
                continue;
            }
            let Some(rx) = s.rx.as_ref() else { continue };
            let Some(l) = rx.linux.as_ref() else { continue };
            let scheduled = rx.delack_deadline.is_some();
            let unacked = rx.rcv_nxt.wrapping_sub(rx.rcv_wup);
            let past_mss = unacked > l.rcv_mss;
            if !cleanup && !(scheduled && (past_mss || (rx_empty && l.pushed != 0))) {
                continue;
            }
            // The receiver sends no data: never in ping-pong mode.
            let mut ack = scheduled && (past_mss || (l.pushed != 0 && s.held_mem == 0));
            if !ack {
                let now_win = l.rcv_wnd.saturating_sub(unacked as u64);
                ack = 2 * now_win <= l.window_clamp() && new_window > 0 && new_window >= 2 * now_win;
            }
            if ack {
                self.send_ack(now, j, out);
            }
        }
    }

    /// The MPTCP socket takes subflow `i`'s in-order skbs until its memory is over its
    /// buffer (`__mptcp_move_skbs_from_subflow`: the test comes before each skb, so the
    /// skb that fills the hole waits like any other). Returns whether it took any.
    fn pull(&mut self, i: usize) -> bool {
        let mut moved = false;
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_ref() else { return false };
        while let Some(&h) = s.held.front() {
            if !before(h.seq, rx.rcv_nxt) {
                break;
            }
            if self.rcv.over() {
                self.pull_stopped = true;
                break;
            }
            s.held.pop_front();
            s.held_mem -= h.truesize as u64;
            self.rcv.take_skb(h.dsn, h.len, h.truesize, h.cap);
            moved = true;
        }
        moved
    }

    /// A reader that reads at once (no `read_rate`) drains the in-order data, then
    /// `__mptcp_move_skbs` walks every subflow, until nothing moves (no walk when no
    /// pull was stopped: it would find nothing).
    fn read_and_pull(&mut self) {
        loop {
            if self.cfg.read_rate.is_none() {
                let n = self.rcv.unread;
                self.rcv.read(n);
            }
            if !self.pull_stopped {
                break;
            }
            self.pull_stopped = false;
            let mut moved = false;
            for j in 0..self.subflows.len() {
                moved |= self.pull(j);
            }
            if !moved {
                break;
            }
        }
    }

    /// Bookkeeping after data reached the application's queue.
    #[inline(always)]
    fn after_delivery(&mut self, now: SimTime) {
        self.note_app_progress(now);
        self.stats.ooo_max_bytes = self.stats.ooo_max_bytes.max(self.rcv.ooo_bytes);
        self.stats.rcvbuf_max_bytes = self.stats.rcvbuf_max_bytes.max(self.rcv.occupancy());
        if self.completed_at.is_none() {
            if let Some(t) = self.app.total() {
                if self.rcv.read_total >= t {
                    self.completed_at = Some(now);
                }
            }
        }
    }

    fn send_ack(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        // Linux receive memory: the subflow's header window stops at its rcv_ssthresh
        // (`__tcp_select_window`), which grows by `tcp_grow_window` per data segment; the
        // MPTCP edge this ACK announces is DATA_ACK + that window unless it was further.
        let cap = self.subflows[i].rx.as_ref().and_then(|rx| rx.linux.as_ref()).map_or(u64::MAX, |l| l.rcv_ssthresh);
        let edge = self.rcv.window_edge_capped(cap);
        self.advertised_edge = edge;
        let data_ack = self.rcv.rcv_nxt;
        self.old_wspace = edge.saturating_sub(data_ack);
        let s = &mut self.subflows[i];
        let Some(rx) = s.rx.as_mut() else { return };
        let mut p = Packet::new(PacketKind::Ack, self.id, i as u16, s.route_rev, 0);
        p.ack = rx.rcv_nxt;
        p.n_sack = rx.sack_blocks(&mut p.sack);
        if self.cfg.mptcp && self.cfg.stack == Stack::Upstream {
            // `tcp_established_options` gives MPTCP's options precedence and fits SACK
            // blocks into what the 40 option bytes leave after the timestamps (12) and the
            // DSS with a 64-bit DATA_ACK (12): one block, the most recent. (The kernel
            // backend's captures: 66 027 server ACKs in seven traced runs, every one with a
            // 44-byte TCP header, i.e. timestamps + that 12-byte DSS.)
            p.n_sack = p.n_sack.min(up::MAX_SACK_BLOCKS);
        }
        p.data_ack = data_ack;
        p.rwnd_edge = edge;
        p.ts = now;
        rx.on_ack_sent();
        // `__tcp_select_window` (mptcp_space) with less than half the window free ends
        // the quick ACKs.
        if self.rcv.skb.as_ref().is_some_and(|m| m.below_half()) {
            rx.end_quickack();
        }
        if let Some(l) = rx.linux.as_mut() {
            l.rcv_wnd = edge.saturating_sub(data_ack);
        }
        p.wire_bytes = TCP_HEADER_BYTES + if self.cfg.mptcp { 12 } else { 0 } + if p.n_sack > 0 { 2 + 8 * p.n_sack as u32 } else { 0 };
        self.stats.acks_sent += 1;
        out.push(p);
    }

    fn on_ack(&mut self, now: SimTime, pkt: &Packet, out: &mut Vec<Packet>) {
        let i = pkt.sub as usize;
        if self.subflows[i].state != SubState::Established {
            return;
        }
        if self.subflows[i].pf {
            // v0.95 `mptcp_data_ack`: "A valid packet came in - subflow is operational
            // again" (`tp->pf = 0` on every segment the subflow receives).
            self.subflows[i].pf = false;
            self.update_status(now, i, "ack_received");
        }
        // (`model_sndbuf` is set whenever the stack is upstream: one test on the common path.)
        let upstream = self.up.model_sndbuf && self.upstream();
        if upstream {
            // tcp_ack stamps rcv_tstamp. (A stale subflow with a new rcv_tstamp is active
            // again, `mptcp_subflow_active`: the `pf` reset above.)
            self.subflows[i].up.rcv_tstamp = now;
        }
        let res = self.with_coupling(i, |tx, c| tx.on_ack(now, pkt.ack, pkt.sack_blocks(), c));
        // The subflow keeps the window its own ACKs advertise (Linux
        // tcp_ack_update_window on the subflow: only an ACK that advances snd_una, or a
        // larger window, updates it).
        // Linux 6.x `tcp_may_update_window` also takes a zero window (`|| !nwin`).
        let nwin = pkt.rwnd_edge.saturating_sub(pkt.data_ack);
        let up_stack = self.upstream();
        let s = &mut self.subflows[i];
        let tx = &mut s.tx;
        if res.snd_una_advanced || nwin > tx.snd_wnd || (up_stack && nwin == 0) {
            let changed = tx.snd_wnd != nwin;
            tx.snd_wnd = nwin;
            tx.max_window = tx.max_window.max(nwin);
            if changed && tx.restart_on_entail && !res.snd_una_advanced && !s.queue.is_empty() {
                tx.idle_restart_check(now);
            }
        }
        if self.cfg.delay_samples && pkt.data_ack > self.snd.data_una {
            self.record_delay_samples(now, pkt.data_ack);
        }
        // Upstream `ack_update_msk` (options.c): the MPTCP window ends at the new DATA_ACK
        // plus the subflow's `snd_wnd` as `tcp_ack` left it, which ignored a smaller
        // window on an ACK that did not advance the subflow's snd_una: after such an ACK
        // the end lies past the receiver's edge by the DATA_ACK's advance, and what is
        // sent there is dropped (`MetaReceiver::drop_ofo_beyond_edge`).
        let edge = if up_stack { pkt.data_ack.saturating_add(self.subflows[i].tx.snd_wnd) } else { pkt.rwnd_edge };
        let acked = self.snd.on_data_ack(pkt.data_ack, edge);
        if upstream {
            self.on_ack_upstream(now, i, acked, out);
        }
        self.push(now, out);
        if self.up.model_sndbuf {
            self.expand_sndbuf(i);
        }
    }

    /// Upstream, on an ACK of subflow `i` that DATA_ACKed `acked` bytes:
    /// `__mptcp_clean_una` stops the MPTCP retransmit timer when everything written is
    /// DATA_ACKed and restarts it otherwise; the first ACK on the initial subflow makes
    /// the connection fully established (options.c `check_fully_established`: any ACK
    /// carrying a DATA_ACK), which starts the path manager (`mptcp_pm_fully_established`).
    fn on_ack_upstream(&mut self, now: SimTime, i: usize, acked: u64, out: &mut Vec<Packet>) {
        if acked > 0 {
            if self.snd.data_una == self.snd.dsn_nxt && self.snd.data_una == self.snd.written {
                self.up.rtx_deadline = None;
            } else {
                self.up.reset_timer(now);
            }
        }
        if !self.up.pm_notified && i == self.cfg.initial_path && self.cfg.mptcp {
            self.up.pm_notified = true;
            self.pm_established(now, i, out);
        }
    }

    /// Upstream `tcp_check_space` -> `tcp_new_space` after an ACK on subflow `i`: while
    /// the application waits for send-buffer space (`SOCK_NOSPACE` on the socket the
    /// subflows share) and the subflow's cwnd is not full (`tcp_should_expand_sndbuf`),
    /// `tcp_sndbuf_expand`; the connection's buffer follows (`__mptcp_sync_sndbuf`).
    fn expand_sndbuf(&mut self, i: usize) {
        if self.up.sndbuf_locked || !self.app_blocked() {
            return;
        }
        let t = &self.subflows[i].tx;
        if t.in_flight() >= t.st.cwnd {
            return;
        }
        let want = up::sndbuf_expand(t.cfg.mss, t.st.cwnd, self.up.sndbuf_factor);
        if want > self.subflows[i].up.sndbuf {
            self.subflows[i].up.sndbuf = want;
            self.sync_sndbuf();
        }
    }

    /// Run `f` on subflow `i`'s sender with the `Coupling` view its controller needs
    /// (the sibling snapshots are refreshed only for coupled controllers).
    fn with_coupling<R>(&mut self, i: usize, f: impl FnOnce(&mut SubflowTx, &Coupling) -> R) -> R {
        let needs = self.subflows[i].tx.cc.needs_coupling();
        if needs {
            self.refresh_siblings();
        }
        let coupling = if needs { Coupling { me: self.order_pos[i], subflows: &self.siblings, meta: self.cfg.mptcp.then_some(&self.meta_cc) } } else { Coupling::alone() };
        f(&mut self.subflows[i].tx, &coupling)
    }

    fn refresh_siblings(&mut self) {
        self.siblings.clear();
        for s in self.order.iter().map(|&j| &self.subflows[j]) {
            let t = &s.tx;
            self.siblings.push(SiblingView {
                cwnd: t.st.cwnd,
                ssthresh: t.st.ssthresh,
                srtt: t.st.srtt,
                min_rtt: t.st.min_rtt,
                in_flight: t.in_flight(),
                mss: t.cfg.mss,
                established: s.state == SubState::Established,
                in_slow_start: t.st.in_slow_start(),
                ca_state: t.st.ca_state,
                vars: t.cc.export(),
            });
        }
    }

    /// A timer of subflow `i` may have expired.
    #[inline]
    pub fn on_timer(&mut self, now: SimTime, i: usize, kind: TimerKind, out: &mut Vec<Packet>) {
        match kind {
            TimerKind::Rto => {
                let s = &mut self.subflows[i];
                if s.rto_event_at == Some(now) {
                    s.rto_event_at = None;
                }
                match s.state {
                    SubState::SynSent | SubState::PreEstablished => {
                        if s.handshake_deadline.is_some_and(|d| d <= now) {
                            s.syn_retries += 1;
                            if s.state == SubState::SynSent {
                                self.send_syn(now, i, out);
                            } else {
                                let s = &mut self.subflows[i];
                                s.tx.rto = s.tx.rto.mul(2).min(crate::tcp::rtt::RTO_MAX);
                                s.handshake_deadline = Some(now + s.tx.rto);
                                let p = self.ctl(PacketKind::HandshakeAck, i, true, now);
                                out.push(p);
                            }
                        }
                    }
                    SubState::Established => {
                        let due = s.tx.rto_deadline.is_some_and(|d| d <= now);
                        match if due { self.with_coupling(i, |tx, c| tx.on_xmit_timer(now, c)) } else { TimerOutcome::Nothing } {
                            TimerOutcome::Rto => {
                                // Upstream does nothing at the MPTCP level on a subflow RTO: its
                                // own retransmit timer and stale subflows take over.
                                if self.cfg.mptcp && !self.upstream() {
                                    self.on_subflow_rto(now, i);
                                }
                                self.push(now, out);
                            }
                            // RACK marked segments lost: retransmit them.
                            TimerOutcome::Reo => self.push(now, out),
                            TimerOutcome::Probe => self.send_loss_probe(now, i, out),
                            TimerOutcome::Nothing => {}
                        }
                    }
                    SubState::Idle => {}
                }
            }
            TimerKind::DelAck => {
                let s = &mut self.subflows[i];
                if s.delack_event_at == Some(now) {
                    s.delack_event_at = None;
                }
                if s.rx.as_ref().and_then(|r| r.delack_deadline).is_some_and(|d| d <= now) {
                    if let Some(rx) = s.rx.as_mut() {
                        rx.delack_fired();
                    }
                    self.send_ack(now, i, out);
                }
            }
            TimerKind::Pace => {
                let s = &mut self.subflows[i];
                if take_due(&mut s.pace_event_at, &mut s.pace_deadline, now) {
                    self.push(now, out);
                }
            }
            TimerKind::App => {
                if self.app_event_at == Some(now) {
                    self.app_event_at = None;
                }
                if self.app.poll_timeout().is_some_and(|d| d <= now) {
                    self.app.handle_timeout(now);
                    self.push(now, out);
                }
            }
            TimerKind::Join => {
                let s = &mut self.subflows[i];
                if take_due(&mut s.join_event_at, &mut s.join_at, now) && s.state == SubState::Idle {
                    self.send_syn(now, i, out);
                }
            }
            TimerKind::MetaRtx => {
                if take_due(&mut self.up.rtx_event_at, &mut self.up.rtx_deadline, now) {
                    self.meta_retrans(now, out);
                    self.push(now, out);
                }
            }
        }
    }

    /// The subflow holds data at TCP level (`!tcp_rtx_and_write_queues_empty`).
    fn holds_data(&self, i: usize) -> bool { self.subflows[i].tx.packets_out > 0 || !self.subflows[i].queue.is_empty() }

    /// Upstream `__mptcp_retrans` (protocol.c), run when the MPTCP retransmit timer fires.
    /// `mptcp_subflow_get_retrans` walks the subflows oldest first: one that still holds
    /// data counts a period without progress (`mptcp_pm_subflow_chk_stale`) and is not a
    /// candidate; the first idle non-backup subflow is the choice, an idle backup only if
    /// every busy subflow has gone two periods without an ACK (`min_stale_count > 1`).
    /// The choice gets the oldest un-DATA_ACKed data frag, as far as it was sent
    /// (`dfrag->already_sent`). The timer is re-armed unless there is nothing to send.
    fn meta_retrans(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.stats.meta_rtx_fired += 1;
        let (mut pick, mut backup, mut min_stale) = (None, None, u32::MAX);
        for k in 0..self.order.len() {
            let i = self.order[k];
            // `__mptcp_subflow_active`: established (join complete), stale or not.
            if self.subflows[i].state != SubState::Established {
                continue;
            }
            if self.holds_data(i) {
                let s = &mut self.subflows[i];
                if up::count_stale(&mut s.up, &mut s.pf) {
                    self.chk_stale(now, i, out);
                }
                min_stale = min_stale.min(self.subflows[i].up.stale_count as u32);
                continue;
            }
            if self.subflows[i].backup {
                backup = backup.or(Some(i));
            } else {
                pick = pick.or(Some(i));
            }
        }
        let chosen = pick.or(if min_stale > 1 { backup } else { None });
        let Some(head) = self.snd.segs.front().map(|s| s.dsn) else {
            // Nothing to retransmit: keep the timer only while data waits to be sent.
            if self.snd.unsent() > 0 && self.up.rtx_deadline.is_none() {
                self.up.reset_timer(now);
            }
            return;
        };
        if let Some(c) = chosen {
            // `mptcp_sendmsg_frag` -> `mptcp_check_allowed_size` on the chosen subflow.
            let tx = &mut self.subflows[c].tx;
            tx.snd_wnd = tx.snd_wnd.max(self.snd.rwnd_edge.saturating_sub(head));
            // The head frag's data already handed to subflows: up to the first segment
            // still waiting to be pushed again after a rewind.
            let end = up::dfrag_end(head).min(self.snd.dsn_nxt);
            let mut segs = std::mem::take(&mut self.rtx_scratch);
            segs.clear();
            segs.extend(self.snd.segs.iter().take_while(|s| s.dsn < end && !s.reinject_queued).map(|s| (s.dsn, s.len)));
            for &(d, l) in segs.iter() {
                self.snd.mark_sent_on(d, c);
                let s = &mut self.subflows[c];
                s.queue.push_back((d, l, false, false, false));
                s.queued_bytes += l as u64;
                s.sched.reinjected_segs += 1;
                self.stats.reinjections += 1;
                self.stats.meta_rtx_segs += 1;
            }
            if let (Some(&(d, _)), true) = (segs.first(), self.trace_sched) {
                let len = segs.iter().map(|&(_, l)| l).sum();
                self.record_sched(now, c, "meta_retrans", d, len);
            }
            self.rtx_scratch = segs;
            self.drain(now, c, out);
        }
        if self.up.rtx_deadline.is_none() {
            self.up.reset_timer(now);
        }
        // `mptcp_check_and_set_pending`: with data waiting, the socket's release runs
        // `__mptcp_push_pending`, whose `mptcp_subflow_get_send` recomputes the interval
        // (`mptcp_set_timeout`) with the retransmission's subflow timer now armed, even
        // when the shut window lets nothing out. The deadline just set keeps the old one.
        if self.snd.unsent() > 0 {
            self.set_meta_timeout(now);
        }
    }

    /// `mptcp_pm_subflows_chk_stale` (pm.c) for subflow `i`, past `STALE_LOSS_CNT`
    /// periods without an ACK: if another active subflow has fewer than
    /// `max(STALE_LOSS_CNT − 1, 1)`, mark `i` stale and rewind every un-DATA_ACKed frag
    /// for sending again (`__mptcp_retransmit_pending_data`), then push.
    fn chk_stale(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        let active_max = up::STALE_LOSS_CNT.saturating_sub(1).max(1);
        let alternative = self.order.iter().any(|&j| {
            let t = &self.subflows[j];
            j != i && t.state == SubState::Established && !t.pf && t.up.stale_count < active_max
        });
        if !alternative {
            return;
        }
        if self.holds_data(i) {
            self.subflows[i].pf = true;
            self.stats.stale_marked += 1;
            self.update_status(now, i, "stale");
            self.snd.rewind_all();
        }
        self.push(now, out);
    }

    /// Transmit subflow `i`'s retransmissions and queued data as its cwnd and pacer allow.
    #[inline(always)]
    fn drain(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        // Upstream: the segments of one GSO packet so far, and the most one may hold.
        let up = self.upstream();
        let (mut piece, max_segs) = if up { (0u32, self.subflows[i].tx.tso_segs()) } else { (0, 0) };
        while self.subflows[i].tx.can_send(now) {
            if let Some(idx) = self.subflows[i].tx.next_retransmit() {
                let (seq, len, dsn) = self.subflows[i].tx.retransmit(now, idx);
                self.emit_data(now, i, seq, len, dsn, true, false, out);
            } else if let Some(&(_, len, ..)) = self.subflows[i].queue.front() {
                // Upstream subflows run Nagle (MPTCP pushes with the subflow's `nonagle`,
                // 0 by default: `mptcp_push_release` -> `tcp_push`); the last skb of the
                // write queue is the one it can hold.
                if up && self.subflows[i].queue.len() == 1 && self.subflows[i].tx.nagle_holds(len) {
                    break;
                }
                let Some((dsn, len, marked, skb_end)) = self.subflows[i].pop_queued() else { break };
                let seq = self.subflows[i].tx.send_new(now, len, dsn);
                let psh = if up { self.gso_psh(now, i, &mut piece, max_segs, dsn + len as u64, marked, skb_end) } else { marked };
                self.emit_data(now, i, seq, len, dsn, false, psh, out);
            } else {
                break;
            }
        }
    }

    /// Whether the new segment just sent on subflow `i` (ending at DSN `end`; `marked` by
    /// `tcp_mark_push`; `skb_end`: the last of its skb) leaves with PSH, as Linux 6.x puts
    /// it on the wire. `tcp_write_xmit` takes one skb at a time (`tcp_send_head`) and sends
    /// it in pieces of at most `max_segs` (`tcp_tso_segs`) segments, fewer where the cwnd,
    /// the peer's window or Nagle stops the next segment or the skb ends (its last
    /// segment, the next data another mapping, or a push's marked tail): a GSO packet
    /// never spans two skbs (`tcp_mss_split_point`, `tso_fragment`). `__tcp_transmit_skb` sets
    /// PSH on every piece of more than one segment ("Force a PSH flag on all (GSO)
    /// packets", Linux >= 4.9) and GSO keeps it on the piece's last segment
    /// (`tcp_gso_segment`). A one-segment piece carries the mark of its skb, if any.
    #[allow(clippy::too_many_arguments)]
    fn gso_psh(&self, now: SimTime, i: usize, piece: &mut u32, max_segs: u32, end: u64, marked: bool, skb_end: bool) -> bool {
        *piece += 1;
        let s = &self.subflows[i];
        let ends = marked
            || skb_end
            || *piece >= max_segs
            || !s.tx.can_send(now)
            || match s.queue.front() {
                None => true,
                Some(&(dsn, len, ..)) => {
                    dsn != end || (s.queue.len() == 1 && s.tx.nagle_holds(len))
                }
            };
        if !ends {
            return false;
        }
        let psh = *piece > 1 || marked;
        *piece = 0;
        psh
    }

    /// Linux `tcp_send_loss_probe` on subflow `i`: one new segment of its queue if the
    /// peer's window takes it (past cwnd and Nagle: `tcp_write_xmit(..., TCP_NAGLE_OFF,
    /// push_one = 2)`), else the last segment again.
    fn send_loss_probe(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        let s = &mut self.subflows[i];
        if s.queue.front().is_some_and(|&(_, len, ..)| s.tx.snd_wnd_allows(len)) {
            let Some((dsn, len, psh, _)) = s.pop_queued() else { return };
            let seq = s.tx.probe_new(now, len, dsn);
            self.emit_data(now, i, seq, len, dsn, false, psh, out);
        } else if let Some((seq, len, dsn)) = s.tx.probe_last(now) {
            self.emit_data(now, i, seq, len, dsn, true, false, out);
        }
    }

    /// Execute `Action::Push`: subflow `i` takes up to `bytes` (whole segments) of the
    /// send head, rewound data first, then new data, and sends what its cwnd allows.
    /// Returns whether it took anything.
    fn push_on(&mut self, now: SimTime, i: usize, bytes: u64, out: &mut Vec<Packet>) -> bool {
        if i >= self.subflows.len() || self.subflows[i].state != SubState::Established {
            return false;
        }
        let mss = self.cfg.tcp.mss;
        // `mptcp_check_allowed_size`: a subflow whose `snd_wnd` is below the MPTCP window
        // left at the data's sequence gets that window (MPTCP_MIB_SNDWNDSHARED).
        let at = self.snd.reinject_head().map_or(self.snd.dsn_nxt, |r| r.0);
        // An skb holds at most `size_goal` bytes (`mptcp_sendmsg_frag` copies up to
        // `info->size_goal - skb->len`, then opens another).
        let goal = up::size_goal(self.subflows[i].tx.max_window, mss);
        if self.upstream() {
            // The last push left PSH on the write queue's tail skb (`tcp_push` ->
            // `tcp_mark_push`). `mptcp_sendmsg_frag` appends to that skb only if it has
            // room (`size_goal - skb->len > 0`) and its mapping continues unfrozen
            // (`mptcp_skb_can_collapse_to`); then the mark moves to the new end, set again
            // below. Otherwise it sets `eor`, `tcp_build_frag` opens a new skb and the old
            // one keeps its mark.
            let s = &mut self.subflows[i];
            let (frozen, full) = (s.tail_frozen, s.tail_skb_len >= goal);
            if let Some(back) = s.queue.back_mut() {
                if back.2 && !frozen && !full && back.0 + back.1 as u64 == at {
                    back.3 = false;
                }
            }
        }
        let tx = &mut self.subflows[i].tx;
        tx.snd_wnd = tx.snd_wnd.max(self.snd.rwnd_edge.saturating_sub(at));
        let (mut taken, mut first) = (0u64, None);
        // New data continues the last skb if that skb is unsent, unfrozen and ends where
        // the data starts (`mptcp_skb_can_collapse_to`; a short one grows through
        // `grow_tail`); otherwise the push starts a new skb (`mptcp_alloc_tx_skb`).
        let mut same_skb = {
            let s = &self.subflows[i];
            s.queue.back().is_some_and(|&(d, l, new, ..)| new && !s.tail_frozen && d + l as u64 == self.snd.dsn_nxt)
        };
        let mut opened = 0u32;
        while taken < bytes {
            let (dsn, len, new) = if let Some((d, l, _)) = self.snd.reinject_head() {
                self.snd.reinject.pop_front();
                self.snd.mark_sent_on(d, i);
                self.snd.clear_reinject_flag(d);
                self.subflows[i].sched.reinjected_segs += 1;
                self.stats.reinjections += 1;
                (d, l, false)
            } else if let Some(grown) = self.grow_tail(i, mss, bytes - taken) {
                // Appended to the unsent tail skb: no new queue entry.
                first = first.or(Some(grown.0));
                taken += grown.1 as u64;
                same_skb = true;
                continue;
            } else if let Some(l) = self.snd.next_new_len(mss.min((bytes - taken).min(u32::MAX as u64) as u32)) {
                // The push ends exactly at `bytes` (a data frag's end: `mptcp_sendmsg_frag`
                // copies no further than the frag), so its last skb may be short.
                (self.snd.take_new(l, i, now), l, true)
            } else {
                break;
            };
            first = first.or(Some(dsn));
            let s = &mut self.subflows[i];
            if new {
                if !same_skb || s.tail_skb_len + len as u64 > goal {
                    // The queue's last entry ends its skb.
                    if let Some(back) = s.queue.back_mut() {
                        back.4 = true;
                    }
                    s.tail_skb_start = dsn;
                    s.tail_skb_len = 0;
                    s.tail_frozen = false;
                    opened += 1;
                }
                s.tail_skb_len += len as u64;
            } else {
                // Rewound data continues an skb only where it continues the mapping.
                if let Some(back) = s.queue.back_mut() {
                    if back.2 || back.0 + back.1 as u64 != dsn {
                        back.4 = true;
                    }
                }
                opened += 1;
            }
            same_skb = new;
            s.queue.push_back((dsn, len, new, false, false));
            s.queued_bytes += len as u64;
            taken += len as u64;
        }
        let Some(first) = first else { return false };
        // `mptcp_push_release` -> `tcp_push` -> `tcp_mark_push`: the last skb of the
        // subflow's write queue carries PSH.
        if let Some(back) = self.subflows[i].queue.back_mut() {
            back.3 = true;
        }
        self.record_sched(now, i, "push", first, taken.min(u32::MAX as u64) as u32);
        let tx = &mut self.subflows[i].tx;
        if tx.restart_on_entail {
            for _ in 0..opened {
                if !tx.idle_restart_check(now) {
                    break;
                }
            }
        }
        self.drain(now, i, out);
        true
    }

    /// Upstream `mptcp_sendmsg_frag`: new data pushed to a subflow whose last queued skb is
    /// unsent, continues its mapping, is under the MSS (a segment Nagle holds) and was not
    /// split from a partly sent skb (`tail_frozen`) is appended to that skb
    /// (`mptcp_skb_can_collapse_to`, `tcp_skb_can_collapse_to`).
    /// Returns (the skb's DSN, bytes added).
    fn grow_tail(&mut self, i: usize, mss: u32, limit: u64) -> Option<(u64, u32)> {
        if !self.upstream() {
            return None;
        }
        let &(dsn, len, new, ..) = self.subflows[i].queue.back()?;
        if !new || len >= mss || dsn + len as u64 != self.snd.dsn_nxt || self.subflows[i].tail_frozen {
            return None;
        }
        let add = self.snd.next_new_len((mss - len).min(limit.min(u32::MAX as u64) as u32))?;
        if !self.snd.extend_last(add, i) {
            return None;
        }
        let s = &mut self.subflows[i];
        if let Some(back) = s.queue.back_mut() {
            back.1 += add;
        }
        s.queued_bytes += add as u64;
        s.tail_skb_len += add as u64;
        Some((dsn, add))
    }

    /// One sample per segment that `data_ack` acknowledges in full (seed 002 Sec. IV: a
    /// sample k is a data segment at its DATA_ACK). Per established subflow i, τ_i is its
    /// SRTT now and θ_i the time the data waited at the sender before going out on i:
    /// for the subflow whose copy arrived first, that copy's sending time minus the
    /// moment the MPTCP level took the data; 0 for the others, which hold the data back
    /// only through their SRTT (docs/streaming.md, "Reading θ_i").
    fn record_delay_samples(&mut self, now: SimTime, data_ack: u64) {
        for seg in self.snd.segs.iter() {
            if seg.dsn + seg.len as u64 > data_ack {
                break;
            }
            let via = (seg.via != VIA_NONE).then_some(seg.via as usize);
            let theta = if via.is_some() { seg.via_sent_at.saturating_sub(seg.taken_at) } else { SimTime::ZERO };
            let subs = &self.subflows;
            let established = |s: &Subflow| s.state == SubState::Established && s.tx.st.srtt > SimTime::ZERO;
            let model = path_delay(subs.iter().enumerate().filter(|(_, s)| established(s)).map(|(j, s)| (s.tx.st.srtt, if Some(j) == via { theta } else { SimTime::ZERO })));
            let tau_via = via.and_then(|j| subs.get(j)).map_or(SimTime::ZERO, |s| s.tx.st.srtt);
            self.delay_out.push(DelaySample { at: now, dsn: seg.dsn, len: seg.len, taken_at: seg.taken_at, via, theta, tau_via, model });
            for s in self.subflows.iter_mut().filter(|s| established(s)) {
                let srtt = s.tx.st.srtt;
                s.tau.samples += 1;
                s.tau.sum_ms += srtt.ms_f64();
                s.tau.max = s.tau.max.max(srtt);
            }
        }
    }

    /// Delay samples since the last call, oldest first.
    pub fn poll_delay_samples(&mut self) -> std::vec::Drain<'_, DelaySample> { self.delay_out.drain(..) }

    /// Delay samples wait to be collected.
    #[inline]
    pub fn has_delay_samples(&self) -> bool { !self.delay_out.is_empty() }

    /// Tell the application how far its data has come (a stream logs its frames).
    #[inline]
    fn note_app_progress(&mut self, now: SimTime) {
        self.app.note_progress(now, self.snd.written, self.snd.dsn_nxt, self.snd.data_una, self.rcv.read_total);
    }

    /// v0.95 `mptcp_sub_retransmit_timer`: after the subflow's own RTO handling,
    /// `mptcp_reinject_data(sk, 1)` copies its unacknowledged data, and the data queued
    /// on it but not sent, to the connection's reinjection queue, and sets `pf`. The
    /// schedulers skip a `pf` subflow (`mptcp_is_def_unavailable`), so the other
    /// subflows, backups included, take its data; the subflow itself goes on
    /// retransmitting with exponential backoff, and the first segment that comes back
    /// clears `pf` (see `on_ack`). A subflow is thus "failed" after one RTO. (Upstream
    /// Linux waits for `stale_loss_cnt` = 4 RTOs before it calls a subflow stale.)
    fn on_subflow_rto(&mut self, now: SimTime, i: usize) {
        // With a single subflow there is nowhere else to send it.
        if self.subflows.len() > 1 {
            let s = &self.subflows[i];
            let ranges: Vec<(u64, u32)> = s.tx.unacked_dsn_ranges().chain(s.queue.iter().map(|&(d, l, ..)| (d, l))).collect();
            for (d, l) in ranges {
                self.snd.queue_reinject(d, l);
            }
        }
        if !self.subflows[i].pf {
            self.subflows[i].pf = true;
            self.update_status(now, i, "rto");
        }
    }

    /// The application read `max` bytes; send a window update when the window opened
    /// by at least two segments (Linux `tcp_cleanup_rbuf`), or with Linux receive memory
    /// as `mptcp_cleanup_rbuf` decides (`cleanup_rbuf`).
    pub fn app_read(&mut self, now: SimTime, max: u64, out: &mut Vec<Packet>) {
        let read_before = self.rcv.read_total;
        self.rcv.read(max);
        if self.rcv.skb.is_some() {
            // `mptcp_recvmsg` -> `__mptcp_move_skbs`: reading made room.
            for j in 0..self.subflows.len() {
                self.pull(j);
            }
        }
        self.note_app_progress(now);
        if let Some(t) = self.app.total() {
            if self.completed_at.is_none() && self.rcv.read_total >= t {
                self.completed_at = Some(now);
            }
        }
        if self.rcv.skb.is_some() {
            return self.cleanup_rbuf(now, self.rcv.read_total - read_before, out);
        }
        let edge = self.rcv.window_edge();
        if edge >= self.advertised_edge + 2 * self.cfg.tcp.mss as u64 {
            if let Some(i) = self.subflows.iter().position(|s| s.rx.is_some() && s.state == SubState::Established) {
                self.send_ack(now, i, out);
            }
        }
    }

    /// Deadlines the engine must have events for.
    #[inline]
    pub fn poll_timers(&mut self, reqs: &mut Vec<TimerRequest>) {
        for (i, s) in self.subflows.iter_mut().enumerate() {
            let rto = match s.state {
                SubState::Established => s.tx.rto_deadline,
                SubState::SynSent | SubState::PreEstablished => s.handshake_deadline,
                SubState::Idle => None,
            };
            if let Some(d) = rto {
                if s.rto_event_at.map_or(true, |e| e > d) {
                    s.rto_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::Rto));
                }
            }
            if let Some(d) = s.pace_deadline {
                if s.pace_event_at.map_or(true, |e| e > d) {
                    s.pace_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::Pace));
                }
            }
            if let Some(d) = s.rx.as_ref().and_then(|r| r.delack_deadline) {
                if s.delack_event_at.map_or(true, |e| e > d) {
                    s.delack_event_at = Some(d);
                    reqs.push((d, i as u16, TimerKind::DelAck));
                }
            }
        }
        if !self.extra_timers {
            return;
        }
        if self.join_jitter.is_some() {
            for (i, s) in self.subflows.iter_mut().enumerate() {
                if let Some(d) = s.join_at {
                    if s.join_event_at.map_or(true, |e| e > d) {
                        s.join_event_at = Some(d);
                        reqs.push((d, i as u16, TimerKind::Join));
                    }
                }
            }
        }
        if let Some(d) = self.up.rtx_deadline {
            if self.up.rtx_event_at.map_or(true, |e| e > d) {
                self.up.rtx_event_at = Some(d);
                reqs.push((d, 0, TimerKind::MetaRtx));
            }
        }
        // Only a stream has an application timer.
        if self.app_timer {
            if let Some(d) = self.app.poll_timeout() {
                if self.app_event_at.map_or(true, |e| e > d) {
                    self.app_event_at = Some(d);
                    reqs.push((d, 0, TimerKind::App));
                }
            }
        }
    }

    #[inline]
    fn emit_data(&mut self, now: SimTime, i: usize, seq: u32, len: u32, dsn: u64, retrans: bool, psh: bool, out: &mut Vec<Packet>) {
        let hdr = self.data_header();
        let s = &self.subflows[i];
        let mut p = Packet::new(PacketKind::Data, self.id, i as u16, s.route_fwd, len + hdr);
        p.seq = seq;
        p.len = len;
        p.dsn = dsn;
        p.ts = now;
        p.retrans = retrans;
        p.psh = psh;
        self.stats.data_segs_sent += 1;
        out.push(p);
    }

    /// Snapshot the subflows for the scheduler; `want` is the size of the next segment.
    fn build_views(&mut self, now: SimTime, want: u64) {
        self.views.clear();
        let rates = self.sched.needs_rates();
        let sndbufs = self.up.model_sndbuf;
        for s in self.subflows.iter() {
            let t = &s.tx;
            self.views.push(SubflowView {
                // `mptcp_is_def_unavailable`: not established, pre-established, or pf;
                // upstream `mptcp_subflow_active`: join complete and not stale (= pf).
                established: s.state == SubState::Established && !s.pf,
                backup: s.backup,
                srtt: t.st.srtt,
                rttvar: t.rtt.rttvar(),
                cwnd: t.st.cwnd,
                ssthresh: t.st.ssthresh,
                in_flight: t.in_flight(),
                ca_state: t.st.ca_state,
                mss: t.cfg.mss,
                queued_bytes: s.queued_bytes,
                pacing_ok: t.pacing_ok(now),
                // v0.89 `mptcp_is_available`: write_seq + min(len, mss) must stay within
                // the subflow's own window end, snd_una + snd_wnd (schedulers.md §4.1).
                wnd_ok: t.outstanding_bytes() + s.queued_bytes + want <= t.snd_wnd,
                packets_out: t.packets_out,
                outstanding_bytes: t.outstanding_bytes(),
                // Rate and mode the congestion control measures (AR&P, seed 004 §V).
                // Only for schedulers that read them (`Scheduler::needs_rates`).
                pacing_rate_bps: if rates { t.pacing_rate().map_or(0.0, |r| r.bits_per_sec()) } else { 0.0 },
                sk_pacing_rate: t.sk_pacing_rate,
                bw_bps: match &t.cc {
                    crate::cc::AnyCc::Bbr(b) if rates => b.bw_pps() * t.cfg.mss as f64 * 8.0,
                    _ => 0.0,
                },
                delivery_rate_bps: if rates { t.delivery_rate_bytes_per_sec() * 8.0 } else { 0.0 },
                min_rtt: t.st.min_rtt,
                cc_mode: if rates { t.cc.mode() } else { "" },
            });
        }
        if sndbufs {
            self.mem.clear();
            for s in self.subflows.iter() {
                let t = &s.tx;
                self.mem.push(SubflowMem { wmem_queued: up::wmem_queued(t.outstanding_bytes() + s.queued_bytes, t.packets_out as u64 + s.queue.len() as u64), sndbuf: s.up.sndbuf });
            }
        }
    }

    /// A writer that polls before each write (`Bulk::poll_chunk`, the kernel backend's: a
    /// Python socket with a timeout polls before every `send`). `mptcp_poll` reports the
    /// socket writeable only when `sk_stream_is_writeable` (free >= wmem / 2), and sets
    /// SOCK_NOSPACE when it is not (`mptcp_check_writeable`); a writeable socket's
    /// non-blocking `send` copies the rest of the current chunk as far as the buffer takes
    /// it (`mptcp_sendmsg`). So the writer tops the buffer up one chunk at a time while
    /// it is writeable, and never fills it past the chunk that made it unwriteable.
    fn write_polled(&mut self, now: SimTime, chunk: u64) {
        loop {
            if !self.app.wants_more(self.snd.written) {
                self.snd.nospace = false;
                return;
            }
            let wmem = up::msk_wmem_queued(self.snd.data_una, self.snd.written);
            if !up::msk_writeable(wmem, self.snd.sndbuf) {
                self.snd.nospace = true;
                return;
            }
            self.snd.nospace = false;
            let rest = chunk - self.snd.written % chunk;
            let n = self.app.poll_write(now, self.snd.written, self.snd.free_space().min(rest));
            if n == 0 {
                return;
            }
            self.snd.write(n);
        }
    }

    /// The application waits for send-buffer space (Linux SOCK_NOSPACE). Upstream: set when
    /// the writer finds the buffer full, cleared only when it is writeable again
    /// (`MetaSender::update_nospace`).
    fn app_blocked(&self) -> bool {
        if self.snd.frag_charge {
            return self.snd.nospace;
        }
        self.snd.free_space() == 0 && self.app.wants_more(self.snd.written)
    }

    /// Send what the windows allow: subflow retransmissions, queued data, then what the
    /// scheduler picks.
    pub fn push(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let written_before = self.snd.written;
        if let (true, Some(chunk)) = (self.snd.frag_charge, self.app.poll_chunk()) {
            // The kernel's order: the ACK that frees buffer space pushes what is already
            // written (`__mptcp_data_acked` -> `__mptcp_check_push`, softirq); the writer it
            // wakes (`sk_stream_write_space`) writes afterwards, in process context, and its
            // `mptcp_sendmsg` pushes again.
            self.push_written(now, written_before, out);
            self.write_polled(now, chunk);
            if self.snd.written > written_before {
                self.push_written(now, written_before, out);
            }
            return;
        }
        if self.snd.frag_charge {
            // Wake a sleeping writer if the buffer is writeable again (`sk_stream_write_space`).
            self.snd.update_nospace(self.app.wants_more(self.snd.written));
        }
        let n = self.app.poll_write(now, self.snd.written, self.snd.free_space());
        self.snd.write(n);
        if self.snd.frag_charge {
            self.snd.update_nospace(self.app.wants_more(self.snd.written));
        }
        self.push_written(now, written_before, out);
    }

    /// The part of `push` after the application's write: send what is written and what the
    /// windows allow. `written_before`: the stream's length before this push's write.
    fn push_written(&mut self, now: SimTime, written_before: u64, out: &mut Vec<Packet>) {
        // A subflow with nothing outstanding gets no ACK to refresh its window: give it the
        // connection's (stands in for Linux's zero-window probe). Upstream raises the
        // window of the subflow it sends on instead (`push_on`).
        if !self.upstream() {
            let meta_wnd = self.snd.rwnd_edge.saturating_sub(self.snd.data_una);
            for s in self.subflows.iter_mut() {
                if s.tx.packets_out == 0 {
                    s.tx.snd_wnd = s.tx.snd_wnd.max(meta_wnd);
                }
            }
        }
        // (Scratch vectors are used in place: nothing called from `push` pushes again.)
        self.sent_before.clear();
        self.sent_before.extend(self.subflows.iter().map(|s| s.tx.stats.segs_sent));
        // Subflow-level retransmissions and pre-scheduled data.
        for i in 0..self.subflows.len() {
            if self.subflows[i].state == SubState::Established {
                self.drain(now, i, out);
            }
        }
        let upstream = self.upstream();
        if upstream {
            // The kernel recomputes the MPTCP retransmit interval in
            // `mptcp_subflow_get_send`, which runs only when something is pushed: the
            // application wrote (`mptcp_sendmsg` -> `__mptcp_push_pending`) or an ACK
            // opened the window past snd_nxt with data waiting (`ack_update_msk` ->
            // `__mptcp_check_push`). While the window stays shut the interval keeps the
            // value from the last push, not TCP_RTO_MIN.
            let rewound = self.snd.reinject_head().is_some();
            let waiting = rewound || self.snd.unsent() > 0;
            if waiting && (self.snd.written > written_before || rewound || self.snd.rwnd_edge > self.snd.dsn_nxt) {
                self.set_meta_timeout(now);
            }
        }
        // Connection-level scheduling.
        let mss = self.cfg.tcp.mss;
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 100_000 {
                break; // a scheduler that keeps asking to send nothing useful
            }
            let reinject = self.snd.reinject_head();
            let next = self.snd.next_new_len(mss);
            let new_data = next.is_some();
            // New data waits only because the peer's window is closed.
            let window_limited = !new_data && self.snd.unsent() > 0;
            let sndbuf_full = self.app_blocked();
            // (Data in flight alone: a redundant scheduler may still copy it.)
            if reinject.is_none() && !new_data && !window_limited && !sndbuf_full && self.snd.segs.is_empty() {
                break;
            }
            // Every decision below needs a subflow that can send now (minRTT's
            // `get_available_subflow`): skip the scheduler when none can. A scheduler
            // that queues data on subflows (upstream) is asked regardless.
            if !self.subflows.iter().any(|s| s.state == SubState::Established && !s.pf && s.tx.can_send(now)) && !self.sched.queues_data() {
                break;
            }
            self.build_views(now, next.unwrap_or(mss) as u64);
            let una = self.snd.segs.front().map(|s| (s.dsn, s.len, s.path_mask));
            let snd = &self.snd;
            let meta = MetaView {
                new_data,
                next_dsn: snd.dsn_nxt,
                next_len: next.unwrap_or(0),
                window_limited,
                reinject,
                una,
                sndbuf_full,
                data_una: snd.data_una,
                snd_wnd: snd.rwnd_edge.saturating_sub(snd.data_una),
                unsent: snd.unsent(),
                queued_bytes: snd.written - snd.data_una,
                packets_out: snd.segs.len() as u32,
                window_free: snd.rwnd_edge.saturating_sub(snd.dsn_nxt),
            };
            let (front, back) = snd.segs.as_slices();
            self.actions.clear();
            self.sched.schedule(&SchedView { now, subflows: &self.views, order: &self.order, meta, segs: MetaSegs { front, back }, mem: &self.mem }, &mut self.actions);
            self.sched.drain_status_notes(&mut self.notes);
            if !self.notes.is_empty() {
                self.apply_status_notes(now);
            }
            let mut sent = false;
            for k in 0..self.actions.len() {
                match self.actions[k] {
                    Action::Send { sub, seg } => sent |= self.send_on(now, sub, seg, out),
                    Action::Enqueue { sub, bytes } => {
                        let len = bytes.min(mss).min(self.snd.next_new_len(mss).unwrap_or(0));
                        if len > 0 && sub < self.subflows.len() {
                            let dsn = self.snd.take_new(len, sub, now);
                            self.subflows[sub].queue.push_back((dsn, len, true, false, false));
                            self.subflows[sub].queued_bytes += len as u64;
                            self.record_sched(now, sub, "enqueue", dsn, len);
                            sent = true;
                        }
                    }
                    Action::Penalise { sub } => {
                        if let Some(s) = self.subflows.get_mut(sub) {
                            penalise(&mut s.tx.st, s.tx.cfg.base_kernel);
                            s.sched.penalised += 1;
                            self.stats.penalisations += 1;
                            self.record_sched(now, sub, "penalise", 0, 0);
                        }
                    }
                    Action::Push { sub, bytes } => sent |= self.push_on(now, sub, bytes, out),
                    Action::Wait => {}
                }
            }
            if !sent {
                break;
            }
        }
        // `__mptcp_push_pending`: data was pushed (a round before the last sent) and the
        // MPTCP retransmit timer is not pending -> arm it.
        if upstream && guard > 1 && self.up.rtx_deadline.is_none() {
            self.up.reset_timer(now);
        }
        let nospace = self.app_blocked();
        let meta_has_data = self.snd.unsent() > 0 || !self.snd.reinject.is_empty();
        for (s, &before) in self.subflows.iter_mut().zip(self.sent_before.iter()) {
            if s.state == SubState::Established {
                s.tx.validate_after_push(now, s.tx.stats.segs_sent != before, !s.queue.is_empty(), nospace);
                // Nothing to send and cwnd room: delivery-rate samples are app-limited.
                if !meta_has_data && s.queue.is_empty() {
                    s.tx.check_app_limited();
                }
                // Held back only by the pacer: wake up when it allows the next packet.
                if s.tx.has_cwnd_space() && !s.tx.pacing_ok(now) && (meta_has_data || !s.queue.is_empty() || s.tx.lost_out > s.tx.retrans_out) {
                    s.pace_deadline = Some(s.tx.next_send_at);
                }
            }
        }
        self.note_app_progress(now);
    }

    /// Upstream `mptcp_set_timeout`: the MPTCP retransmit interval is the longest
    /// remaining retransmit timer of the subflows that have not lost a period
    /// (`mptcp_timeout_from_subflow`: `icsk_pending && !stale_count`), else TCP_RTO_MIN.
    fn set_meta_timeout(&mut self, now: SimTime) {
        let tout = self
            .subflows
            .iter()
            .filter(|s| s.state == SubState::Established && s.up.stale_count == 0)
            .filter_map(|s| s.tx.rto_deadline)
            .map(|d| d.saturating_sub(now))
            .max()
            .unwrap_or(SimTime::ZERO);
        self.up.set_timeout(tout);
    }

    /// Execute one `Send`. Returns whether a packet left.
    fn send_on(&mut self, now: SimTime, i: usize, seg: Segment, out: &mut Vec<Packet>) -> bool {
        if i >= self.subflows.len() || self.subflows[i].state != SubState::Established || self.subflows[i].pf || !self.subflows[i].tx.can_send(now) {
            return false;
        }
        let mss = self.cfg.tcp.mss;
        let (dsn, len) = match seg {
            Segment::New => {
                let Some(len) = self.snd.next_new_len(mss) else { return false };
                // Upstream subflows run Nagle (see `drain`): a short segment behind an
                // unacknowledged short one is not built yet, so it can grow.
                if self.upstream() && self.subflows[i].tx.nagle_holds(len) {
                    return false;
                }
                (self.snd.take_new(len, i, now), len)
            }
            Segment::Reinject => {
                let Some((d, l, _)) = self.snd.reinject_head() else { return false };
                self.snd.reinject.pop_front();
                self.snd.mark_sent_on(d, i);
                if self.upstream() {
                    // Sent again after a rewind (the MPTCP retransmit timer's test).
                    self.snd.clear_reinject_flag(d);
                }
                self.stats.reinjections += 1;
                (d, l)
            }
            Segment::Copy { dsn, len } => {
                if dsn + len as u64 <= self.snd.data_una {
                    return false;
                }
                self.snd.mark_sent_on(dsn, i);
                self.stats.opportunistic_retrans += 1;
                (dsn, len)
            }
        };
        let c = &mut self.subflows[i].sched;
        let kind = match seg {
            Segment::New => {
                c.new_segs += 1;
                "new"
            }
            Segment::Reinject => {
                c.reinjected_segs += 1;
                "reinject"
            }
            Segment::Copy { .. } => {
                c.copied_segs += 1;
                "copy"
            }
        };
        self.record_sched(now, i, kind, dsn, len);
        let seq = self.subflows[i].tx.send_new(now, len, dsn);
        self.emit_data(now, i, seq, len, dsn, false, false, out);
        true
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

/// The penalisation of `mptcp_rcv_buf_optimization`: halve cwnd (at least 1) and
/// ssthresh (at least 2). v0.9x on 4.x (mptcp_sched.c) halves ssthresh only out of slow
/// start (`prior_cwnd >= snd_ssthresh`); v0.89 on 3.14 (mptcp_output.c) whenever it is
/// set (`snd_ssthresh != TCP_INFINITE_SSTHRESH`), in slow start too.
fn penalise(st: &mut crate::cc::CcState, base: BaseKernel) {
    let prior = st.cwnd;
    st.cwnd = (st.cwnd >> 1).max(1);
    let halve = match base {
        BaseKernel::Linux3_14 => st.ssthresh < crate::cc::INFINITE_SSTHRESH,
        BaseKernel::Linux4 => prior >= st.ssthresh,
    };
    if halve {
        st.ssthresh = (st.ssthresh >> 1).max(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            assert!(s.tx.packets_out > 0, "{v:?}: data out");
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
        tx.st.cwnd = tx.packets_out.max(1);
        let taken = p.c.push_on(now, 0, 4 * 1448, &mut out);
        assert!(taken && !p.c.subflows[0].queue.is_empty(), "the push waits in the subflow's queue: taken {taken}, {} out, window {}", p.c.subflows[0].tx.packets_out, p.c.snd.rwnd_edge);
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
            assert_eq!(tx.packets_out, 0);
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
        super::penalise(&mut a, BaseKernel::Linux3_14);
        super::penalise(&mut b, BaseKernel::Linux4);
        assert_eq!((a.cwnd, a.ssthresh), (4, 10));
        assert_eq!((b.cwnd, b.ssthresh), (4, 20));
        // Infinite ssthresh (never a loss): neither release touches it.
        let mut c = crate::cc::CcState::new(8, 1448);
        super::penalise(&mut c, BaseKernel::Linux3_14);
        assert_eq!((c.cwnd, c.ssthresh), (4, crate::cc::INFINITE_SSTHRESH));
        // Out of slow start both halve it.
        let mut d = crate::cc::CcState::new(30, 1448);
        d.ssthresh = 20;
        super::penalise(&mut d, BaseKernel::Linux4);
        assert_eq!((d.cwnd, d.ssthresh), (15, 10));
    }
}
