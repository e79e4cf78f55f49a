pub mod link;
pub mod loss;
pub mod packet;

pub use link::{LinkDir, LinkChange, Offer};
pub use packet::{Packet, PacketKind};

/// Every route's link directions, in order, in one array: route `r`'s hop `h` is
/// `hops[start[r] + h]`, and each route ends with `END`. A packet's next link is one load
/// from a small array rather than a pointer chase through a `Vec` per route (issue 16,
/// perf at a k = 8 FatTree: the route's own allocation missed the cache on most hops).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    start: Vec<u32>,
    hops: Vec<u32>,
}

impl Routes {
    /// Marks the end of a route.
    pub const END: u32 = u32::MAX;

    pub fn push(&mut self, hops: &[u32]) {
        self.start.push(self.hops.len() as u32);
        self.hops.extend_from_slice(hops);
        self.hops.push(Self::END);
    }

    /// Link direction of hop `hop` on route `route`, or `END` past its last hop.
    #[inline]
    pub fn hop(&self, route: u32, hop: u16) -> u32 { self.hops[self.start[route as usize] as usize + hop as usize] }
}
