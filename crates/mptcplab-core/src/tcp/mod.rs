//! One TCP subflow: sender (`sender`) with its SACK scoreboard (`scoreboard`), Linux
//! RTT/RTO estimation, PRR or NewReno recovery; receiver with SACK blocks and Linux-like
//! delayed ACKs.
//! Reference `tcp.md`.

pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod seq;

pub use receiver::{AckDecision, LinuxAcks, SubflowRx};
pub use rtt::RttEstimator;
pub use sender::{BaseKernel, BufferAccounting, CwndValidation, LossDetection, ReceiveMemory, Recovery, SubflowTx, TcpConfig, TimerOutcome, XmitTimer};
