//! The MPTCP connection: subflows, the shared buffers, the scheduler and the path manager.
//! A plain TCP flow is the same machinery with one subflow and no MPTCP options.

pub mod conn;
pub mod meta;
pub mod pm;
pub mod rcvmem;
pub mod scheduler;
pub mod stack;
pub mod upstream;

pub use conn::{ConnConfig, Connection, SubState, Subflow};
