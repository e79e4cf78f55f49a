//! The upstream stack: Linux 6.x `net/mptcp` (read at the 6.18-era tree, the kernel the
//! kernel backend runs). The mechanisms are in `mptcp::upstream` and the connection;
//! docs/upstream-profile.md explains the model and lists what it leaves out.

use super::{PmStart, SendMemory, StackPolicy, SubflowOrder};
use crate::mptcp::upstream as up;

pub(super) const POLICY: StackPolicy = StackPolicy {
    // A DSS with a 64-bit DATA_ACK and a mapping (the kernel backend's captures: 56-byte
    // TCP headers on data segments); `tcp_current_mss` takes it off the MSS.
    dss_bytes: up::DSS_OPTION_BYTES,
    dss_off_mss: true,
    // `tcp_established_options`: one SACK block fits beside timestamps and the DSS.
    max_sack_blocks: Some(up::MAX_SACK_BLOCKS),
    // `__mptcp_subflow_connect`: `list_add_tail` onto `conn_list`.
    subflow_order: SubflowOrder::OldestFirst,
    // `check_fully_established` -> `mptcp_pm_fully_established` (options.c, pm.c).
    pm_start: PmStart::FullyEstablished,
    // A subflow RTO does nothing at the MPTCP level; `mptcp_retransmit_timer` and
    // `mptcp_pm_subflow_chk_stale` do (protocol.c, pm.c).
    reinject_on_subflow_rto: false,
    meta_retransmit_timer: true,
    // `mptcp_sendmsg` / `sk_stream_memory_free` on `sk_wmem_queued` (protocol.c).
    send_memory: SendMemory::Frags,
    // `mptcp_init_sock` starts at tcp_wmem[1]; `tcp_sndbuf_expand`, `__mptcp_sync_sndbuf`.
    send_buffer_autotunes: true,
    subflow_send_memory: true,
    // `mptcp_check_allowed_size` caps a frag at the window left (note M5).
    fill_window: true,
    // `mptcp_push_release` -> `tcp_push` with the subflow's `nonagle` (0 by default).
    subflow_nagle: true,
    // `mptcp_sendmsg_frag`, `tcp_mark_push`, `__tcp_transmit_skb`, `tcp_mss_split_point`.
    skb_write_queue: true,
    // `push_on` raises the window of the subflow it sends on (`mptcp_check_allowed_size`).
    idle_subflows_take_meta_window: false,
    // Linux >= 4.x `tcp_cwnd_restart` from `tcp_skb_entail` (`tcp_slow_start_after_idle_check`).
    restart_after_idle_on_queue: true,
    // `ack_update_msk` (options.c) and 6.x `tcp_may_update_window` (`|| !nwin`).
    window_from_subflow: true,
    // `mptcp_data_queue_ofo`: MPTcpExt.NoDSSInWindow.
    drop_ofo_beyond_edge: true,
    // `tcp_rcv_established`: `tcp_data_queue` -> `sk_data_ready`, then `__tcp_ack_snd_check`.
    ack_before_reader: true,
};
