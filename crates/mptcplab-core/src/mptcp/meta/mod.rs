//! Connection-level (meta) state (RFC 8684 §3.3; reference `tcp.md` §1.5), one module per
//! end:
//!
//! | file | owns |
//! |---|---|
//! | `sender.rs` | `MetaSender`: the 64-bit data sequence space, the bounded shared send buffer, the mappings handed to subflows until their DATA_ACK, the reinjection queue |
//! | `receiver.rs` | `MetaReceiver`: in-order delivery, the out-of-order queue, the shared receive buffer and the window (edge) it announces |
//!
//! The connection (`mptcp::conn`) drives both through these types' methods; neither sees
//! the subflows.

mod receiver;
mod sender;

pub use receiver::{MetaReceiver, SYN_WINDOW_MAX};
pub use sender::{MetaSeg, MetaSender, SegTimes, VIA_NONE};
