//! Metrics leave the core as typed columns (one `Vec` per column), never as objects.

pub mod delay;

/// Subflow time series.
#[derive(Default, Clone, Debug)]
pub struct SubflowSeries {
    pub time_s: Vec<f64>,
    pub conn: Vec<u32>,
    pub subflow: Vec<u32>,
    pub path: Vec<u32>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt_ms: Vec<f64>,
    pub inflight_bytes: Vec<u64>,
    pub bytes_sent: Vec<u64>,
    pub bytes_acked: Vec<u64>,
    pub bytes_retrans: Vec<u64>,
    /// Bytes newly acknowledged at the subflow level per interval, Mbit/s (both backends).
    pub throughput_mbps: Vec<f64>,
    /// Payload bytes transmitted per interval, retransmissions included, Mbit/s
    /// (reference metrics.md §6.1 "throughput"; before format 2 this was throughput_mbps).
    pub sent_mbps: Vec<f64>,
}

/// Connection time series.
#[derive(Default, Clone, Debug)]
pub struct ConnSeries {
    pub time_s: Vec<f64>,
    pub conn: Vec<u32>,
    pub goodput_mbps: Vec<f64>,
    pub bytes_delivered: Vec<u64>,
    pub ooo_bytes: Vec<u64>,
    pub rcvbuf_bytes: Vec<u64>,
    pub sndbuf_bytes: Vec<u64>,
}

/// Link-direction time series.
#[derive(Default, Clone, Debug)]
pub struct LinkSeries {
    pub time_s: Vec<f64>,
    /// Hop id: 2·link + (0 forward | 1 reverse).
    pub hop: Vec<u32>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub sent_pkts: Vec<u64>,
    pub delivered_pkts: Vec<u64>,
    pub dropped_pkts: Vec<u64>,
    pub rate_mbps: Vec<f64>,
}

/// One row per traced packet event.
#[derive(Default, Clone, Debug)]
pub struct Trace {
    pub time_ns: Vec<u64>,
    pub conn: Vec<u32>,
    pub subflow: Vec<u32>,
    /// "send", "retrans", "recv", "ack", "drop", "rto"; "sched" for an executed scheduler
    /// action (MPTCP), whose kind is in `sched_kind`.
    pub event: Vec<&'static str>,
    pub seq: Vec<u32>,
    pub len: Vec<u32>,
    pub dsn: Vec<u64>,
    pub ack: Vec<u32>,
    pub cwnd_pkts: Vec<u32>,
    pub inflight_pkts: Vec<u32>,
    pub srtt_us: Vec<u64>,
    /// Hop id where a drop happened (u32::MAX otherwise).
    pub hop: Vec<u32>,
    /// The sender's congestion state after the event (an "ack" row is the controller's
    /// reaction to that ACK: the per-ACK CC trace).
    pub ssthresh_pkts: Vec<u32>,
    pub ca_state: Vec<&'static str>,
    /// Controller-specific mode (BBR: startup, drain, probe_bw, probe_rtt).
    pub cc_mode: Vec<&'static str>,
    /// Pacing rate in bit/s, 0 when not paced.
    pub pacing_bps: Vec<f64>,
    /// "sched" rows: "new", "reinject", "copy", "enqueue" or "penalise" (see
    /// `mptcp::conn::SchedRecord`); empty for the other rows.
    pub sched_kind: Vec<&'static str>,
}

/// The congestion columns of one trace row.
#[derive(Clone, Copy, Debug)]
pub struct CcSnapshot {
    pub cwnd: u32,
    pub inflight: u32,
    pub srtt_us: u64,
    pub ssthresh: u32,
    pub ca_state: &'static str,
    pub mode: &'static str,
    pub pacing_bps: f64,
}

impl CcSnapshot {
    pub const NONE: CcSnapshot = CcSnapshot { cwnd: 0, inflight: 0, srtt_us: 0, ssthresh: 0, ca_state: "", mode: "", pacing_bps: 0.0 };
}

impl Trace {
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, t: u64, conn: u32, sub: u32, event: &'static str, seq: u32, len: u32, dsn: u64, ack: u32, cc: CcSnapshot, hop: u32) {
        self.time_ns.push(t);
        self.conn.push(conn);
        self.subflow.push(sub);
        self.event.push(event);
        self.seq.push(seq);
        self.len.push(len);
        self.dsn.push(dsn);
        self.ack.push(ack);
        self.cwnd_pkts.push(cc.cwnd);
        self.inflight_pkts.push(cc.inflight);
        self.srtt_us.push(cc.srtt_us);
        self.hop.push(hop);
        self.ssthresh_pkts.push(cc.ssthresh);
        self.ca_state.push(cc.ca_state);
        self.cc_mode.push(cc.mode);
        self.pacing_bps.push(cc.pacing_bps);
        self.sched_kind.push("");
    }
    /// A "sched" row: one executed scheduler action on subflow `sub` (dsn and len of the
    /// data it names; cwnd and packets in flight as the scheduler saw them).
    #[allow(clippy::too_many_arguments)]
    pub fn push_sched(&mut self, t: u64, conn: u32, sub: u32, kind: &'static str, dsn: u64, len: u32, cwnd: u32, inflight: u32) {
        let cc = CcSnapshot { cwnd, inflight, ..CcSnapshot::NONE };
        self.push(t, conn, sub, "sched", 0, len, dsn, 0, cc, u32::MAX);
        *self.sched_kind.last_mut().unwrap() = kind;
    }
    pub fn len(&self) -> usize { self.time_ns.len() }
    pub fn is_empty(&self) -> bool { self.time_ns.is_empty() }
}

/// One row per subflow status change (MPTCP connections): the event log of path
/// management. Statuses and reasons are those of `mptcp::conn::SubflowStatus` and
/// `StatusChange`.
#[derive(Default, Clone, Debug)]
pub struct SubflowEvents {
    pub time_s: Vec<f64>,
    pub conn: Vec<u32>,
    pub subflow: Vec<u32>,
    /// World path index.
    pub path: Vec<u32>,
    pub from: Vec<&'static str>,
    pub to: Vec<&'static str>,
    pub reason: Vec<&'static str>,
}

impl SubflowEvents {
    pub fn len(&self) -> usize { self.time_s.len() }
    pub fn is_empty(&self) -> bool { self.time_s.is_empty() }
}

/// One row per data segment at its DATA_ACK (seed 002 Sec. IV: a sample k), for
/// connections that collect them (streaming apps, or `run.delay_samples`). Times in ms.
#[derive(Default, Clone, Debug)]
pub struct DelaySamples {
    /// The DATA_ACK instant (the sample instant).
    pub time_s: Vec<f64>,
    pub conn: Vec<u32>,
    pub dsn: Vec<u64>,
    pub len: Vec<u32>,
    /// When the MPTCP level took the segment from the send buffer.
    pub taken_s: Vec<f64>,
    /// The subflow whose copy reached the receiver first (-1: unknown).
    pub subflow: Vec<i32>,
    /// Measured directly: DATA_ACK instant − taken.
    pub delay_ms: Vec<f64>,
    /// θ of the carrying subflow: the sending time of the copy that got through − taken.
    pub theta_ms: Vec<f64>,
    /// τ (SRTT) of the carrying subflow, and the largest SRTT, at the sample instant.
    pub tau_ms: Vec<f64>,
    pub tau_max_ms: Vec<f64>,
    /// Eq. 2 `T_over = max_i (τ_i + θ_i)` and Eq. 7/8 `ζ = max(T_over − max_i τ_i, 0)`.
    pub t_over_ms: Vec<f64>,
    pub zeta_ms: Vec<f64>,
    /// ζ from the measured delay, as the seed computes it (Eq. 7 with `T_over` measured):
    /// `max(delay − max_i τ_i, 0)`.
    pub zeta_measured_ms: Vec<f64>,
}

impl DelaySamples {
    pub fn len(&self) -> usize { self.time_s.len() }
    pub fn is_empty(&self) -> bool { self.time_s.is_empty() }
}

/// One row per frame of a streaming application (see `app::FrameRecord`): times in s,
/// NaN when the frame has not reached that stage by the end of the run.
#[derive(Default, Clone, Debug)]
pub struct FrameTable {
    pub conn: Vec<u32>,
    pub frame: Vec<u64>,
    pub size_bytes: Vec<u32>,
    pub scheduled_s: Vec<f64>,
    pub enqueued_s: Vec<f64>,
    pub taken_s: Vec<f64>,
    pub acked_s: Vec<f64>,
    pub delivered_s: Vec<f64>,
}

#[derive(Default, Clone, Debug)]
pub struct Metrics {
    pub subflows: SubflowSeries,
    pub conns: ConnSeries,
    pub links: LinkSeries,
    pub trace: Trace,
    pub events: SubflowEvents,
    pub delay: DelaySamples,
}
