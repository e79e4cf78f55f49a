//! Streaming delay metrics: a sample per data segment at its DATA_ACK (seed 002
//! Sec. IV: protocol delay, θ and τ; docs/streaming.md).

use super::*;

/// One data segment at its DATA_ACK (seed 002 Sec. IV, sample k; docs/streaming.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelaySample {
    /// The DATA_ACK instant.
    pub at: SimTime,
    pub dsn: u64,
    pub len: u32,
    /// When the MPTCP level took the segment from the send buffer.
    pub taken_at: SimTime,
    /// The subflow whose copy reached the receiver first.
    pub via: Option<usize>,
    /// θ on that subflow: the copy's sending time − `taken_at` (0 on every other subflow).
    pub theta: SimTime,
    /// τ (SRTT) of that subflow at `at`.
    pub tau_via: SimTime,
    /// Eq. 2 and 7 over the established subflows.
    pub model: PathDelay,
}

impl DelaySample {
    /// The protocol delay measured directly: from the MPTCP level taking the data to its
    /// DATA_ACK (seed 002 Sec. IV.B, first paragraph).
    pub fn measured(&self) -> SimTime { self.at - self.taken_at }
}

impl Connection {
    /// One sample per segment that `data_ack` acknowledges in full (seed 002 Sec. IV: a
    /// sample k is a data segment at its DATA_ACK). Per established subflow i, τ_i is its
    /// SRTT now and θ_i the time the data waited at the sender before going out on i:
    /// for the subflow whose copy arrived first, that copy's sending time minus the
    /// moment the MPTCP level took the data; 0 for the others, which hold the data back
    /// only through their SRTT (docs/streaming.md, "Reading θ_i").
    pub(super) fn record_delay_samples(&mut self, now: SimTime, data_ack: u64) {
        // (`times` runs in step with `segs` in a connection that collects samples.)
        for (seg, times) in self.snd.segs.iter().zip(self.snd.times.iter()) {
            if seg.dsn + seg.len as u64 > data_ack {
                break;
            }
            let via = (seg.via != VIA_NONE).then_some(seg.via as usize);
            let theta = if via.is_some() { times.via_sent_at.saturating_sub(times.taken_at) } else { SimTime::ZERO };
            let subs = &self.subflows;
            let established = |s: &Subflow| s.state == SubState::Established && s.tx.st.srtt > SimTime::ZERO;
            let model = path_delay(subs.iter().enumerate().filter(|(_, s)| established(s)).map(|(j, s)| (s.tx.st.srtt, if Some(j) == via { theta } else { SimTime::ZERO })));
            let tau_via = via.and_then(|j| subs.get(j)).map_or(SimTime::ZERO, |s| s.tx.st.srtt);
            self.obs.delay_sample(DelaySample { at: now, dsn: seg.dsn, len: seg.len, taken_at: times.taken_at, via, theta, tau_via, model });
            for s in self.subflows.iter_mut().filter(|s| established(s)) {
                let srtt = s.tx.st.srtt;
                s.tau.samples += 1;
                s.tau.sum_ms += srtt.ms_f64();
                s.tau.max = s.tau.max.max(srtt);
            }
        }
    }

    /// Delay samples since the last call, oldest first.
    pub fn poll_delay_samples(&mut self) -> std::vec::Drain<'_, DelaySample> { self.obs.poll_delay() }

    /// Delay samples wait to be collected.
    #[inline]
    pub fn has_delay_samples(&self) -> bool { self.obs.has_delay() }
}
