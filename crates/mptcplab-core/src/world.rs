//! The simulator: one owned value with `now`, the event queue, the links and the
//! connections (smoltcp `netsim`, htsim routes). `step`, `run_until` and `run`.

use crate::metrics::{CcSnapshot, FrameTable, Metrics};
use crate::mptcp::conn::{Connection, SubState, TimerRequest};
use crate::mptcp::scheduler::MinRttOptions;
use crate::mptcp::pm;
use crate::net::{LinkDir, Offer, Packet, PacketKind, Routes};
use crate::pcap::{PcapError, PcapWriter, SubflowInfo};
use crate::rng::Rng;
use crate::scenario::{Plan, ScenarioError};
use crate::sim::{Event, EventQueue};
use crate::units::SimTime;

/// Totals for benchmarks and summaries.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub data_segments_sent: u64,
    pub acks_sent: u64,
}

/// One row per flow, produced at the end of a run.
#[derive(Clone, Debug)]
pub struct FlowSummary {
    pub name: String,
    pub kind: &'static str,
    pub cc: String,
    pub scheduler: String,
    pub path_manager: String,
    pub subflows: u32,
    pub bytes_delivered: u64,
    pub goodput_mbps: f64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub completion_s: f64,
    pub ooo_max_bytes: u64,
    pub rcvbuf_max_bytes: u64,
}

/// `Simulator::flow_times`.
#[derive(Clone, Debug)]
pub struct FlowTime {
    pub conn: u32,
    pub src: String,
    pub dst: String,
    pub start_s: f64,
    pub size_bytes: f64,
    pub fct_s: f64,
}

#[derive(Clone, Debug)]
pub struct SubflowSummary {
    pub conn: u32,
    pub subflow: u32,
    pub path: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub bytes_acked: u64,
    pub mean_srtt_ms: f64,
    pub throughput_mbps: f64,
    pub rto_count: u64,
    pub recoveries: u64,
    /// Scheduler counters (`SchedCounters`): segments the scheduler sent on the subflow
    /// as new data, from the reinjection queue, and as copies of data sent elsewhere
    /// (redundant copies, opportunistic retransmissions); times its cwnd was penalised.
    pub sched_new_segs: u64,
    pub sched_reinjected_segs: u64,
    pub sched_copied_segs: u64,
    pub sched_penalised: u64,
    /// Data segments sent (retransmissions included) and retransmitted.
    pub segs_sent: u64,
    pub segs_retrans: u64,
    /// Its data packets dropped in the network: DropTail overflow, random loss, link down.
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub drops_down: u64,
    /// Seconds from its establishment to the end of the run (0 if never established).
    pub active_s: f64,
    /// Mean and max of its SRTT over the connection's delay samples (τ_i of seed 002;
    /// NaN without samples).
    pub tau_av_ms: f64,
    pub tau_max_ms: f64,
}

pub struct Simulator {
    pub now: SimTime,
    pub end: SimTime,
    events: EventQueue,
    /// Link directions, indexed by hop id (2·link + direction).
    pub links: Vec<LinkDir>,
    routes: Routes,
    pub conns: Vec<Connection>,
    /// Per connection: the world path index of each connection path.
    pub conn_paths: Vec<Vec<usize>>,
    pub plan: Plan,
    outbox: Vec<Packet>,
    timer_reqs: Vec<TimerRequest>,
    pub metrics: Metrics,
    traced: Vec<bool>,
    sample_interval: SimTime,
    last_sample: SimTime,
    /// Per subflow at the last sample: (bytes_sent, bytes_acked), for the interval rates.
    prev_sub: Vec<Vec<(u64, u64)>>,
    prev_read: Vec<u64>,
    read_tick: SimTime,
    /// The seed the run uses (the scenario's or the override).
    pub seed: u64,
    /// Packet captures (`attach_pcap`); None: the hot path tests this once per packet.
    pcap: Option<Box<PcapWriter>>,
}

impl Simulator {
    /// Build a simulator. `seed` overrides the scenario's; `trace` names flows to trace.
    pub fn new(plan: Plan, seed: Option<u64>, duration: Option<SimTime>, trace: &[String]) -> Result<Simulator, ScenarioError> {
        let seed = seed.unwrap_or(plan.seed);
        let end = duration.unwrap_or(plan.duration);
        let mut links = Vec::with_capacity(plan.links.len() * 2);
        for l in &plan.links {
            for (dir, d) in [("forward", &l.fwd), ("reverse", &l.rev)] {
                let rng = Rng::stream(seed, &format!("link/{}/{}/loss", l.name, dir));
                let mut ld = LinkDir::new(l.name.clone(), dir, d.rate, d.delay, d.queue, d.loss.clone(), rng);
                ld.changes = d.changes.clone();
                if d.jitter > SimTime::ZERO {
                    ld.set_jitter(d.jitter, Rng::stream(seed, &format!("link/{}/{}/jitter", l.name, dir)));
                }
                links.push(ld);
            }
        }
        let mut routes = Routes::default();
        for p in &plan.paths {
            routes.push(&p.fwd_hops);
            routes.push(&p.rev_hops);
        }
        let mut conns = Vec::new();
        let mut conn_paths = Vec::new();
        for (ci, c) in plan.conns.iter().enumerate() {
            let route_pairs: Vec<(u32, u32)> = c.paths.iter().map(|&p| (2 * p as u32, 2 * p as u32 + 1)).collect();
            let backup: Vec<bool> = c.paths.iter().map(|&p| plan.paths[p].backup).collect();
            let iss = Rng::stream(seed, &format!("conn/{}/iss", c.cfg.name));
            let flags = MinRttOptions { opportunistic_retransmission: c.opportunistic_retransmission, penalisation: c.penalisation };
            let sched = crate::mptcp::scheduler::make(&c.scheduler, &c.scheduler_params, flags).map_err(|e| ScenarioError::new("scheduler", e.message))?;
            let path_names: Vec<&str> = c.paths.iter().map(|&p| plan.paths[p].name.as_str()).collect();
            let pmgr = pm::make(&c.path_manager, &c.pm_params, &path_names).map_err(|e| ScenarioError::new("path_manager", e.message))?;
            let mut cfg = c.cfg.clone();
            if plan.start_jitter > SimTime::ZERO {
                let mut r = Rng::stream(seed, &format!("conn/{}/start", c.cfg.name));
                cfg.start += SimTime(r.below(plan.start_jitter.ns()));
            }
            let mut conn = Connection::new(ci as u32, cfg, &route_pairs, &backup, iss, sched, pmgr).map_err(|e| ScenarioError::new("cc", e))?;
            // A Linux 6.x receiver (`tcp.receive_memory = "skb"`, the upstream profile) times
            // its delayed ACKs on the host's jiffy clock, whose phase is the host's: one
            // stream per run, shared by its connections.
            if c.cfg.tcp.receive_memory == crate::tcp::ReceiveMemory::Skb {
                let mut r = Rng::stream(seed, "host/jiffies");
                conn.set_jiffy_phase(r.below(crate::tcp::receiver::JIFFY_NS));
            }
            if plan.join_jitter > SimTime::ZERO {
                conn.set_join_jitter(plan.join_jitter, Rng::stream(seed, &format!("conn/{}/join", c.cfg.name)));
            }
            conns.push(conn);
            conn_paths.push(c.paths.clone());
        }
        let traced: Vec<bool> = plan.conns.iter().map(|c| trace.iter().any(|t| t == &c.cfg.name || t == "all")).collect();
        for (conn, &t) in conns.iter_mut().zip(&traced) {
            conn.obs.trace_sched = t;
        }
        for t in trace {
            if t != "all" && !plan.conns.iter().any(|c| &c.cfg.name == t) {
                return Err(ScenarioError::new("trace", format!("no connection or flow named {t:?} to trace")));
            }
        }
        let mut sim = Simulator {
            now: SimTime::ZERO,
            end,
            events: EventQueue::new(),
            links,
            routes,
            prev_sub: conns.iter().map(|c| vec![(0, 0); c.subflows.len()]).collect(),
            prev_read: vec![0; conns.len()],
            conns,
            conn_paths,
            sample_interval: plan.sample_interval,
            plan,
            outbox: Vec::with_capacity(64),
            timer_reqs: Vec::with_capacity(16),
            metrics: Metrics::default(),
            traced,
            last_sample: SimTime::ZERO,
            read_tick: SimTime::from_ms(1),
            seed,
            pcap: None,
        };
        for (i, c) in sim.conns.iter().enumerate() {
            sim.events.schedule(c.cfg.start, Event::ConnStart { conn: i as u32 });
            if c.cfg.read_rate.is_some() {
                sim.events.schedule(c.cfg.start + sim.read_tick, Event::AppRead { conn: i as u32 });
            }
            if let Some(at) = c.poll_pm_timeout() {
                sim.events.schedule(at, Event::PmTimer { conn: i as u32 });
            }
        }
        for (h, l) in sim.links.iter().enumerate() {
            for (k, ch) in l.changes.iter().enumerate() {
                sim.events.schedule(ch.at, Event::LinkChange { link: h as u32, entry: k as u32 });
            }
        }
        sim.events.schedule(sim.sample_interval, Event::Sample);
        Ok(sim)
    }

    pub fn stats(&self) -> RunStats {
        RunStats {
            events: self.events.handled(),
            data_segments_sent: self.conns.iter().map(|c| c.stats.data_segs_sent).sum(),
            acks_sent: self.conns.iter().map(|c| c.stats.acks_sent).sum(),
        }
    }

    /// Per flow whose subflows send tail loss probes (`tcp.tail_loss_probe`): the probes
    /// sent and the ones that repaired a loss, summed as Linux's TcpExt TCPLossProbes and
    /// TCPLossProbeRecovery sum them over a host's sockets.
    pub fn loss_probes(&self) -> Vec<(&str, u64, u64)> {
        self.conns
            .iter()
            .filter(|c| c.subflows.first().is_some_and(|s| s.tx.cfg.tail_loss_probe))
            .map(|c| {
                let probes = c.subflows.iter().map(|s| s.tx.stats.loss_probes).sum();
                let repaired = c.subflows.iter().map(|s| s.tx.stats.loss_probe_recoveries).sum();
                (c.cfg.name.as_str(), probes, repaired)
            })
            .collect()
    }

    /// Per flow whose subflows run CUBIC: their HyStart exits summed, as Linux's TcpExt
    /// counters sum them over a host's sockets (compared with the kernel's netstat).
    pub fn hystart_exits(&self) -> Vec<(&str, crate::cc::cubic::HystartExits)> {
        self.conns
            .iter()
            .filter_map(|c| {
                let mut sum = crate::cc::cubic::HystartExits::default();
                let mut any = false;
                for s in &c.subflows {
                    if let crate::cc::AnyCc::Cubic(cc) = &s.tx.cc {
                        any = true;
                        sum.merge(&cc.exits);
                    }
                }
                any.then_some((c.cfg.name.as_str(), sum))
            })
            .collect()
    }

    /// Write packet captures: one sink per path of the plan, in its order (`pcap` module).
    /// Attach before the run starts.
    pub fn attach_pcap(&mut self, sinks: Vec<Box<dyn std::io::Write + Send>>) {
        self.pcap = Some(Box::new(PcapWriter::new(&self.plan, self.seed, sinks)));
        for c in self.conns.iter_mut() {
            c.record_prio(c.cfg.mptcp);
        }
    }

    /// Flush and detach the captures: records per path, or the first write error.
    pub fn finish_pcap(&mut self) -> Option<Result<Vec<u64>, PcapError>> {
        for c in self.conns.iter_mut() {
            c.record_prio(false);
        }
        self.pcap.take().map(|w| w.finish())
    }

    /// Write connection `c`'s MP_PRIO signals: the engine changes a subflow's backup flag
    /// without a packet; the capture shows the client's MP_PRIO at that moment.
    #[cold]
    #[inline(never)]
    fn pcap_prio(&mut self, c: usize) {
        let signals = self.conns[c].poll_prio_signals();
        for (i, backup) in signals {
            let conn = &self.conns[c];
            let s = &conn.subflows[i];
            let info = SubflowInfo { mptcp: true, initial: i == conn.cfg.initial_path, backup, mss: s.tx.cfg.mss, wscale: conn.rcv.pcap_wscale() };
            let (route, snd_nxt) = (s.route_fwd, s.tx.snd_nxt);
            if let Some(w) = self.pcap.as_deref_mut() {
                w.on_mp_prio(self.now, c as u32, i as u16, route, snd_nxt, info);
            }
        }
    }

    /// Hand packet `p` to the capture writer as it leaves its source (`arrived` false) or
    /// reaches its destination. Out of line: with captures off, the hot path keeps only
    /// the `is_some` test.
    #[cold]
    #[inline(never)]
    fn pcap_packet(&mut self, p: &Packet, arrived: bool) {
        let c = &self.conns[p.conn as usize];
        let s = &c.subflows[p.sub as usize];
        let info = SubflowInfo { mptcp: c.cfg.mptcp, initial: p.sub as usize == c.cfg.initial_path, backup: s.backup, mss: s.tx.cfg.mss, wscale: c.rcv.pcap_wscale() };
        if let Some(w) = self.pcap.as_deref_mut() {
            if arrived {
                w.on_arrive(self.now, p, info);
            } else {
                w.on_send(self.now, p, info);
            }
        }
    }

    /// Replace a connection's scheduler before the run (plug-ins, e.g. from Python).
    pub fn set_scheduler(&mut self, conn: usize, sched: crate::mptcp::scheduler::AnyScheduler) { self.conns[conn].sched = sched; }

    /// World path index of a subflow.
    fn world_path(&self, conn: usize, sub: usize) -> usize { self.conn_paths[conn][self.conns[conn].subflows[sub].path] }

    pub fn path_name(&self, conn: usize, sub: usize) -> &str { &self.plan.paths[self.world_path(conn, sub)].name }

    /// Handle the next event if it is due before `until`. Returns false when there is none.
    pub fn step(&mut self, until: SimTime) -> bool {
        let Some((t, ev)) = self.events.pop_until(until) else { return false };
        self.now = t;
        self.handle(ev);
        true
    }

    pub fn run_until(&mut self, until: SimTime) {
        let until = until.min(self.end);
        while self.step(until) {}
        if self.now < until {
            self.now = until;
        }
    }

    pub fn run(&mut self) { self.run_until(self.end) }

    pub fn done(&self) -> bool { self.now >= self.end }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::LinkArrive { link, epoch } => {
                let now = self.now;
                let Some((pkt, next)) = self.links[link as usize].pop_arrival(now, epoch) else { return };
                if let Some(at) = next {
                    self.events.schedule(at, Event::LinkArrive { link, epoch });
                }
                self.forward(pkt);
            }
            Event::LinkChange { link, entry } => {
                let l = &mut self.links[link as usize];
                let ch = l.changes[entry as usize].clone();
                if let Some(at) = l.apply(self.now, &ch) {
                    let epoch = l.epoch;
                    self.events.schedule(at, Event::LinkArrive { link, epoch });
                }
            }
            Event::Timer { conn, sub, kind } => {
                let c = conn as usize;
                self.conns[c].on_timer(self.now, sub as usize, kind, &mut self.outbox);
                self.after_conn(c);
            }
            Event::ConnStart { conn } => {
                let c = conn as usize;
                self.conns[c].start(self.now, &mut self.outbox);
                self.after_conn(c);
            }
            Event::AppRead { conn } => {
                let c = conn as usize;
                if let Some(rate) = self.conns[c].cfg.read_rate {
                    let bytes = (rate.0 / 8.0 * self.read_tick.secs_f64()).round() as u64;
                    self.conns[c].app_read(self.now, bytes.max(1), &mut self.outbox);
                    self.after_conn(c);
                    self.events.schedule(self.now + self.read_tick, Event::AppRead { conn });
                }
            }
            Event::Sample => {
                self.sample();
                self.events.schedule(self.now + self.sample_interval, Event::Sample);
            }
            Event::PmTimer { conn } => {
                let c = conn as usize;
                self.conns[c].handle_pm_timeout(self.now, &mut self.outbox);
                self.after_conn(c);
                if let Some(at) = self.conns[c].poll_pm_timeout() {
                    self.events.schedule(at.max(self.now), Event::PmTimer { conn });
                }
            }
        }
    }

    /// Move a packet to its next hop, or to its destination end.
    fn forward(&mut self, mut pkt: Packet) {
        pkt.hop += 1;
        let hop = self.routes.hop(pkt.route, pkt.hop);
        if hop != Routes::END {
            self.offer(&pkt, hop);
        } else {
            let c = pkt.conn as usize;
            if self.pcap.is_some() {
                self.pcap_packet(&pkt, true);
            }
            // Data is traced on arrival; an ACK after the sender processed it, so its row
            // shows the controller's reaction (the per-ACK CC trace).
            if self.traced[c] && pkt.kind != PacketKind::Ack {
                self.trace_rx(&pkt);
            }
            self.conns[c].on_packet(self.now, &pkt, &mut self.outbox);
            if self.traced[c] && pkt.kind == PacketKind::Ack {
                self.trace_rx(&pkt);
            }
            self.after_conn(c);
        }
    }

    /// Offer a packet to link direction `hop`. By reference: a packet is 88 bytes, and
    /// each copy on the way from the outbox to the link's ring cost (issue 14, perf on S1).
    fn offer(&mut self, pkt: &Packet, hop: u32) {
        let now = self.now;
        match self.links[hop as usize].offer(now, pkt) {
            Offer::Accepted { arrive, new_head } => {
                if new_head {
                    let epoch = self.links[hop as usize].epoch;
                    self.events.schedule(arrive, Event::LinkArrive { link: hop, epoch });
                }
            }
            drop => {
                if pkt.kind == PacketKind::Data {
                    if let Some(s) = self.conns[pkt.conn as usize].subflows.get_mut(pkt.sub as usize) {
                        match drop {
                            Offer::DroppedQueue => s.drops.queue += 1,
                            Offer::DroppedLoss => s.drops.loss += 1,
                            _ => s.drops.down += 1,
                        }
                    }
                }
                if self.traced[pkt.conn as usize] {
                    let m = &mut self.metrics.trace;
                    m.push(now.ns(), pkt.conn, pkt.sub as u32, "drop", pkt.seq, pkt.len, pkt.dsn, pkt.ack, CcSnapshot::NONE, hop);
                }
            }
        }
    }

    /// Transmit what a connection queued and schedule its timers.
    fn after_conn(&mut self, c: usize) {
        // Runs once per event: the common case (untraced, no status change, one packet
        // out) avoids the drains and the vector swaps.
        let traced = self.traced[c];
        if traced {
            // The scheduler's decisions first: a "sched" row precedes the "send" it caused.
            for r in self.conns[c].poll_sched_trace() {
                self.metrics.trace.push_sched(r.at.ns(), c as u32, r.subflow as u32, r.kind, r.dsn, r.len, r.cwnd, r.in_flight);
            }
        }
        // (`offer` and `trace_tx` never touch the outbox: it is lent out meanwhile.)
        let mut outbox = std::mem::take(&mut self.outbox);
        for p in outbox.iter_mut() {
            p.hop = 0;
            if traced {
                self.trace_tx(p);
            }
            if self.pcap.is_some() {
                self.pcap_packet(p, false);
            }
            self.offer(p, self.routes.hop(p.route, 0));
        }
        outbox.clear();
        self.outbox = outbox;
        if self.pcap.is_some() && self.conns[c].has_prio_signals() {
            // After the event's packets: a handshake's last ACK precedes the MP_PRIO.
            self.pcap_prio(c);
        }
        if self.conns[c].has_status_changes() {
            let paths = &self.conn_paths[c];
            for ch in self.conns[c].poll_status_changes() {
                let e = &mut self.metrics.events;
                e.time_s.push(ch.at.secs_f64());
                e.conn.push(c as u32);
                e.subflow.push(ch.subflow as u32);
                e.path.push(paths[ch.path] as u32);
                e.from.push(ch.from.as_str());
                e.to.push(ch.to.as_str());
                e.reason.push(ch.reason);
            }
        }
        // Bulk runs collect none: skip the drain.
        if self.conns[c].has_delay_samples() {
            self.collect_delay_samples(c);
        }
        self.timer_reqs.clear();
        self.conns[c].poll_timers(&mut self.timer_reqs);
        for &(at, sub, kind) in self.timer_reqs.iter() {
            self.events.schedule(at.max(self.now), Event::Timer { conn: c as u32, sub, kind });
        }
    }

    /// Move connection `c`'s delay samples into the metrics columns.
    fn collect_delay_samples(&mut self, c: usize) {
        let m = &mut self.metrics.delay;
        for d in self.conns[c].poll_delay_samples() {
            m.time_s.push(d.at.secs_f64());
            m.conn.push(c as u32);
            m.dsn.push(d.dsn);
            m.len.push(d.len);
            m.taken_s.push(d.taken_at.secs_f64());
            m.subflow.push(d.via.map_or(-1, |v| v as i32));
            m.delay_ms.push(d.measured().ms_f64());
            m.theta_ms.push(d.theta.ms_f64());
            m.tau_ms.push(d.tau_via.ms_f64());
            m.tau_max_ms.push(d.model.tau_max.ms_f64());
            m.t_over_ms.push(d.model.t_over.ms_f64());
            m.zeta_ms.push(d.model.zeta.ms_f64());
            m.zeta_measured_ms.push(d.measured().saturating_sub(d.model.tau_max).ms_f64());
        }
    }

    fn trace_tx(&mut self, p: &Packet) {
        let ev = match p.kind {
            PacketKind::Data if p.retrans => "retrans",
            PacketKind::Data => "send",
            PacketKind::Ack => "ack_sent",
            _ => "handshake",
        };
        let cc = self.cc_snapshot(p);
        self.metrics.trace.push(self.now.ns(), p.conn, p.sub as u32, ev, p.seq, p.len, p.dsn, p.ack, cc, u32::MAX);
    }

    fn trace_rx(&mut self, p: &Packet) {
        let ev = match p.kind {
            PacketKind::Data => "recv",
            PacketKind::Ack => "ack",
            _ => return,
        };
        let cc = self.cc_snapshot(p);
        self.metrics.trace.push(self.now.ns(), p.conn, p.sub as u32, ev, p.seq, p.len, p.dsn, p.ack, cc, u32::MAX);
    }

    fn cc_snapshot(&self, p: &Packet) -> CcSnapshot {
        use crate::cc::{CaState, CongestionControl};
        let s = &self.conns[p.conn as usize].subflows[p.sub as usize].tx;
        let ca_state = match s.st.ca_state {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        };
        CcSnapshot {
            cwnd: s.st.cwnd,
            inflight: s.in_flight(),
            srtt_us: s.st.srtt.us(),
            ssthresh: s.st.ssthresh,
            ca_state,
            mode: s.cc.mode(),
            pacing_bps: s.pacing_rate().map_or(0.0, |b| b.0),
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        let dt = (now - self.last_sample).secs_f64().max(1e-12);
        self.last_sample = now;
        let t = now.secs_f64();
        let m = &mut self.metrics;
        for (ci, c) in self.conns.iter().enumerate() {
            // Path managers may open subflows during the run.
            self.prev_sub[ci].resize(c.subflows.len(), (0, 0));
            for (si, s) in c.subflows.iter().enumerate() {
                if s.state == SubState::Idle {
                    continue;
                }
                let x = &s.tx;
                let ss = &mut m.subflows;
                ss.time_s.push(t);
                ss.conn.push(ci as u32);
                ss.subflow.push(si as u32);
                ss.path.push(self.conn_paths[ci][s.path] as u32);
                ss.cwnd_pkts.push(x.st.cwnd);
                ss.ssthresh_pkts.push(x.st.ssthresh.min(1 << 30));
                ss.srtt_ms.push(x.st.srtt.ms_f64());
                ss.inflight_bytes.push(x.in_flight_bytes());
                ss.bytes_sent.push(x.stats.bytes_sent);
                ss.bytes_acked.push(x.stats.bytes_acked);
                ss.bytes_retrans.push(x.stats.bytes_retrans);
                // Throughput = bytes newly acknowledged at the subflow level (snd_una
                // advancing) per interval: what the kernel backend measures with
                // tcpi_bytes_acked (include/uapi/linux/tcp.h, RFC 4898
                // tcpEStatsAppHCThruOctetsAcked), reference metrics.md §6.1 "delivered
                // throughput". sent_mbps keeps §6.1's "transmitted" rate (tcpi_bytes_sent).
                let (prev_sent, prev_acked) = &mut self.prev_sub[ci][si];
                ss.throughput_mbps.push((x.stats.bytes_acked - *prev_acked) as f64 * 8.0 / dt / 1e6);
                ss.sent_mbps.push((x.stats.bytes_sent - *prev_sent) as f64 * 8.0 / dt / 1e6);
                *prev_sent = x.stats.bytes_sent;
                *prev_acked = x.stats.bytes_acked;
            }
            if !c.started {
                continue;
            }
            let cs = &mut m.conns;
            cs.time_s.push(t);
            cs.conn.push(ci as u32);
            let read = c.rcv.read_total;
            cs.goodput_mbps.push((read - self.prev_read[ci]) as f64 * 8.0 / dt / 1e6);
            self.prev_read[ci] = read;
            cs.bytes_delivered.push(read);
            cs.ooo_bytes.push(c.rcv.ooo_bytes);
            cs.rcvbuf_bytes.push(c.rcv.occupancy());
            cs.sndbuf_bytes.push(c.snd.written - c.snd.data_una);
        }
        for (h, l) in self.links.iter_mut().enumerate() {
            let (qp, qb) = l.queue_len(now);
            let ls = &mut m.links;
            ls.time_s.push(t);
            ls.hop.push(h as u32);
            ls.queue_pkts.push(qp as u32);
            ls.queue_bytes.push(qb);
            ls.sent_pkts.push(l.stats.offered);
            ls.delivered_pkts.push(l.stats.delivered);
            ls.dropped_pkts.push(l.stats.dropped());
            ls.rate_mbps.push(l.rate().mbps());
        }
    }

    /// Per-flow summary over [0, now].
    pub fn summary(&self) -> Vec<FlowSummary> {
        let secs = self.now.secs_f64().max(1e-9);
        self.plan
            .conns
            .iter()
            .zip(&self.conns)
            .map(|(p, c)| {
                let active = (secs - c.cfg.start.secs_f64()).max(1e-9);
                FlowSummary {
                    name: c.cfg.name.clone(),
                    kind: if c.cfg.mptcp { "mptcp" } else { "tcp" },
                    cc: c.cfg.cc.clone(),
                    scheduler: if c.cfg.mptcp { p.scheduler.clone() } else { "-".into() },
                    path_manager: if c.cfg.mptcp { p.path_manager.clone() } else { "-".into() },
                    subflows: c.subflows.iter().filter(|s| s.established_at.is_some()).count() as u32,
                    bytes_delivered: c.rcv.read_total,
                    goodput_mbps: c.rcv.read_total as f64 * 8.0 / active / 1e6,
                    bytes_sent: c.subflows.iter().map(|s| s.tx.stats.bytes_sent).sum(),
                    bytes_retrans: c.subflows.iter().map(|s| s.tx.stats.bytes_retrans).sum(),
                    completion_s: c.completed_at.map_or(f64::NAN, |t| (t - c.cfg.start).secs_f64()),
                    ooo_max_bytes: c.stats.ooo_max_bytes,
                    rcvbuf_max_bytes: c.stats.rcvbuf_max_bytes,
                }
            })
            .collect()
    }

    /// One row per connection and flow: its hosts (over a `[topology]`), start (after
    /// `run.start_jitter`), size and flow completion time, the time from its start until
    /// the receiving application has read every byte (NaN: unbounded or unfinished).
    pub fn flow_times(&self) -> Vec<FlowTime> {
        self.plan
            .conns
            .iter()
            .zip(&self.conns)
            .map(|(p, c)| {
                let (src, dst) = p.hosts.clone().unwrap_or_default();
                FlowTime {
                    conn: c.id,
                    src,
                    dst,
                    start_s: c.cfg.start.secs_f64(),
                    size_bytes: c.cfg.app.total().map_or(f64::NAN, |b| b as f64),
                    fct_s: c.completed_at.map_or(f64::NAN, |t| (t - c.cfg.start).secs_f64()),
                }
            })
            .collect()
    }

    pub fn subflow_summary(&self) -> Vec<SubflowSummary> {
        let secs = self.now.secs_f64().max(1e-9);
        let mut out = Vec::new();
        for (ci, c) in self.conns.iter().enumerate() {
            for (si, s) in c.subflows.iter().enumerate() {
                let st = &s.tx.stats;
                let active = (secs - s.established_at.map_or(secs, |t| t.secs_f64())).max(1e-9);
                out.push(SubflowSummary {
                    conn: ci as u32,
                    subflow: si as u32,
                    path: self.conn_paths[ci][s.path] as u32,
                    bytes_sent: st.bytes_sent,
                    bytes_retrans: st.bytes_retrans,
                    bytes_acked: st.bytes_acked,
                    mean_srtt_ms: if st.srtt_samples > 0 { st.srtt_sum_ms / st.srtt_samples as f64 } else { f64::NAN },
                    throughput_mbps: st.bytes_acked as f64 * 8.0 / active / 1e6,
                    rto_count: st.rto_count,
                    recoveries: st.recoveries,
                    sched_new_segs: s.sched.new_segs,
                    sched_reinjected_segs: s.sched.reinjected_segs,
                    sched_copied_segs: s.sched.copied_segs,
                    sched_penalised: s.sched.penalised,
                    segs_sent: st.segs_sent,
                    segs_retrans: st.segs_retrans,
                    drops_queue: s.drops.queue,
                    drops_loss: s.drops.loss,
                    drops_down: s.drops.down,
                    active_s: s.established_at.map_or(0.0, |t| (secs - t.secs_f64()).max(0.0)),
                    tau_av_ms: if s.tau.samples > 0 { s.tau.sum_ms / s.tau.samples as f64 } else { f64::NAN },
                    tau_max_ms: if s.tau.samples > 0 { s.tau.max.ms_f64() } else { f64::NAN },
                });
            }
        }
        out
    }

    /// Every frame of every streaming application, as columns.
    pub fn frames(&self) -> FrameTable {
        let mut t = FrameTable::default();
        let s = |x: Option<SimTime>| x.map_or(f64::NAN, |v| v.secs_f64());
        for (ci, c) in self.conns.iter().enumerate() {
            for (k, f) in c.app.frames().iter().enumerate() {
                t.conn.push(ci as u32);
                t.frame.push(k as u64);
                t.size_bytes.push(f.size);
                t.scheduled_s.push(f.scheduled.secs_f64());
                t.enqueued_s.push(s(f.enqueued));
                t.taken_s.push(s(f.taken));
                t.acked_s.push(s(f.acked));
                t.delivered_s.push(s(f.delivered));
            }
        }
        t
    }

    /// Invariants checked by the property tests (and available to users for debugging).
    pub fn check_invariants(&mut self) -> Result<(), String> {
        let now = self.now;
        for (h, l) in self.links.iter_mut().enumerate() {
            let (qp, qb) = l.queue_len(now);
            match l.limit {
                crate::units::QueueLimit::Packets(n) => {
                    if qp > n as usize {
                        return Err(format!("hop {h}: queue {qp} > limit {n}"));
                    }
                }
                crate::units::QueueLimit::Bytes(b) => {
                    if qb > b && qp > 1 {
                        return Err(format!("hop {h}: queue {qb} B > limit {b} B"));
                    }
                }
            }
            let s = &l.stats;
            if s.offered != s.delivered + s.dropped() + l.on_link() as u64 {
                return Err(format!("hop {h}: offered {} != delivered {} + dropped {} + on link {}", s.offered, s.delivered, s.dropped(), l.on_link()));
            }
        }
        for c in &self.conns {
            c.check_invariants()?;
            // Every data byte handed to subflows and not yet delivered at the receiver is
            // still outstanding on some subflow (or queued for it, or held by a receiving
            // subflow): nothing is forgotten.
            let mut cover: Vec<(u64, u64)> = Vec::new();
            for s in &c.subflows {
                for seg in s.tx.outstanding_segs() {
                    cover.push((seg.dsn, seg.dsn + seg.len as u64));
                }
                for &(d, l, ..) in &s.queue {
                    cover.push((d, d + l as u64));
                }
                // Linux receive memory: ACKed by the subflow and held in its receive queue
                // until the MPTCP socket pulls it (mptcp/rcvmem.rs, M3).
                for h in s.held.iter() {
                    cover.push((h.dsn, h.dsn + h.len as u64));
                }
            }
            for &(d, l) in &c.snd.reinject {
                cover.push((d, d + l as u64));
            }
            cover.sort_unstable();
            let mut pos = c.rcv.rcv_nxt;
            let mut it = cover.iter().peekable();
            let end = c.snd.dsn_nxt;
            while pos < end {
                // Skip data that reached the receiver out of order.
                if let Some(e) = c.rcv.ooo_range_containing(pos) {
                    pos = e;
                    continue;
                }
                let mut advanced = false;
                while let Some(&&(s, e)) = it.peek() {
                    if s > pos {
                        break;
                    }
                    if e > pos {
                        pos = e;
                        advanced = true;
                    }
                    it.next();
                }
                if !advanced {
                    // Upstream: a subflow ACKed it and the MPTCP socket dropped it past its
                    // advertised edge (`MetaReceiver::nodss_window`); the MPTCP
                    // retransmit timer, which must then be armed, sends it again.
                    if c.rcv.nodss_window > 0 && c.up.rtx_deadline.is_some() {
                        pos = it.peek().map_or(end, |&&(s, _)| s.max(pos + 1));
                        continue;
                    }
                    return Err(format!("{}: data byte {pos} is neither delivered nor outstanding on any subflow", c.cfg.name));
                }
            }
        }
        Ok(())
    }
}
