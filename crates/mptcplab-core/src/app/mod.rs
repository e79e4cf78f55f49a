//! Applications: what writes into a connection's send buffer. Sans-IO like the rest: the
//! connection asks how much the application writes now, given the free buffer space, and
//! a streaming application asks for a timer at its next frame (`poll_timeout`).

use crate::units::SimTime;

/// Bulk transfer: writes as fast as the send buffer allows, `total` bytes or unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bulk {
    pub total: Option<u64>,
    /// A writer that waits for the socket to poll writeable (POLLOUT) before each write of
    /// at most this many bytes, the rest of a chunk at fixed offsets of the stream (the
    /// kernel backend's Python writer, a socket with a timeout: CPython polls before every
    /// `send`). None: a blocking writer that fills the buffer.
    pub poll_chunk: Option<u64>,
}

impl Bulk {
    pub fn unbounded() -> Bulk { Bulk { total: None, poll_chunk: None } }
}

/// Default stream rate: 4.5 Mbit/s (docs/streaming.md: seed 002 gives no stream rate;
/// its Table 1 throughputs lie between 3.69 and 5.49 Mbit/s, 4.53 Mbit/s on average).
pub const DEFAULT_STREAM_BITRATE: &str = "4.5 Mbit/s";
/// Default frame rate, frames per second.
pub const DEFAULT_FRAME_RATE: f64 = 30.0;

/// What happened to one frame, and when (None: not yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRecord {
    /// When the application generated it (its scheduled write).
    pub scheduled: SimTime,
    /// Size in bytes, and the data-sequence offset just past its last byte.
    pub size: u32,
    pub end: u64,
    /// Its last byte entered the MPTCP send buffer (left the application queue).
    pub enqueued: Option<SimTime>,
    /// Its last byte was taken from the send buffer by the MPTCP level (handed to a subflow).
    pub taken: Option<SimTime>,
    /// Its last byte was DATA_ACKed.
    pub acked: Option<SimTime>,
    /// Its last byte was delivered in order to (read by) the receiving application.
    pub delivered: Option<SimTime>,
}

/// Streaming: one frame of `bitrate / frame_rate` bits every `1 / frame_rate` seconds,
/// written into the send buffer; what does not fit waits, in order, in the application's
/// own queue. The frame clock starts when the connection is established (the moment a
/// blocking `connect()` returns).
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    pub bitrate_bps: f64,
    pub frame_rate: f64,
    /// Frames to write in all (from the app's `duration`), or unbounded.
    pub frames: Option<u64>,
    origin: Option<SimTime>,
    /// Bytes generated so far (the frames in `log`).
    generated: u64,
    pub log: Vec<FrameRecord>,
    /// Next frame whose enqueued / taken / acked / delivered time is still unknown.
    cursor: [usize; 4],
}

impl Stream {
    pub fn new(bitrate_bps: f64, frame_rate: f64, frames: Option<u64>) -> Stream {
        Stream { bitrate_bps, frame_rate, frames, origin: None, generated: 0, log: Vec::new(), cursor: [0; 4] }
    }

    /// Data offset just past frame `k`: `floor((k + 1) · bitrate / (8 · frame_rate))`, so
    /// frame sizes differ by at most one byte and the long-run rate is exact.
    pub fn frame_end(&self, k: u64) -> u64 { ((k + 1) as f64 * self.bitrate_bps / (8.0 * self.frame_rate)).floor() as u64 }

    /// Offset of frame `k` from the frame clock's origin: `round(k / frame_rate)`.
    pub fn frame_offset(&self, k: u64) -> SimTime { SimTime((k as f64 * 1e9 / self.frame_rate).round() as u64) }

    /// Number of frames in `duration`: those scheduled strictly before it.
    pub fn frames_in(bitrate_bps: f64, frame_rate: f64, duration: SimTime) -> u64 {
        let s = Stream::new(bitrate_bps, frame_rate, None);
        let mut n = (duration.secs_f64() * frame_rate).ceil().max(0.0) as u64;
        // Correct the float estimate against the exact schedule.
        while n > 0 && s.frame_offset(n - 1) >= duration {
            n -= 1;
        }
        while s.frame_offset(n) < duration {
            n += 1;
        }
        n
    }

    fn due(&self) -> Option<SimTime> {
        let k = self.log.len() as u64;
        if self.frames.is_some_and(|n| k >= n) {
            return None;
        }
        Some(self.origin? + self.frame_offset(k))
    }

    /// Generate every frame due at or before `now`.
    fn generate(&mut self, now: SimTime) {
        while let Some(t) = self.due() {
            if t > now {
                break;
            }
            let k = self.log.len() as u64;
            let end = self.frame_end(k);
            let size = (end - self.generated) as u32;
            self.generated = end;
            self.log.push(FrameRecord { scheduled: t, size, end, enqueued: None, taken: None, acked: None, delivered: None });
        }
    }

    /// Record the frames whose last byte has passed each stage: accepted into the send
    /// buffer (`written`), taken by the MPTCP level (`taken`), DATA_ACKed (`acked`),
    /// delivered in order to the receiving application (`delivered`).
    fn note(&mut self, now: SimTime, counters: [u64; 4]) {
        for (stage, &c) in counters.iter().enumerate() {
            let mut k = self.cursor[stage];
            while k < self.log.len() && self.log[k].end <= c {
                let r = &mut self.log[k];
                let slot = match stage {
                    0 => &mut r.enqueued,
                    1 => &mut r.taken,
                    2 => &mut r.acked,
                    _ => &mut r.delivered,
                };
                *slot = Some(now);
                k += 1;
            }
            self.cursor[stage] = k;
        }
    }
}

/// Built-in applications.
#[derive(Clone, Debug, PartialEq)]
pub enum App {
    Bulk(Bulk),
    Stream(Stream),
}

impl App {
    /// Bytes the application writes at `now`, given `written` so far and `space` free
    /// bytes in the send buffer.
    #[inline]
    pub fn poll_write(&mut self, _now: SimTime, written: u64, space: u64) -> u64 {
        match self {
            App::Bulk(b) => b.total.map_or(space, |t| t.saturating_sub(written).min(space)),
            App::Stream(s) => s.generated.saturating_sub(written).min(space),
        }
    }

    /// The chunk of a writer that polls before each write (`Bulk::poll_chunk`).
    #[inline]
    pub fn poll_chunk(&self) -> Option<u64> {
        match self {
            App::Bulk(b) => b.poll_chunk,
            App::Stream(_) => None,
        }
    }

    /// The application still has data to write (used for Linux's SOCK_NOSPACE: blocked on
    /// a full send buffer). A stream wants more while frames wait in its queue.
    #[inline]
    pub fn wants_more(&self, written: u64) -> bool {
        match self {
            App::Bulk(b) => b.total.map_or(true, |t| written < t),
            App::Stream(s) => s.generated > written,
        }
    }

    /// Bytes the application will write in all, if it is bounded.
    #[inline]
    pub fn total(&self) -> Option<u64> {
        match self {
            App::Bulk(b) => b.total,
            App::Stream(s) => s.frames.map(|n| if n == 0 { 0 } else { s.frame_end(n - 1) }),
        }
    }

    /// The connection is established: a stream starts its frame clock and writes frame 0.
    pub fn on_established(&mut self, now: SimTime) {
        if let App::Stream(s) = self {
            if s.origin.is_none() {
                s.origin = Some(now);
                s.generate(now);
            }
        }
    }

    /// When the application wants `handle_timeout` (a stream's next frame).
    #[inline]
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match self {
            App::Bulk(_) => None,
            App::Stream(s) => s.due(),
        }
    }

    /// The application's timer: a stream generates the frames now due.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if let App::Stream(s) = self {
            s.generate(now);
        }
    }

    /// Progress of the data (see `Stream::note`); a no-op for bulk transfers.
    #[inline]
    pub fn note_progress(&mut self, now: SimTime, written: u64, taken: u64, acked: u64, delivered: u64) {
        if let App::Stream(s) = self {
            s.note(now, [written, taken, acked, delivered]);
        }
    }

    /// A stream's frames, oldest first (empty for other applications).
    pub fn frames(&self) -> &[FrameRecord] {
        match self {
            App::Stream(s) => &s.log,
            App::Bulk(_) => &[],
        }
    }
}

pub struct AppInfo {
    pub name: &'static str,
    pub description: &'static str,
}

pub const REGISTRY: &[AppInfo] = &[
    AppInfo { name: "bulk", description: "Bulk transfer: writes as fast as the send buffer allows, unbounded or `size` bytes" },
    AppInfo {
        name: "stream",
        description: "Streaming: one frame of bitrate/frame_rate bits every 1/frame_rate s (default 4.5 Mbit/s, 30 frame/s) from establishment, for `duration` or the whole run; frames that do not fit in the send buffer wait in order; per-frame lateness and per-segment delay samples (docs/streaming.md)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_fills_the_buffer_and_stops_at_its_size() {
        let mut a = App::Bulk(Bulk { total: Some(10_000), poll_chunk: None });
        assert_eq!(a.poll_write(SimTime::ZERO, 0, 4_000), 4_000);
        assert_eq!(a.poll_write(SimTime::ZERO, 8_000, 4_000), 2_000);
        assert!(!a.wants_more(10_000));
        let mut u = App::Bulk(Bulk::unbounded());
        assert_eq!(u.poll_write(SimTime::ZERO, 1 << 40, 123), 123);
        assert!(u.wants_more(1 << 40));
    }

    #[test]
    fn a_stream_writes_one_frame_per_period_and_its_sizes_add_up_to_the_bitrate() {
        // 4.5 Mbit/s at 30 frame/s: 18 750 B per frame, one every 33.333 ms.
        let mut a = App::Stream(Stream::new(4.5e6, 30.0, None));
        assert_eq!(a.poll_timeout(), None, "no frame before the connection is established");
        let t0 = SimTime::from_ms(100);
        a.on_established(t0);
        assert_eq!(a.frames().len(), 1);
        assert_eq!(a.frames()[0].size, 18_750);
        assert_eq!(a.poll_timeout(), Some(t0 + SimTime(33_333_333)));
        a.handle_timeout(t0 + SimTime::from_secs(1) - SimTime(1));
        assert_eq!(a.frames().len(), 30, "frames 0..29 in the first second");
        a.handle_timeout(t0 + SimTime::from_secs(1));
        assert_eq!(a.frames().len(), 31);
        assert_eq!(a.frames()[30].scheduled, t0 + SimTime::from_secs(1));
        // 30 frames = one second = 4.5 Mbit exactly.
        assert_eq!(a.frames()[29].end * 8, 4_500_000);
        // A rate that does not divide evenly: sizes differ by at most a byte, sum exact.
        let s = Stream::new(1e6, 29.97, None);
        let sizes: Vec<u64> = (0..3000).map(|k| s.frame_end(k) - if k == 0 { 0 } else { s.frame_end(k - 1) }).collect();
        assert!(sizes.iter().all(|&z| z == 4170 || z == 4171), "{:?}", &sizes[..5]);
        assert_eq!(s.frame_end(2996), (2997.0_f64 * 1e6 / (8.0 * 29.97)).floor() as u64);
    }

    #[test]
    fn frames_that_do_not_fit_wait_in_order_and_their_progress_is_recorded() {
        let mut a = App::Stream(Stream::new(8_000.0 * 8.0 * 10.0, 10.0, Some(3)));
        assert_eq!(a.total(), Some(24_000));
        a.on_established(SimTime::ZERO);
        a.handle_timeout(SimTime::from_ms(250));
        assert_eq!(a.frames().len(), 3);
        assert_eq!(a.poll_timeout(), None, "bounded: three frames only");
        // 24 000 B generated, 5 000 B of buffer space: the rest waits in the app queue.
        assert_eq!(a.poll_write(SimTime::ZERO, 0, 5_000), 5_000);
        assert!(a.wants_more(5_000));
        assert_eq!(a.poll_write(SimTime::ZERO, 5_000, 100_000), 19_000);
        assert!(!a.wants_more(24_000));
        a.note_progress(SimTime::from_ms(300), 16_000, 8_000, 7_999, 0);
        let f = a.frames();
        assert_eq!((f[0].enqueued, f[1].enqueued, f[2].enqueued), (Some(SimTime::from_ms(300)), Some(SimTime::from_ms(300)), None));
        assert_eq!((f[0].taken, f[1].taken), (Some(SimTime::from_ms(300)), None));
        assert_eq!(f[0].acked, None, "the last byte of frame 0 is not acknowledged yet");
        a.note_progress(SimTime::from_ms(400), 24_000, 24_000, 24_000, 24_000);
        assert!(a.frames().iter().all(|r| r.delivered == Some(SimTime::from_ms(400)) && r.acked.is_some()));
    }

    #[test]
    fn the_number_of_frames_in_a_duration_counts_those_scheduled_before_its_end() {
        assert_eq!(Stream::frames_in(1e6, 30.0, SimTime::from_secs(1)), 30);
        assert_eq!(Stream::frames_in(1e6, 30.0, SimTime::from_secs(1) + SimTime(1)), 31);
        assert_eq!(Stream::frames_in(1e6, 29.97, SimTime::from_secs(10)), 300);
        assert_eq!(Stream::frames_in(1e6, 30.0, SimTime::from_ms(1)), 1);
    }
}
