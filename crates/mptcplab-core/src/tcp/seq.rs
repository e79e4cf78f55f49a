//! 32-bit wrapping subflow sequence arithmetic (RFC 793 §3.3, RFC 1982).

#[inline]
pub fn before(a: u32, b: u32) -> bool { (a.wrapping_sub(b) as i32) < 0 }
#[inline]
pub fn after(a: u32, b: u32) -> bool { before(b, a) }
/// Distance from `base` forward to `x`.
#[inline]
pub fn off(x: u32, base: u32) -> u32 { x.wrapping_sub(base) }

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn comparisons_survive_wrap_around() {
        assert!(before(0xffff_fff0, 0x10));
        assert!(after(0x10, 0xffff_fff0));
        assert!(!before(5, 5));
        assert_eq!(off(0x10, 0xffff_fff0), 0x20);
    }
}
