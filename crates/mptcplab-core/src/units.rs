//! Typed quantities: virtual time in integer nanoseconds, rates in bit/s, sizes in bytes.
//! Parsing of user-facing strings with explicit units ("100 Mbit/s", "20 ms", "8 MB").

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Virtual time (or a duration) in integer nanoseconds. Nothing in the engine reads a wall clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub const fn from_ns(ns: u64) -> Self { SimTime(ns) }
    pub const fn from_us(us: u64) -> Self { SimTime(us * 1_000) }
    pub const fn from_ms(ms: u64) -> Self { SimTime(ms * 1_000_000) }
    pub const fn from_secs(s: u64) -> Self { SimTime(s * 1_000_000_000) }
    pub fn from_secs_f64(s: f64) -> Self { SimTime((s * 1e9).round().max(0.0) as u64) }
    pub const fn ns(self) -> u64 { self.0 }
    pub const fn us(self) -> u64 { self.0 / 1_000 }
    pub fn secs_f64(self) -> f64 { self.0 as f64 / 1e9 }
    pub fn ms_f64(self) -> f64 { self.0 as f64 / 1e6 }
    pub fn saturating_sub(self, o: SimTime) -> SimTime { SimTime(self.0.saturating_sub(o.0)) }
    pub fn mul(self, k: u64) -> SimTime { SimTime(self.0.saturating_mul(k)) }
}
impl Add for SimTime { type Output = SimTime; fn add(self, o: SimTime) -> SimTime { SimTime(self.0.saturating_add(o.0)) } }
impl AddAssign for SimTime { fn add_assign(&mut self, o: SimTime) { self.0 = self.0.saturating_add(o.0) } }
impl Sub for SimTime { type Output = SimTime; fn sub(self, o: SimTime) -> SimTime { SimTime(self.0.saturating_sub(o.0)) } }
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{:.6} s", self.secs_f64()) }
}

/// A link or pacing rate in bit/s.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Bandwidth(pub f64);

impl Bandwidth {
    pub fn bits_per_sec(self) -> f64 { self.0 }
    pub fn mbps(self) -> f64 { self.0 / 1e6 }
    /// Serialisation time of `bytes` at this rate, rounded up to whole ns.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> SimTime { SimTime(ceil_u64((bytes as f64 * 8.0 * 1e9) / self.0)) }
}

/// `x.ceil() as u64`, exactly (saturating casts included), without the libm call that
/// `f64::ceil` costs on a baseline x86-64 target (once per packet and link).
#[inline]
fn ceil_u64(x: f64) -> u64 {
    let whole = x as u64;
    if (whole as f64) < x { whole.saturating_add(1) } else { whole }
}

/// Upper bounds that keep sums of times and sequence offsets far from overflow.
const MAX_DURATION_NS: f64 = 1e16;
const MAX_SIZE_BYTES: f64 = (1u64 << 50) as f64;

/// Why a unit string did not parse; the caller adds the field path.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitError(pub String);

fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let t = s.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || ((c == '-' || c == '+') && i == 0) || c == 'e' && i > 0 && t[..i].chars().all(|d| d.is_ascii_digit() || d == '.')))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let v: f64 = num.parse().map_err(|_| UnitError(format!("expected a number followed by a unit, got {s:?}")))?;
    if !v.is_finite() {
        return Err(UnitError(format!("expected a finite number, got {s:?}")));
    }
    Ok((v, unit.trim()))
}

fn require_unit<'a>(s: &str, unit: &'a str, examples: &str) -> Result<&'a str, UnitError> {
    if unit.is_empty() {
        return Err(UnitError(format!("{s:?} has no unit; write it with one, e.g. {examples}")));
    }
    Ok(unit)
}

/// "20 ms", "1.5 s", "250 us", "100 ns". Must be >= 0.
pub fn parse_duration(s: &str) -> Result<SimTime, UnitError> {
    let ex = "\"20 ms\" or \"1.5 s\"";
    let (v, unit) = split_number(s)?;
    let mult = match require_unit(s, unit, ex)? {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        u => return Err(UnitError(format!("unknown time unit {u:?} in {s:?}; use ns, us, ms, s or min, e.g. {ex}"))),
    };
    if v < 0.0 {
        return Err(UnitError(format!("expected a duration >= 0, got {s:?}")));
    }
    // Bound everything so that sums of times cannot overflow (~116 days).
    if v * mult > MAX_DURATION_NS {
        return Err(UnitError(format!("expected a duration of at most 1e7 s, got {s:?}")));
    }
    Ok(SimTime((v * mult).round() as u64))
}

/// "100 Mbit/s", "64 kbit/s", "1 Gbps". Must be > 0.
pub fn parse_rate(s: &str) -> Result<Bandwidth, UnitError> {
    let ex = "\"100 Mbit/s\" or \"512 kbit/s\"";
    let (v, unit) = split_number(s)?;
    let mult = match require_unit(s, unit, ex)? {
        "bit/s" | "bps" => 1.0,
        "kbit/s" | "kbps" | "Kbit/s" => 1e3,
        "Mbit/s" | "Mbps" => 1e6,
        "Gbit/s" | "Gbps" => 1e9,
        u if u.ends_with("bit") || u == "M" || u == "K" || u == "k" || u == "G" =>
            return Err(UnitError(format!("rate unit {u:?} in {s:?} is incomplete; write e.g. {ex}"))),
        u if u.contains("B/s") || u.contains("byte") =>
            return Err(UnitError(format!("rates are in bits per second; {u:?} in {s:?} is not accepted, write e.g. {ex}"))),
        u => return Err(UnitError(format!("unknown rate unit {u:?} in {s:?}; use bit/s, kbit/s, Mbit/s or Gbit/s, e.g. {ex}"))),
    };
    if v <= 0.0 {
        return Err(UnitError(format!("expected a rate > 0, got {s:?}")));
    }
    let bps = v * mult;
    if !(1.0..=1e13).contains(&bps) {
        return Err(UnitError(format!("expected a rate between 1 bit/s and 10 Tbit/s, got {s:?}")));
    }
    Ok(Bandwidth(bps))
}

/// "1448 B", "200 KB" (1000 B), "8 MiB" (1024² B). Must be >= 0.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let ex = "\"200 KB\" or \"8 MiB\"";
    let (v, unit) = split_number(s)?;
    let mult: f64 = match require_unit(s, unit, ex)? {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "K" | "k" | "M" | "G" => {
            return Err(UnitError(format!("{unit:?} alone is ambiguous in {s:?}; write KB (1000 B) or KiB (1024 B), e.g. {ex}")))
        }
        u => return Err(UnitError(format!("unknown size unit {u:?} in {s:?}; use B, KB, MB, GB, KiB, MiB or GiB, e.g. {ex}"))),
    };
    if v < 0.0 {
        return Err(UnitError(format!("expected a size >= 0, got {s:?}")));
    }
    if v * mult > MAX_SIZE_BYTES {
        return Err(UnitError(format!("expected a size of at most 1 PiB, got {s:?}")));
    }
    Ok((v * mult).round() as u64)
}

/// A DropTail limit: "100 pkt" or a size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

pub fn parse_queue(s: &str) -> Result<QueueLimit, UnitError> {
    let (v, unit) = split_number(s)?;
    match unit {
        "pkt" | "pkts" | "packets" | "packet" => {
            if v < 1.0 || v.fract() != 0.0 || v > 1e9 {
                return Err(UnitError(format!("expected a whole number of packets from 1 to 1e9, got {s:?}")));
            }
            Ok(QueueLimit::Packets(v as u32))
        }
        "" => Err(UnitError(format!("{s:?} has no unit; write \"100 pkt\" or a size such as \"150 KB\""))),
        _ => {
            let b = parse_size(s)?;
            if b == 0 {
                return Err(UnitError(format!("expected a queue limit > 0, got {s:?}")));
            }
            Ok(QueueLimit::Bytes(b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_explicit_units_only() {
        assert_eq!(parse_duration("20 ms").unwrap(), SimTime::from_ms(20));
        assert_eq!(parse_duration("1.5 s").unwrap(), SimTime::from_ms(1500));
        assert_eq!(parse_duration("250us").unwrap(), SimTime::from_us(250));
        assert!(parse_duration("20").unwrap_err().0.contains("no unit"));
        assert!(parse_duration("-1 s").is_err());
        assert!(parse_duration("NaN s").is_err());
    }

    #[test]
    fn rates_reject_bare_k_and_bytes() {
        assert_eq!(parse_rate("100 Mbit/s").unwrap().0, 100e6);
        assert_eq!(parse_rate("64 kbit/s").unwrap().0, 64e3);
        assert!(parse_rate("100 K").is_err());
        assert!(parse_rate("100").unwrap_err().0.contains("no unit"));
        assert!(parse_rate("10 Mbit").unwrap_err().0.contains("incomplete"));
        assert!(parse_rate("0 Mbit/s").unwrap_err().0.contains("> 0"));
        assert!(parse_rate("-5 Mbit/s").is_err());
        assert!(parse_rate("1e30 Gbit/s").unwrap_err().0.contains("10 Tbit/s"));
        assert!(parse_rate("1e-30 bit/s").is_err());
    }

    #[test]
    fn absurd_magnitudes_are_rejected_before_they_can_overflow() {
        assert!(parse_duration("1e30 s").unwrap_err().0.contains("at most"));
        assert!(parse_size("1e30 GB").unwrap_err().0.contains("1 PiB"));
        assert!(parse_queue("4294967296 pkt").is_err());
        assert!(parse_duration("1e7 s").is_ok());
    }

    #[test]
    fn sizes_distinguish_decimal_and_binary_prefixes() {
        assert_eq!(parse_size("200 KB").unwrap(), 200_000);
        assert_eq!(parse_size("1 KiB").unwrap(), 1024);
        assert_eq!(parse_size("8 MiB").unwrap(), 8 * 1024 * 1024);
        assert!(parse_size("8 K").unwrap_err().0.contains("ambiguous"));
        assert_eq!(parse_queue("100 pkt").unwrap(), QueueLimit::Packets(100));
        assert_eq!(parse_queue("150 KB").unwrap(), QueueLimit::Bytes(150_000));
        assert!(parse_queue("100").is_err());
    }

    #[test]
    fn ceil_u64_is_ceil_then_cast() {
        let xs = [0.0, -0.0, 0.3, 1.0, 1.5, 2.0 - 1e-15, 4.5e15 + 0.5, 9.007199254740993e15, 1.8446744073709552e19, 3e19, -0.7, -5.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE];
        for x in xs.into_iter().chain((1..2000).map(|k| 12_000_000.0 * k as f64 / 7.3)) {
            assert_eq!(ceil_u64(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn tx_time_rounds_up_to_whole_nanoseconds() {
        // 1500 B at 100 Mbit/s = 120 us exactly.
        assert_eq!(Bandwidth(100e6).tx_time(1500), SimTime::from_us(120));
        assert_eq!(Bandwidth(3e6).tx_time(1), SimTime(2667));
    }
}
