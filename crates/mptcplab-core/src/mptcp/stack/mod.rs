//! The MPTCP stack as policy: what one implementation does differently from another, as
//! named behaviours chosen once from the scenario's `run.profile` (`Stack::policy`).
//! Each stack's choices live in its own file, each with its kernel source
//! (`out_of_tree.rs`: multipath-tcp.org v0.89-v0.95; `upstream.rs`: Linux 6.x
//! `net/mptcp`). The connection reads the behaviours and never asks which stack it runs;
//! a third stack is a third `Stack` variant and a third file. The mechanisms themselves
//! (the MPTCP retransmit timer, the send-memory formulas) stay with the connection and in
//! `mptcp::upstream`.

mod out_of_tree;
mod upstream;

/// The MPTCP implementation a connection follows (set by the scenario's `run.profile`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stack {
    /// Out-of-tree multipath-tcp.org v0.9x (Linux 4.x): a subflow RTO reinjects its data
    /// and marks it potentially failed (`pf`); subflows are walked newest first.
    #[default]
    OutOfTree,
    /// Upstream Linux 6.x: no reinjection on a subflow RTO; an MPTCP-level retransmit
    /// timer and stale subflows instead; per-subflow send queues; subflows walked oldest
    /// first (`list_add_tail` onto `conn_list` in `__mptcp_subflow_connect`, subflow.c).
    Upstream,
}

impl Stack {
    /// The behaviours of this stack.
    pub const fn policy(self) -> StackPolicy {
        match self {
            Stack::OutOfTree => out_of_tree::POLICY,
            Stack::Upstream => upstream::POLICY,
        }
    }
}

/// Where a new subflow joins the connection's list of subflows, which the scheduler, the
/// coupled controllers and the subflow walks follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowOrder {
    /// At the head: the newest subflow is walked first.
    NewestFirst,
    /// At the tail: the oldest subflow is walked first.
    OldestFirst,
}

/// When the path manager may open the other subflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmStart {
    /// Once the initial subflow's SYN-ACK arrives.
    SynAck,
    /// Once the connection is fully established: the first ACK carrying a DATA_ACK on the
    /// initial subflow.
    FullyEstablished,
}

/// How the MPTCP socket's send buffer is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMemory {
    /// `send_buffer` bounds the payload written and not DATA_ACKed.
    Payload,
    /// `sk_wmem_queued` of whole data frags against `sk_sndbuf`: `SO_SNDBUF` doubled when
    /// set, else auto-tuned from the subflows' buffers (`__mptcp_sync_sndbuf`); a writer
    /// fills whole page frags and a blocked one sleeps until the buffer is writeable.
    Frags,
}

/// What a stack does, one named behaviour per field. See each stack's file for the values
/// and their sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackPolicy {
    // The wire.
    /// Option bytes of an MPTCP data segment's DSS beyond the timestamps.
    pub dss_bytes: u32,
    /// The DSS option comes off the MSS (`tcp_current_mss` counts it).
    pub dss_off_mss: bool,
    /// SACK blocks an MPTCP ACK carries at most beside its DSS (None: as TCP).
    pub max_sack_blocks: Option<u8>,

    // Subflows and the path manager.
    pub subflow_order: SubflowOrder,
    pub pm_start: PmStart,

    // Loss at the MPTCP level.
    /// A subflow's RTO reinjects its unacknowledged data on the other subflows and marks it
    /// potentially failed.
    pub reinject_on_subflow_rto: bool,
    /// An MPTCP-level retransmit timer, with stale subflows (a subflow whose timer backed
    /// off is left out of the scheduler until it hears an ACK).
    pub meta_retransmit_timer: bool,

    // Sending.
    pub send_memory: SendMemory,
    /// Without a `send_buffer` the send buffers auto-tune (`send_buffer` is only the start).
    pub send_buffer_autotunes: bool,
    /// Each subflow's send memory (`sk_sndbuf`, `sk_wmem_queued`) is modelled for the
    /// scheduler, whatever the scheduler (otherwise only where it queues data on subflows).
    pub subflow_send_memory: bool,
    /// No MPTCP-level silly-window avoidance: a window that opens by a few bytes sends them.
    pub fill_window: bool,
    /// Subflows run Nagle on the data the MPTCP level gives them.
    pub subflow_nagle: bool,
    /// A subflow's data sits in a write queue of skbs: new data grows the tail skb up to
    /// the size goal, a push marks its last skb with PSH, and GSO packets end at skb
    /// boundaries with PSH on each.
    pub skb_write_queue: bool,
    /// A subflow with nothing outstanding takes the connection's window (it gets no ACK to
    /// refresh its own).
    pub idle_subflows_take_meta_window: bool,
    /// The restart after idle runs where data is queued on a subflow, once per skb, not
    /// where it leaves.
    pub restart_after_idle_on_queue: bool,
    /// The sender's MPTCP window ends at the DATA_ACK plus the subflow's `snd_wnd` as its
    /// ACK left it, and a zero window updates a subflow's `snd_wnd`.
    pub window_from_subflow: bool,

    // Receiving.
    /// Out-of-order data past the MPTCP socket's advertised edge is dropped after the
    /// subflow ACKed it.
    pub drop_ofo_beyond_edge: bool,
    /// An immediate ACK leaves before the woken reader reads, and the subflow's rules for
    /// ACKing two segments apply; otherwise the reader's ACK follows its read.
    pub ack_before_reader: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stack_has_its_policy_and_the_two_differ_in_every_behaviour_but_none() {
        let (o, u) = (Stack::OutOfTree.policy(), Stack::Upstream.policy());
        assert_eq!(Stack::default(), Stack::OutOfTree);
        assert_eq!((o.dss_bytes, u.dss_bytes), (20, 24));
        assert_eq!((o.subflow_order, u.subflow_order), (SubflowOrder::NewestFirst, SubflowOrder::OldestFirst));
        assert_eq!((o.pm_start, u.pm_start), (PmStart::SynAck, PmStart::FullyEstablished));
        assert_eq!((o.send_memory, u.send_memory), (SendMemory::Payload, SendMemory::Frags));
        assert_eq!((o.max_sack_blocks, u.max_sack_blocks), (None, Some(1)));
        let flags = |p: StackPolicy| [
            p.dss_off_mss, p.reinject_on_subflow_rto, p.meta_retransmit_timer, p.send_buffer_autotunes,
            p.subflow_send_memory, p.fill_window, p.subflow_nagle, p.skb_write_queue,
            p.idle_subflows_take_meta_window, p.restart_after_idle_on_queue, p.window_from_subflow,
            p.drop_ofo_beyond_edge, p.ack_before_reader,
        ];
        // Out-of-tree reinjects on a subflow RTO and shares the window with idle subflows;
        // every other behaviour is upstream's.
        assert_eq!(flags(o), [false, true, false, false, false, false, false, false, true, false, false, false, false]);
        assert_eq!(flags(u), [true, false, true, true, true, true, true, true, false, true, true, true, true]);
    }
}
