//! Applications: what writes into a connection's send buffer. Sans-IO like the rest: the
//! connection asks how much the application writes now, given the free buffer space.

use crate::units::SimTime;

/// Bulk transfer: writes as fast as the send buffer allows, `total` bytes or unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bulk {
    pub total: Option<u64>,
}

/// Built-in applications.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum App {
    Bulk(Bulk),
}

impl App {
    /// Bytes the application writes at `now`, given `written` so far and `space` free
    /// bytes in the send buffer.
    pub fn poll_write(&mut self, _now: SimTime, written: u64, space: u64) -> u64 {
        match self {
            App::Bulk(b) => b.total.map_or(space, |t| t.saturating_sub(written).min(space)),
        }
    }

    /// The application still has data to write (used for Linux's SOCK_NOSPACE: blocked on
    /// a full send buffer).
    pub fn wants_more(&self, written: u64) -> bool {
        match self {
            App::Bulk(b) => b.total.map_or(true, |t| written < t),
        }
    }

    /// Bytes the application will write in all, if it is bounded.
    pub fn total(&self) -> Option<u64> {
        match self {
            App::Bulk(b) => b.total,
        }
    }
}

pub struct AppInfo {
    pub name: &'static str,
    pub description: &'static str,
}

pub const REGISTRY: &[AppInfo] = &[AppInfo { name: "bulk", description: "Bulk transfer: writes as fast as the send buffer allows, unbounded or `size` bytes" }];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_fills_the_buffer_and_stops_at_its_size() {
        let mut a = App::Bulk(Bulk { total: Some(10_000) });
        assert_eq!(a.poll_write(SimTime::ZERO, 0, 4_000), 4_000);
        assert_eq!(a.poll_write(SimTime::ZERO, 8_000, 4_000), 2_000);
        assert!(!a.wants_more(10_000));
        let mut u = App::Bulk(Bulk { total: None });
        assert_eq!(u.poll_write(SimTime::ZERO, 1 << 40, 123), 123);
        assert!(u.wants_more(1 << 40));
    }
}
