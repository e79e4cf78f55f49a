pub mod link;
pub mod loss;
pub mod packet;

pub use link::{LinkDir, LinkChange, Offer};
pub use packet::{Packet, PacketKind};

/// Every route's link directions, in order, in one array with a fixed stride (a power
/// of two, more than the longest route): route `r`'s hop `h` is `hops[r << shift | h]`,
/// and each route ends with `END`. A packet's next link is one load from a small array,
/// not a pointer chase through a `Vec` per route (issue 16, perf at a k = 8 FatTree: the
/// route's own allocation missed the cache on most hops), nor a load of the route's
/// start first (a table of starts cost a D1 miss on most hops too, cachegrind).
/// Routes are pushed while the world is built; a longer one widens the stride of all.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    shift: u32,
    count: usize,
    hops: Vec<u32>,
}

impl Routes {
    /// Marks the end of a route.
    pub const END: u32 = u32::MAX;

    pub fn push(&mut self, hops: &[u32]) {
        let need = (hops.len() + 1).next_power_of_two().trailing_zeros();
        if need > self.shift {
            self.restride(need);
        }
        let base = self.count << self.shift;
        self.hops.resize(base + (1 << self.shift), Self::END);
        self.hops[base..base + hops.len()].copy_from_slice(hops);
        self.count += 1;
    }

    /// Lay the routes out again with a stride of `1 << shift`.
    fn restride(&mut self, shift: u32) {
        let (old, old_shift) = (std::mem::take(&mut self.hops), self.shift);
        self.shift = shift;
        self.hops = vec![Self::END; self.count << shift];
        for r in 0..self.count {
            let n = 1usize << old_shift;
            self.hops[r << shift..(r << shift) + n].copy_from_slice(&old[r << old_shift..(r << old_shift) + n]);
        }
    }

    /// Link direction of hop `hop` on route `route`, or `END` past its last hop.
    #[inline]
    pub fn hop(&self, route: u32, hop: u16) -> u32 { self.hops[(route as usize) << self.shift | hop as usize] }
}

#[cfg(test)]
mod tests {
    use super::Routes;

    #[test]
    fn routes_of_any_lengths_read_back_hop_by_hop() {
        let lens = [2usize, 1, 6, 0, 3, 15, 4];
        let mut r = Routes::default();
        for (i, &n) in lens.iter().enumerate() {
            r.push(&(0..n as u32).map(|h| 100 * i as u32 + h).collect::<Vec<_>>());
        }
        for (i, &n) in lens.iter().enumerate() {
            for h in 0..n {
                assert_eq!(r.hop(i as u32, h as u16), 100 * i as u32 + h as u32, "route {i} hop {h}");
            }
            assert_eq!(r.hop(i as u32, n as u16), Routes::END, "route {i} ends");
        }
    }
}
