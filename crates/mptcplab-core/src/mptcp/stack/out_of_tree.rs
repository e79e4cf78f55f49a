//! The out-of-tree stack: multipath-tcp.org v0.89 (Linux 3.14, seed 001) to v0.95
//! (Linux 4.x), the kernels the seeds measured. What the subflows inherit from their
//! base kernel (`tcp.base_kernel`) is in `tcp::TcpConfig`; docs/out-of-tree-profile.md
//! lists the rules.

use super::{PmStart, SendMemory, StackPolicy, SubflowOrder};

pub(super) const POLICY: StackPolicy = StackPolicy {
    // RFC 8684 §3.3: a DSS with a 64-bit mapping and no DATA_ACK or checksum, 18 bytes
    // padded to 20 (`mptcp_dss_len`; the packet captures write this).
    dss_bytes: crate::mptcp::conn::DSS_BYTES,
    dss_off_mss: false,
    max_sack_blocks: None,
    // `mptcp_add_sock` links each new subflow at the head of the list
    // (`mptcp_for_each_sk` walks newest first).
    subflow_order: SubflowOrder::NewestFirst,
    // The path managers open their subflows once the initial subflow's SYN-ACK is in
    // (the client's side of the handshake completes there).
    pm_start: PmStart::SynAck,
    // A subflow RTO reinjects its data (`mptcp_reinject_data`) and sets `tp->pf`
    // (`Connection::on_subflow_rto` cites the v0.95 source).
    reinject_on_subflow_rto: true,
    meta_retransmit_timer: false,
    send_memory: SendMemory::Payload,
    send_buffer_autotunes: false,
    subflow_send_memory: false,
    // Sender-side silly-window avoidance (RFC 1122 §4.2.3.4): a short segment only when
    // half the largest advertised window is open (`MetaSender::next_new_len`).
    fill_window: false,
    subflow_nagle: false,
    skb_write_queue: false,
    // Stands in for the zero-window probe: the meta socket's window is the subflows'.
    idle_subflows_take_meta_window: true,
    restart_after_idle_on_queue: false,
    window_from_subflow: false,
    drop_ofo_beyond_edge: false,
    ack_before_reader: false,
};
