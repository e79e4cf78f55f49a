//! One subflow of a connection: its state (handshake, join, backup and failure status),
//! the path manager's events, and the status the scheduler and the metrics read. What a
//! subflow sends and receives is `tcp::SubflowTx` / `tcp::SubflowRx`; this file owns the
//! subflow's life: opening, joining, MP_PRIO, failure on RTO, and status changes.

use super::*;

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
    pub(super) iss: u32,
    pub(super) syn_sent_at: SimTime,
    pub(super) syn_retries: u32,
    pub(super) handshake_deadline: Option<SimTime>,
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
    pub(super) tail_skb_start: u64,
    pub(super) tail_skb_len: u64,
    pub(super) tail_frozen: bool,
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
    /// Stale state and send buffer (`StackPolicy::meta_retransmit_timer`, `subflow_send_memory`).
    pub up: SubflowUp,
    /// `tcp.receive_memory = "skb"`: skbs the subflow received and the MPTCP socket has
    /// not pulled yet (`rcvmem::HeldQueue`).
    pub held: HeldQueue,
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
    /// The deadline its `Rto` timer serves: the retransmit timer once established, the
    /// handshake's before.
    #[inline]
    pub(super) fn rto_timer_deadline(&self) -> Option<SimTime> {
        match self.state {
            SubState::Established => self.tx.rto_deadline,
            SubState::SynSent | SubState::PreEstablished => self.handshake_deadline,
            SubState::Idle => None,
        }
    }

    /// The head of the subflow's send queue leaves it: (dsn, len). Pre-scheduled new data
    /// counts as new when it leaves.
    /// The queue's head: (DSN, length, PSH, whether it ends its skb).
    pub(super) fn pop_queued(&mut self) -> Option<(u64, u32, bool, bool)> {
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

    pub(super) fn new(cfg: &ConnConfig, path: usize, p: &ConnPath, iss: u32) -> Result<Subflow, String> {
        let cc = cc::make(&cfg.cc, &cfg.cc_params).map_err(|e| e.message)?;
        Ok(Subflow {
            path,
            route_fwd: p.route_fwd,
            route_rev: p.route_rev,
            state: SubState::Idle,
            backup: p.backup,
            tx: {
                let mut tx = SubflowTx::new(cfg.tcp, iss, cc, SimTime::ZERO);
                tx.restart_on_entail = cfg.mptcp && cfg.stack.policy().restart_after_idle_on_queue;
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
            held: HeldQueue::default(),
        })
    }
}

impl Connection {
    /// Carry out `PmAction::OpenSubflow`: the path's idle subflow if it has one, else a
    /// new subflow on the same path (another source port, as ndiffports does). At most
    /// `MAX_SUBFLOWS`; a request beyond that is ignored.
    pub(super) fn open_subflow(&mut self, now: SimTime, path: usize, backup: bool, out: &mut Vec<Packet>) {
        let Some(p) = self.paths.get(path) else { return };
        let i = match self.subflows.iter().position(|s| s.path == path && s.state == SubState::Idle) {
            Some(i) => i,
            None if self.subflows.len() < MAX_SUBFLOWS => {
                let iss = self.iss.next_u64() as u32;
                // The controller was built from the same name and options in `new`.
                let Ok(s) = Subflow::new(&self.cfg, path, p, iss) else { return };
                self.subflows.push(s);
                self.walk.slot_added();
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
    pub(super) fn set_backup(&mut self, now: SimTime, path: usize, backup: bool) {
        let Some(i) = self.subflows.iter().position(|s| s.path == path && s.state != SubState::Idle) else { return };
        for (k, s) in self.subflows.iter_mut().enumerate().filter(|(_, s)| s.path == path && s.state != SubState::Idle) {
            s.backup = backup;
            self.obs.prio_signal(k, backup);
        }
        self.update_status(now, i, "mp_prio");
    }

    /// When the path manager wants `handle_pm_timeout`.
    pub fn poll_pm_timeout(&self) -> Option<SimTime> { if self.cfg.mptcp { self.pm.poll_timeout() } else { None } }

    /// The path manager's timer: carry out its actions, then send what the change allows.
    pub fn handle_pm_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.timer_scope = u64::MAX;
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

    pub(super) fn send_syn(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
        if self.walk.connect(i, self.subflows.len(), self.policy.subflow_order) {
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

    /// Tell the path manager the connection is established (the initial subflow is `i`)
    /// and carry out what it asks.
    pub(super) fn pm_established(&mut self, now: SimTime, i: usize, out: &mut Vec<Packet>) {
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

    /// Recompute every subflow's status after subflow `cause` changed, and log the
    /// changes (MPTCP connections only). A backup's status depends on the others, so a
    /// change of one subflow can move several.
    pub(super) fn update_status(&mut self, now: SimTime, cause: usize, reason: &'static str) {
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
    pub(super) fn any_active(&self) -> bool { self.subflows.iter().any(|s| s.state == SubState::Established && !s.pf && !s.backup) }

    /// Record subflow `i`'s new status, logging a change (MPTCP connections only).
    pub(super) fn set_status(&mut self, now: SimTime, i: usize, to: SubflowStatus, reason: &'static str) {
        let s = &mut self.subflows[i];
        if to == s.status {
            return;
        }
        if self.cfg.mptcp {
            self.obs.status_change(StatusChange { at: now, subflow: i, path: s.path, from: s.status, to, reason });
        }
        s.status = to;
    }

    /// What the event log reports for `s`: its own status, or the scheduler's on top of
    /// `Active`.
    pub(super) fn status_of(s: &Subflow, any_active: bool) -> SubflowStatus {
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
    pub(super) fn apply_status_notes(&mut self, now: SimTime) {
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

    /// v0.95 `mptcp_sub_retransmit_timer`: after the subflow's own RTO handling,
    /// `mptcp_reinject_data(sk, 1)` copies its unacknowledged data, and the data queued
    /// on it but not sent, to the connection's reinjection queue, and sets `pf`. The
    /// schedulers skip a `pf` subflow (`mptcp_is_def_unavailable`), so the other
    /// subflows, backups included, take its data; the subflow itself goes on
    /// retransmitting with exponential backoff, and the first segment that comes back
    /// clears `pf` (see `on_ack`). A subflow is thus "failed" after one RTO. (Upstream
    /// Linux waits for `stale_loss_cnt` = 4 RTOs before it calls a subflow stale.)
    pub(super) fn on_subflow_rto(&mut self, now: SimTime, i: usize) {
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
}
