//! The scenario schema: the single source of truth. Python turns TOML into this structure
//! and surfaces `ScenarioError` with the field path; `mptcplab schema` exports it as JSON
//! Schema. Unknown fields are rejected.

pub mod units;
mod expand;
mod validate;

pub use units::{Duration, Queue, Rate, Size};
pub use validate::{LinkPlan, Plan, ConnPlan, PathPlan};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Bad scenario input: `field` is the dotted path (e.g. `links[1].rate`).
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self { ScenarioError { field: field.into(), message: message.into() } }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{}: {}", self.field, self.message) }
}
impl std::error::Error for ScenarioError {}

/// A whole experiment: topology, traffic and the MPTCP configuration.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub run: RunSpec,
    /// Defaults for every subflow and TCP flow.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// Full-duplex links; "forward" is the data direction.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Routes over links; each path is one (local address, remote address) pair.
    #[serde(default)]
    pub paths: Vec<PathSpec>,
    /// Multi-homed hosts (seed 000 Table 1): exactly two, data flows from the first to
    /// the second; they expand into one access link per ISP and one path per ISP pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostSpec>,
    /// A generated topology (issue 16): hosts and switches joined by links; connections
    /// then name host pairs (`from`, `to`) and `[[traffic]]` generates them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// Generated connections over the topology: traffic matrices and flow-size workloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<TrafficSpec>,
    /// MPTCP connections.
    #[serde(default)]
    pub connections: Vec<ConnSpec>,
    /// Plain single-path TCP flows (background traffic).
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Simulated time (default "30 s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// Seed of every random stream (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Metrics sampling interval (default "100 ms").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Duration>,
    /// Each connection and flow starts up to this much after its `start`, by an offset
    /// drawn from the seed (default "0 s"): seeds then desynchronise flows that a
    /// loss-free, jitter-free network would otherwise replay identically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Duration>,
    /// Each subflow join (MP_JOIN after the connection is established, or later when a
    /// path manager asks) waits an offset drawn from the seed in [0, join_jitter)
    /// (default "0 s": at once). With `start_jitter` it gives repetitions of a loss-free
    /// scenario a testbed's run-to-run variation (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_jitter: Option<Duration>,
    /// Record one delay sample per data segment at its DATA_ACK (seed 002 Sec. IV) for
    /// every connection, not only streaming ones (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_samples: Option<bool>,
    /// Which Linux MPTCP the simulator follows (default "out_of_tree", the v0.9x kernel
    /// of the seeds): "upstream" = Linux 6.x (scheduler "upstream", path manager
    /// "in_kernel", no opportunistic retransmission or penalisation, auto-tuned send
    /// buffers, the MPTCP-level retransmit timer). Explicit fields override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::ProfileName>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryName {
    /// Proportional Rate Reduction (RFC 6937), Linux's default.
    Prr,
    /// NewReno (RFC 6582) over the SACK pipe.
    Newreno,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Maximum segment size, payload bytes (default "1448 B").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Size>,
    /// Initial congestion window in packets (default 10, RFC 6928).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryName>,
    /// Delayed ACKs (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout (default "40 ms", Linux TCP_DELACK_MIN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delack_timeout: Option<Duration>,
    /// Floor of the RTO variance term (default "200 ms", Linux TCP_RTO_MIN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// Pace every subflow at Linux's default rate (fq qdisc): 2x cwnd/srtt in early slow
    /// start, 1.2x after (default false; BBR paces regardless).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// Receive-buffer accounting (default: the profile's, "linux" for out_of_tree and
    /// "payload" for upstream): "linux" charges each payload byte twice (skb overhead)
    /// and advertises half the free space, as Linux 4.x with tcp_adv_win_scale = 1, so
    /// a 200 KB buffer holds about 100 KB of payload; "payload" counts payload bytes and
    /// advertises all the free space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer_accounting: Option<AccountingName>,
    /// What an MPTCP receiver holds and when it refuses data (default: the profile's,
    /// "window" for out_of_tree, "skb" for upstream): "window" lets the buffer only
    /// close the window; "skb" follows Linux 6.x: each segment is an skb charged its
    /// truesize against sk_rcvbuf (twice the SO_RCVBUF the kernel backend sets for
    /// `receive_buffer`), subflows hold data until the MPTCP socket pulls it, the pull
    /// stops while the MPTCP socket is over its buffer, and a subflow over its buffer
    /// drops (docs/research/upstream-receive-deadlock-measured.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_memory: Option<ReceiveMemoryName>,
    /// The Linux release the out-of-tree MPTCP patches: "4.x" (default; MPTCP v0.9x, the
    /// kernels of seeds 000, 002-004) or "3.14" (MPTCP v0.89, seed 001's). It sets the
    /// default of `cwnd_validation` and the release-specific MPTCP rules
    /// (docs/out-of-tree-profile.md). The upstream profile (Linux 6.x) ignores it, so a
    /// scenario file that states its seed's kernel still runs under both profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_kernel: Option<BaseKernelName>,
    /// When cwnd may grow (`tcp_is_cwnd_limited`): "linux_3_14" (3.12-3.15: within 3
    /// packets of full, or with GSO within a third of cwnd and under the 1 ms TSO size
    /// goal, judged on the packets in flight before the ACK), "linux_3_11" (3.6-3.11: the
    /// GSO bound is 64 KiB instead), "linux_4" (3.16-5.17: in slow start until cwnd is
    /// twice the packets sent in a window) or "linux_5_18". Default: the base kernel's
    /// for out_of_tree, "linux_5_18" for upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_validation: Option<CwndValidationName>,
    /// The subflows can GSO (Linux `sk_can_gso`; default true: Linux registers every
    /// device with software GSO). Only the 3.x cwnd validations read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso: Option<bool>,
    /// How a segment is judged lost: "rack" (RFC 8985, Linux `net.ipv4.tcp_recovery = 1`,
    /// the only loss detection of Linux >= 4.18: a segment is lost once one sent after it
    /// is delivered and an RTT plus a reordering window has passed, retransmissions
    /// included) or "dupthresh" (RFC 6675: three SACKed segments above it; a tail loss
    /// waits for the RTO). Default: "rack" for upstream, "dupthresh" for out_of_tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_detection: Option<LossDetectionName>,
    /// The tail loss probe (RFC 8985 §7; Linux `net.ipv4.tcp_early_retrans = 3`): in the
    /// Open state, 2 SRTT after the last send without an ACK, one new segment or the
    /// last one again, so a lost tail is repaired without an RTO. Default: true for
    /// upstream, false for out_of_tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_loss_probe: Option<bool>,
}

/// `tcp.loss_detection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LossDetectionName {
    Rack,
    Dupthresh,
}

/// `tcp.base_kernel`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BaseKernelName {
    /// Linux 3.14, MPTCP v0.89.
    #[serde(rename = "3.14")]
    Linux3_14,
    /// Linux 4.x, MPTCP v0.9x.
    #[default]
    #[serde(rename = "4.x")]
    Linux4,
}

/// `tcp.cwnd_validation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CwndValidationName {
    #[serde(rename = "linux_3_11")]
    Linux3_11,
    #[serde(rename = "linux_3_14")]
    Linux3_14,
    #[serde(rename = "linux_4")]
    Linux4,
    #[serde(rename = "linux_5_18")]
    Linux5_18,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AccountingName {
    Payload,
    Linux,
}

/// `tcp.receive_memory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReceiveMemoryName {
    Window,
    Skb,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    /// Serialisation rate of the forward direction (whole packets, headers included).
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
    /// DropTail limit (default "1000 pkt", Linux txqueuelen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    /// Bernoulli loss probability before the queue, forward direction (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// A loss model instead of `loss` (forward direction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_model: Option<LossModelSpec>,
    /// Extra delay per packet, drawn uniformly in [0, jitter) from the seed, in arrival
    /// order (packets never overtake): the timing noise of real hosts (default 0; the
    /// reverse direction takes the same unless it says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Duration>,
    /// Overrides for the reverse (ACK) direction; loss there defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<DirSpec>,
    /// Timed changes: steps, linear ramps (`until`), down/up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<ChangeSpec>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_model: Option<LossModelSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Duration>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModelSpec {
    Bernoulli { p: f64 },
    /// Two-state Markov chain, stepped once per packet.
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, #[serde(default)] loss_good: f64, loss_bad: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    Up,
    Down,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Both,
    Forward,
    Reverse,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeSpec {
    pub at: Duration,
    /// With `until`: a linear ramp from the value at `at` to the given value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<LinkState>,
    #[serde(default)]
    pub direction: Direction,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    pub name: String,
    /// Links in the data direction.
    pub links: Vec<String>,
    /// Links for ACKs (default: `links` reversed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_links: Option<Vec<String>>,
    /// Subflows on this path are backup subflows (MP_PRIO B-bit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<bool>,
}

/// `[topology]`: one table for every generator; `kind` says which fields apply.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub kind: TopologyKind,
    /// Link rate (fat_tree: every link; leaf_spine: host links; dumbbell and
    /// parking_lot: the bottlenecks).
    pub rate: Rate,
    /// Propagation delay of every link (one hop, one way).
    pub delay: Duration,
    /// DropTail limit of every switch output port (default "1000 pkt").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    /// DropTail limit of each host's own NIC queue, the host-to-switch direction of its
    /// link (default "1000 pkt", Linux's txqueuelen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_queue: Option<Queue>,
    /// fat_tree: ports per switch (even, >= 2): k^3/4 hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// leaf_spine: leaf switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// leaf_spine: spine switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// leaf_spine: hosts on each leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    /// leaf_spine: host capacity over uplink capacity per leaf (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// dumbbell: hosts on each side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// parking_lot: bottleneck links in the chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<u32>,
    /// dumbbell and parking_lot: rate of the host access links (default `rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_rate: Option<Rate>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    FatTree,
    LeafSpine,
    Dumbbell,
    ParkingLot,
}

/// How a connection's subflows pick among the equal-cost paths of their host pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathChoice {
    /// Distinct paths in an order drawn from the seed (stream "paths/<connection>");
    /// more subflows than paths cycle through them again.
    #[default]
    Random,
    /// ECMP-style: subflow i takes path hash(seed, from, to, i) mod paths; two subflows
    /// may collide.
    Hash,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrafficKind {
    /// Every host sends to one other, every host receives from one (a random
    /// derangement).
    Permutation,
    /// Every host sends to a host drawn uniformly among the others.
    Random,
    /// `senders` hosts (drawn from the seed) send to `to` at once.
    Incast,
    /// Flows arrive at every host as a Poisson process of rate load × host link rate /
    /// mean size, to a destination drawn uniformly among the others, sized from
    /// `size_cdf`.
    Poisson,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    #[default]
    Mptcp,
    /// Single-path TCP on one path picked by `path_choice` (ECMP).
    Tcp,
}

/// A flow-size distribution: a file name or built-in name ("websearch", "datamining"),
/// which the Python front end reads into points, or the points themselves: [size in
/// bytes, cumulative probability], sizes and probabilities non-decreasing, the last
/// probability 1; sizes between points are interpolated linearly.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SizeCdfSpec {
    Points(Vec<[f64; 2]>),
    Name(String),
}

/// `[[traffic]]`: connections generated over the `[topology]`, named "<name>.<i>".
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Prefix of the generated connection names (default "t<index>").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub kind: TrafficKind,
    /// "mptcp" (default) or "tcp".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// Subflows per MPTCP connection (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflows: Option<u32>,
    /// Default "random".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_choice: Option<PathChoice>,
    /// Hosts taking part (default: every host of the topology).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<String>>,
    /// incast: the receiving host (default the first host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// incast: how many hosts send (default every other host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// Bytes per connection (permutation, random, incast; default unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// poisson: offered load per sending host, a fraction of its link rate in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// poisson: the flow-size distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_cdf: Option<SizeCdfSpec>,
    /// poisson: arrivals stop here (default the run's duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Duration>,
    /// Start of the matrices' connections; first possible arrival of poisson (default 0 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_options: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_options: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer: Option<Size>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    pub isps: Vec<IspSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IspSpec {
    pub name: String,
    /// Access rate towards the host.
    pub down: Rate,
    /// Access rate from the host.
    pub up: Rate,
    /// One-way delay of this access link (half the site-to-site delay is typical).
    pub delay: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
}

/// `"all"` or a list of path names.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PathSelection {
    List(Vec<String>),
    All(AllPaths),
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AllPaths {
    All,
}

/// `Deserialize` is written by hand (below) so that an error in a field of the table
/// names that field (`connections[0].app.bitrate`): serde's derive for an internally
/// tagged enum buffers the table and loses the path.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Bulk transfer: `size` bytes, or unbounded.
    Bulk {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<Size>,
        /// The writer waits for the socket to poll writeable before each write of at most
        /// this much, the rest of a chunk at fixed offsets of the stream, as the kernel
        /// backend's writer does with "64 KiB" (upstream profile only; default: a blocking
        /// writer that fills the send buffer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        poll_chunk: Option<Size>,
    },
    /// Streaming (seed 002): one frame of `bitrate / frame_rate` every `1 / frame_rate`
    /// seconds from the moment the connection is established; frames that do not fit in
    /// the send buffer wait in order. Collects per-frame lateness and per-segment delay
    /// samples (docs/streaming.md).
    Stream {
        /// Stream rate (default "4.5 Mbit/s").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bitrate: Option<Rate>,
        /// Frames per second (default 30).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        frame_rate: Option<f64>,
        /// How long the application writes frames (default: until the run ends).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration: Option<Duration>,
    },
}

impl Default for AppSpec {
    fn default() -> Self { AppSpec::Bulk { size: None, poll_chunk: None } }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum AppKind {
    Bulk,
    Stream,
}

impl<'de> Deserialize<'de> for AppSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        const BULK: &[&str] = &["kind", "size", "poll_chunk"];
        const STREAM: &[&str] = &["kind", "bitrate", "frame_rate", "duration"];
        impl<'de> Visitor<'de> for V {
            type Value = AppSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an application table such as {{ kind = \"bulk\" }} or {{ kind = \"stream\", bitrate = \"4.5 Mbit/s\" }}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<AppSpec, A::Error> {
                let mut kind = None;
                let (mut size, mut bitrate, mut frame_rate, mut duration, mut poll_chunk) = (None, None, None, None, None);
                let mut seen: Vec<&'static str> = Vec::new();
                // Each value is read with its own type, so a bad one carries its key in
                // the error path.
                while let Some(key) = m.next_key::<String>()? {
                    let name = match key.as_str() {
                        "kind" => {
                            kind = Some(m.next_value::<AppKind>()?);
                            "kind"
                        }
                        "size" => {
                            size = m.next_value::<Option<Size>>()?;
                            "size"
                        }
                        "poll_chunk" => {
                            poll_chunk = m.next_value::<Option<Size>>()?;
                            "poll_chunk"
                        }
                        "bitrate" => {
                            bitrate = m.next_value::<Option<Rate>>()?;
                            "bitrate"
                        }
                        "frame_rate" => {
                            frame_rate = m.next_value::<Option<f64>>()?;
                            "frame_rate"
                        }
                        "duration" => {
                            duration = m.next_value::<Option<Duration>>()?;
                            "duration"
                        }
                        other => return Err(de::Error::unknown_field(other, &["kind", "size", "poll_chunk", "bitrate", "frame_rate", "duration"])),
                    };
                    seen.push(name);
                }
                let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
                let allowed = match kind {
                    AppKind::Bulk => BULK,
                    AppKind::Stream => STREAM,
                };
                if let Some(f) = seen.iter().find(|f| !allowed.contains(f)) {
                    return Err(de::Error::unknown_field(f, allowed));
                }
                Ok(match kind {
                    AppKind::Bulk => AppSpec::Bulk { size, poll_chunk },
                    AppKind::Stream => AppSpec::Stream { bitrate, frame_rate, duration },
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnSpec {
    pub name: String,
    /// Paths the path manager may use ("all" = every path of the scenario). With a
    /// `[topology]`, give `from` and `to` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathSelection>,
    /// Sending host of the topology (with `to`, instead of `paths`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Receiving host of the topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// With `from`/`to`: subflows to open, each on a path picked by `path_choice` among
    /// the equal-cost shortest paths (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflows: Option<u32>,
    /// With `from`/`to`: how subflows pick their paths (default "random").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_choice: Option<PathChoice>,
    /// Path of the initial subflow (default: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_path: Option<String>,
    /// Congestion control (default "cubic"); see `mptcplab list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Options of the congestion control, by name (see `mptcplab list --markdown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_options: Option<BTreeMap<String, serde_json::Value>>,
    /// Packet scheduler (default "minrtt").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Options of the scheduler, by name (see `mptcplab list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_options: Option<BTreeMap<String, serde_json::Value>>,
    /// Path manager (default "fullmesh").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_manager: Option<String>,
    /// Options of the path manager, by name (see `mptcplab list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_manager_options: Option<BTreeMap<String, serde_json::Value>>,
    /// Shared send buffer, payload bytes (default "4 MiB", Linux tcp_wmem max).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<Size>,
    /// Shared receive buffer (default "6 MiB", Linux tcp_rmem max), charged as
    /// `tcp.receive_buffer_accounting` says: Linux 4.x truesize by default, so it holds
    /// about half as many payload bytes; payload bytes under `run.profile = "upstream"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer: Option<Size>,
    /// Application read rate (default: reads at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opportunistic_retransmission: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub penalisation: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default)]
    pub app: AppSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    /// The flow's path; with a `[topology]`, `from` and `to` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Sending host of the topology (with `to`, instead of `path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Receiving host of the topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// With `from`/`to`: how the flow picks its one equal-cost path (default "random":
    /// ECMP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_choice: Option<PathChoice>,
    /// Congestion control of this flow (default "cubic").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_options: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    #[serde(default)]
    pub app: AppSpec,
}

fn map_serde_error(path: String, msg: String) -> ScenarioError {
    // serde_json appends a position in its own text, meaningless for a TOML user.
    let msg = match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => msg[..i].to_string(),
        _ => msg,
    };
    let mut field = if path.is_empty() || path == "." { String::new() } else { path };
    // Some deserializers stop at the parent map for an unknown key: add the key.
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            let name = &rest[..end];
            if !(field == name || field.ends_with(&format!(".{name}"))) {
                field = if field.is_empty() { name.to_string() } else { format!("{field}.{name}") };
            }
        }
    }
    if field.is_empty() {
        field = "<scenario>".to_string();
    }
    ScenarioError::new(field, msg)
}

impl Scenario {
    /// Parse from any serde deserializer (JSON text, a Python dict), with field paths.
    pub fn deserialize_from<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Scenario, ScenarioError>
    where
        D::Error: fmt::Display,
    {
        serde_path_to_error::deserialize(d).map_err(|e| {
            let path = e.path().to_string();
            map_serde_error(path, e.into_inner().to_string())
        })
    }

    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let s = Scenario::deserialize_from(&mut de)?;
        de.end().map_err(|e| ScenarioError::new("<scenario>", e.to_string()))?;
        Ok(s)
    }

    pub fn to_json(&self) -> String { serde_json::to_string(self).unwrap_or_default() }

    /// JSON Schema (draft 2019-09 / 2020-12 compatible) of the scenario.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(Scenario);
        serde_json::to_string_pretty(&schema).unwrap_or_default()
    }

    /// Check everything and resolve names and units into a runnable plan.
    pub fn plan(&self) -> Result<Plan, ScenarioError> { validate::plan(self) }

    /// The same scenario with every default written out and `[[hosts]]` expanded into
    /// links and paths: what a saved result should record to be rerun exactly.
    pub fn normalized(&self) -> Result<Scenario, ScenarioError> {
        self.plan()?;
        let (links, paths) = validate::expand_hosts(self)?;
        let d = |t: &str| Duration::parse(t).ok();
        let z = |t: &str| Size::parse(t).ok();
        let mut out = self.clone();
        out.hosts.clear();
        out.run.duration = out.run.duration.or_else(|| d("30 s"));
        out.run.seed = out.run.seed.or(Some(1));
        out.run.sample_interval = out.run.sample_interval.or_else(|| d("100 ms"));
        out.run.start_jitter = out.run.start_jitter.take().or_else(|| d("0 s"));
        let profile = out.run.profile.unwrap_or_default();
        out.run.profile = Some(profile);
        let t = &mut out.tcp;
        t.mss = t.mss.take().or_else(|| z("1448 B"));
        t.initial_cwnd = t.initial_cwnd.or(Some(10));
        t.recovery = t.recovery.or(Some(RecoveryName::Prr));
        t.delayed_ack = t.delayed_ack.or(Some(true));
        t.delack_timeout = t.delack_timeout.take().or_else(|| d("40 ms"));
        t.min_rto = t.min_rto.take().or_else(|| d("200 ms"));
        t.pacing = t.pacing.or(Some(false));
        t.receive_buffer_accounting = t.receive_buffer_accounting.or(Some(profile.receive_buffer_accounting()));
        t.receive_memory = t.receive_memory.or(Some(profile.receive_memory()));
        t.base_kernel = t.base_kernel.or(Some(BaseKernelName::default()));
        t.cwnd_validation = t.cwnd_validation.or(Some(validate::cwnd_validation_default(profile, t.base_kernel)));
        t.gso = t.gso.or(Some(true));
        t.loss_detection = t.loss_detection.or(Some(validate::loss_detection_default(profile)));
        t.tail_loss_probe = t.tail_loss_probe.or(Some(profile == crate::profile::ProfileName::Upstream));
        out.links = links;
        for l in out.links.iter_mut() {
            l.queue = l.queue.take().or_else(|| Queue::parse("1000 pkt").ok());
            if l.loss_model.is_none() {
                l.loss = l.loss.or(Some(0.0));
            }
        }
        out.paths = paths;
        let names: Vec<String> = out.paths.iter().map(|p| p.name.clone()).collect();
        for c in out.connections.iter_mut() {
            if let Some(PathSelection::All(_)) = c.paths {
                c.paths = Some(PathSelection::List(names.clone()));
            }
            if c.initial_path.is_none() {
                if let Some(PathSelection::List(v)) = &c.paths {
                    c.initial_path = v.first().cloned();
                }
            }
            c.cc = c.cc.take().or_else(|| Some("cubic".into()));
            c.scheduler = c.scheduler.take().or_else(|| Some(profile.scheduler().into()));
            let pm_default = if c.from.is_some() { "fullmesh" } else { profile.path_manager() };
            c.path_manager = c.path_manager.take().or_else(|| Some(pm_default.into()));
            // Upstream without a send_buffer auto-tunes it: nothing to write out.
            if profile == crate::profile::ProfileName::OutOfTree {
                c.send_buffer = c.send_buffer.take().or_else(|| z("4 MiB"));
            }
            c.receive_buffer = c.receive_buffer.take().or_else(|| z("6 MiB"));
            c.opportunistic_retransmission = c.opportunistic_retransmission.or(Some(profile.rcv_buf_optimization()));
            c.penalisation = c.penalisation.or(Some(profile.rcv_buf_optimization()));
            c.start = c.start.take().or_else(|| d("0 s"));
            normalize_app(&mut c.app);
        }
        for f in out.flows.iter_mut() {
            f.cc = f.cc.take().or_else(|| Some("cubic".into()));
            f.send_buffer = f.send_buffer.take().or_else(|| z("4 MiB"));
            f.receive_buffer = f.receive_buffer.take().or_else(|| z("6 MiB"));
            f.start = f.start.take().or_else(|| d("0 s"));
            normalize_app(&mut f.app);
        }
        Ok(out)
    }
}

/// Write out a streaming application's defaults.
fn normalize_app(app: &mut AppSpec) {
    if let AppSpec::Stream { bitrate, frame_rate, .. } = app {
        if bitrate.is_none() {
            *bitrate = Rate::parse(crate::app::DEFAULT_STREAM_BITRATE).ok();
        }
        frame_rate.get_or_insert(crate::app::DEFAULT_FRAME_RATE);
    }
}
