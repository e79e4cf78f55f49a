//! Named, portable random streams derived from one seed.
//!
//! The name -> stream derivation is pinned here (FNV-1a 64 of the name, mixed with the
//! seed through SplitMix64), not `std::hash`, whose output may change between Rust
//! releases. The generator is xoshiro256** (Blackman & Vigna 2018), implemented here so
//! that its output is fixed by this file alone.

/// FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 step (Steele, Lea, Flood 2014), used to expand seeds.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The SplitMix64 state the stream called `name` is expanded from. The kernel
    /// backend's forwarder seeds its loss generators with it, so that a scenario's seed
    /// drops the same frames on both backends (python/mptcplab/kernel/forwarder.c).
    pub fn stream_state(seed: u64, name: &str) -> u64 {
        seed ^ fnv1a64(name.as_bytes()).rotate_left(17)
    }

    /// The stream called `name` under `seed`. Different names give independent streams,
    /// so adding a component never perturbs the streams of the others.
    pub fn stream(seed: u64, name: &str) -> Rng {
        let mut st = Rng::stream_state(seed, name);
        let mut s = [0u64; 4];
        for x in s.iter_mut() {
            *x = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// xoshiro256** next().
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.next_f64() < p)
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { ((self.next_u64() as u128 * n as u128) >> 64) as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_pinned_and_independent_of_each_other() {
        // Pinned values: if these change, every stored result changes. Do not edit casually.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        let mut a = Rng::stream(1, "link/a/forward/loss");
        let mut a2 = Rng::stream(1, "link/a/forward/loss");
        let mut b = Rng::stream(1, "link/b/forward/loss");
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xa2: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xa, xa2);
        assert_ne!(xa, xb);
        assert_ne!(Rng::stream(2, "link/a/forward/loss").next_u64(), xa[0]);
    }

    #[test]
    fn uniform_floats_have_the_right_mean() {
        let mut r = Rng::stream(7, "t");
        let n = 100_000;
        let hits = (0..n).filter(|_| r.chance(0.01)).count();
        assert!((800..1200).contains(&hits), "{hits}");
    }
}
