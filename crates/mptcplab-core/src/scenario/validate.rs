//! Semantic checks and name/unit resolution: `Scenario` -> `Plan`.

use super::*;
use crate::mptcp::conn::ConnConfig;
use crate::net::link::LinkChange;
use crate::net::loss::LossModel;
use crate::tcp::{CwndValidation, Recovery, TcpConfig};
use crate::units::{Bandwidth, QueueLimit, SimTime};
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug)]
pub struct DirPlan {
    pub rate: Bandwidth,
    pub delay: SimTime,
    pub queue: QueueLimit,
    pub loss: LossModel,
    pub changes: Vec<LinkChange>,
    /// `links[].jitter`: extra delay per packet, uniform in [0, jitter).
    pub jitter: SimTime,
}

#[derive(Clone, Debug)]
pub struct LinkPlan {
    pub name: String,
    pub fwd: DirPlan,
    pub rev: DirPlan,
}

/// Hop id of a link direction: `2·link + (0 forward | 1 reverse)`.
pub fn hop_id(link: usize, reverse: bool) -> u32 { (2 * link + reverse as usize) as u32 }

#[derive(Clone, Debug)]
pub struct PathPlan {
    pub name: String,
    pub fwd_hops: Vec<u32>,
    pub rev_hops: Vec<u32>,
    pub backup: bool,
}

#[derive(Clone, Debug)]
pub struct ConnPlan {
    pub cfg: ConnConfig,
    /// Indexes into `Plan::paths`.
    pub paths: Vec<usize>,
    pub scheduler: String,
    pub scheduler_params: crate::options::Params,
    pub path_manager: String,
    pub pm_params: crate::options::Params,
    pub opportunistic_retransmission: bool,
    pub penalisation: bool,
    /// (from, to) host names when the connection runs over a `[topology]`.
    pub hosts: Option<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub duration: SimTime,
    pub seed: u64,
    pub sample_interval: SimTime,
    pub start_jitter: SimTime,
    /// `run.join_jitter`: each subflow join waits up to this long (ZERO: at once).
    pub join_jitter: SimTime,
    pub links: Vec<LinkPlan>,
    pub paths: Vec<PathPlan>,
    pub conns: Vec<ConnPlan>,
    /// `run.profile`: which Linux MPTCP the run follows.
    pub profile: crate::profile::ProfileName,
}

fn err<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T, ScenarioError> { Err(ScenarioError::new(field, msg)) }

fn check_prob(field: &str, p: f64) -> Result<f64, ScenarioError> {
    if p.is_nan() {
        return err(field, "expected a probability in [0, 1], got NaN");
    }
    if !(0.0..=1.0).contains(&p) {
        return err(field, format!("expected a probability in [0, 1], got {p}"));
    }
    Ok(p)
}

fn loss_model(field: &str, loss: Option<f64>, model: &Option<LossModelSpec>) -> Result<LossModel, ScenarioError> {
    match (loss, model) {
        (Some(_), Some(_)) => err(field, "give either `loss` or `loss_model`, not both"),
        (Some(p), None) => Ok(LossModel::Bernoulli { p: check_prob(&format!("{field}.loss"), p)? }),
        (None, None) => Ok(LossModel::none()),
        (None, Some(LossModelSpec::Bernoulli { p })) => Ok(LossModel::Bernoulli { p: check_prob(&format!("{field}.loss_model.p"), *p)? }),
        (None, Some(LossModelSpec::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad })) => {
            let f = format!("{field}.loss_model");
            Ok(LossModel::GilbertElliott {
                p_good_to_bad: check_prob(&format!("{f}.p_good_to_bad"), *p_good_to_bad)?,
                p_bad_to_good: check_prob(&format!("{f}.p_bad_to_good"), *p_bad_to_good)?,
                loss_good: check_prob(&format!("{f}.loss_good"), *loss_good)?,
                loss_bad: check_prob(&format!("{f}.loss_bad"), *loss_bad)?,
                bad: false,
            })
        }
    }
}

fn check_name(field: &str, name: &str) -> Result<(), ScenarioError> {
    if name.trim().is_empty() {
        return err(field, "expected a non-empty name");
    }
    Ok(())
}

pub(super) const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(1000);

/// Build one direction's change list: steps and ramps in time order.
fn changes(field: &str, specs: &[(usize, &ChangeSpec)], mut rate: Bandwidth, mut delay: SimTime, mut loss: f64) -> Result<Vec<LinkChange>, ScenarioError> {
    let mut out = Vec::new();
    let mut sorted: Vec<(usize, &ChangeSpec)> = specs.to_vec();
    sorted.sort_by_key(|(i, c)| (c.at.value, *i));
    for (i, c) in sorted {
        let f = format!("{field}[{i}]");
        let at = c.at.value;
        let new_rate = c.rate.as_ref().map(|r| r.value);
        let new_delay = c.delay.as_ref().map(|d| d.value);
        let new_loss = match c.loss {
            Some(p) => Some(check_prob(&format!("{f}.loss"), p)?),
            None => None,
        };
        if new_rate.is_none() && new_delay.is_none() && new_loss.is_none() && c.state.is_none() {
            return err(f, "a schedule entry needs at least one of rate, delay, loss or state");
        }
        match &c.until {
            None => {
                out.push(LinkChange { at, rate: new_rate, delay: new_delay, loss: new_loss, up: c.state.map(|s| s == LinkState::Up) });
            }
            Some(until) => {
                let end = until.value;
                if end <= at {
                    return err(format!("{f}.until"), format!("a ramp must end after it starts ({} <= {})", until.text, c.at.text));
                }
                if c.state.is_some() {
                    return err(format!("{f}.state"), "link state cannot ramp; use a step without `until`");
                }
                // Linear ramp as up to 100 steps, at least 10 ms apart.
                let span = (end - at).ns();
                let steps = (span / SimTime::from_ms(10).ns()).clamp(1, 100);
                for k in 1..=steps {
                    let frac = k as f64 / steps as f64;
                    let t = at + SimTime(span * k / steps);
                    out.push(LinkChange {
                        at: t,
                        rate: new_rate.map(|r| Bandwidth(rate.0 + (r.0 - rate.0) * frac)),
                        delay: new_delay.map(|d| SimTime((delay.ns() as f64 + (d.ns() as f64 - delay.ns() as f64) * frac).round() as u64)),
                        loss: new_loss.map(|p| loss + (p - loss) * frac),
                        up: None,
                    });
                }
            }
        }
        if let Some(r) = new_rate { rate = r; }
        if let Some(d) = new_delay { delay = d; }
        if let Some(p) = new_loss { loss = p; }
    }
    out.sort_by_key(|c| c.at);
    Ok(out)
}

/// Expand `[[hosts]]` into links and paths.
pub(super) fn expand_hosts(s: &Scenario) -> Result<(Vec<LinkSpec>, Vec<PathSpec>), ScenarioError> {
    let mut links = s.links.clone();
    let mut paths = s.paths.clone();
    if s.hosts.is_empty() {
        return Ok((links, paths));
    }
    if s.hosts.len() != 2 {
        return err("hosts", format!("expected exactly two hosts (data flows from the first to the second), got {}", s.hosts.len()));
    }
    for (h, host) in s.hosts.iter().enumerate() {
        check_name(&format!("hosts[{h}].name"), &host.name)?;
        if host.isps.is_empty() {
            return err(format!("hosts[{h}].isps"), "a host needs at least one ISP");
        }
        for (k, isp) in host.isps.iter().enumerate() {
            check_name(&format!("hosts[{h}].isps[{k}].name"), &isp.name)?;
            // Forward = data direction: up from the sending host, down into the receiving one.
            let (fwd, rev) = if h == 0 { (&isp.up, &isp.down) } else { (&isp.down, &isp.up) };
            links.push(LinkSpec {
                name: format!("{}.{}", host.name, isp.name),
                rate: fwd.clone(),
                delay: isp.delay.clone(),
                queue: isp.queue.clone(),
                loss: isp.loss,
                loss_model: None,
                jitter: None,
                reverse: Some(DirSpec { rate: Some(rev.clone()), ..Default::default() }),
                schedule: vec![],
            });
        }
    }
    for a in &s.hosts[0].isps {
        for b in &s.hosts[1].isps {
            paths.push(PathSpec {
                name: format!("{}~{}", a.name, b.name),
                links: vec![format!("{}.{}", s.hosts[0].name, a.name), format!("{}.{}", s.hosts[1].name, b.name)],
                reverse_links: None,
                backup: None,
            });
        }
    }
    Ok((links, paths))
}

fn known<'a>(field: &str, what: &str, name: &str, names: impl Iterator<Item = &'a str>) -> Result<(), ScenarioError> {
    let all: Vec<&str> = names.collect();
    if all.contains(&name) {
        Ok(())
    } else {
        err(field, format!("unknown {what} {name:?}; expected one of: {}", all.join(", ")))
    }
}

pub(super) fn plan(s: &Scenario) -> Result<Plan, ScenarioError> {
    let duration = s.run.duration.as_ref().map_or(SimTime::from_secs(30), |d| d.value);
    if duration == SimTime::ZERO {
        return err("run.duration", "expected a duration > 0");
    }
    let sample_interval = s.run.sample_interval.as_ref().map_or(SimTime::from_ms(100), |d| d.value);
    if sample_interval < SimTime::from_us(1) {
        return err("run.sample_interval", "expected an interval >= 1 us");
    }
    let mut tcp = TcpConfig::default();
    if let Some(m) = &s.tcp.mss {
        if m.value == 0 || m.value > 65_495 {
            return err("tcp.mss", format!("expected an MSS between 1 B and 65495 B, got {}", m.text));
        }
        tcp.mss = m.value as u32;
    }
    if let Some(w) = s.tcp.initial_cwnd {
        if w == 0 || w > 1_000_000 {
            return err("tcp.initial_cwnd", format!("expected 1..=1000000 packets, got {w}"));
        }
        tcp.initial_cwnd = w;
    }
    if let Some(r) = s.tcp.recovery {
        tcp.recovery = match r { RecoveryName::Prr => Recovery::Prr, RecoveryName::Newreno => Recovery::NewReno };
    }
    if let Some(d) = s.tcp.delayed_ack { tcp.delayed_ack = d; }
    if let Some(d) = &s.tcp.delack_timeout {
        if d.value == SimTime::ZERO {
            return err("tcp.delack_timeout", "expected a timeout > 0");
        }
        tcp.delack_timeout = d.value;
    }
    if let Some(d) = &s.tcp.min_rto {
        tcp.rto_min = d.value;
    }
    if let Some(p) = s.tcp.pacing {
        tcp.pacing = p;
    }
    let accounting = s.tcp.receive_buffer_accounting.unwrap_or_else(|| s.run.profile.unwrap_or_default().receive_buffer_accounting());
    tcp.rcvbuf_accounting = match accounting {
        AccountingName::Payload => crate::tcp::BufferAccounting::Payload,
        AccountingName::Linux => crate::tcp::BufferAccounting::Linux,
    };
    tcp.receive_memory = match s.tcp.receive_memory.unwrap_or_else(|| s.run.profile.unwrap_or_default().receive_memory()) {
        ReceiveMemoryName::Window => crate::tcp::ReceiveMemory::Window,
        ReceiveMemoryName::Skb => crate::tcp::ReceiveMemory::Skb,
    };
    // `tcp.base_kernel` qualifies the out-of-tree kernel; the upstream profile follows
    // Linux 6.x whatever it says, so one scenario file runs under both profiles.
    let profile = s.run.profile.unwrap_or_default();
    tcp.base_kernel = match (profile, s.tcp.base_kernel.unwrap_or_default()) {
        (crate::profile::ProfileName::OutOfTree, BaseKernelName::Linux3_14) => crate::tcp::BaseKernel::Linux3_14,
        _ => crate::tcp::BaseKernel::Linux4,
    };
    tcp.cwnd_validation = match s.tcp.cwnd_validation.unwrap_or_else(|| cwnd_validation_default(profile, s.tcp.base_kernel)) {
        CwndValidationName::Linux3_11 => CwndValidation::Linux3_11,
        CwndValidationName::Linux3_14 => CwndValidation::Linux3_14,
        CwndValidationName::Linux4 => CwndValidation::Linux4,
        CwndValidationName::Linux5_18 => CwndValidation::Linux5_18,
    };
    tcp.gso = s.tcp.gso.unwrap_or(true);
    tcp.loss_detection = match s.tcp.loss_detection.unwrap_or_else(|| loss_detection_default(profile)) {
        LossDetectionName::Rack => crate::tcp::LossDetection::Rack,
        LossDetectionName::Dupthresh => crate::tcp::LossDetection::DupThresh,
    };
    tcp.tail_loss_probe = s.tcp.tail_loss_probe.unwrap_or(profile == crate::profile::ProfileName::Upstream);

    let (links_spec, paths_spec) = expand_hosts(s)?;
    let topo = super::expand::topology(s)?;
    if links_spec.is_empty() && topo.is_none() {
        return err("links", "the scenario has no links; add at least one [[links]] table (or [[hosts]], or a [topology])");
    }
    if paths_spec.is_empty() && topo.is_none() {
        return err("paths", "the scenario has no paths; add at least one [[paths]] table listing links");
    }
    if s.connections.is_empty() && s.flows.is_empty() && s.traffic.is_empty() {
        return err("connections", "the scenario has no traffic; add a [[connections]] (MPTCP), [[flows]] (TCP) or [[traffic]] table");
    }

    let mut link_idx: HashMap<&str, usize> = HashMap::new();
    let mut links = Vec::new();
    for (i, l) in links_spec.iter().enumerate() {
        let f = format!("links[{i}]");
        check_name(&format!("{f}.name"), &l.name)?;
        if link_idx.insert(&l.name, i).is_some() {
            return err(format!("{f}.name"), format!("duplicate link name {:?}", l.name));
        }
        let fwd_loss = loss_model(&f, l.loss, &l.loss_model)?;
        let r = l.reverse.clone().unwrap_or_default();
        let rev_loss = loss_model(&format!("{f}.reverse"), r.loss, &r.loss_model)?;
        let queue = l.queue.as_ref().map_or(DEFAULT_QUEUE, |q| q.value);
        let jitter = l.jitter.as_ref().map_or(SimTime::ZERO, |j| j.value);
        let mut fwd = DirPlan { rate: l.rate.value, delay: l.delay.value, queue, loss: fwd_loss, changes: vec![], jitter };
        let mut rev = DirPlan {
            rate: r.rate.as_ref().map_or(l.rate.value, |x| x.value),
            delay: r.delay.as_ref().map_or(l.delay.value, |x| x.value),
            queue: r.queue.as_ref().map_or(queue, |x| x.value),
            loss: rev_loss,
            changes: vec![],
            jitter: r.jitter.as_ref().map_or(jitter, |j| j.value),
        };
        for (fld, j) in [(format!("{f}.jitter"), fwd.jitter), (format!("{f}.reverse.jitter"), rev.jitter)] {
            if j > SimTime::from_secs(1) {
                return err(fld, format!("expected a jitter of at most 1 s, got {:.3} s", j.secs_f64()));
            }
        }
        let fs: Vec<(usize, &ChangeSpec)> = l.schedule.iter().enumerate().filter(|(_, c)| c.direction != Direction::Reverse).collect();
        let rs: Vec<(usize, &ChangeSpec)> = l.schedule.iter().enumerate().filter(|(_, c)| c.direction != Direction::Forward).collect();
        let p0 = |m: &LossModel| { let p = m.bernoulli_p(); if p.is_nan() { 0.0 } else { p } };
        fwd.changes = changes(&format!("{f}.schedule"), &fs, fwd.rate, fwd.delay, p0(&fwd.loss))?;
        rev.changes = changes(&format!("{f}.schedule"), &rs, rev.rate, rev.delay, p0(&rev.loss))?;
        links.push(LinkPlan { name: l.name.clone(), fwd, rev });
    }
    let mut generated = topo.map(|t| super::expand::Generated::new(t, links.len()));
    if let Some(g) = &generated {
        for l in g.links() {
            if let Some(&i) = link_idx.get(l.name.as_str()) {
                return err(format!("links[{i}].name"), format!("link name {:?} is also a link of the [topology]", l.name));
            }
            links.push(l);
        }
    }

    let link_names = || links_spec.iter().map(|l| l.name.as_str());
    let mut path_idx: HashMap<&str, usize> = HashMap::new();
    let mut paths = Vec::new();
    for (i, p) in paths_spec.iter().enumerate() {
        let f = format!("paths[{i}]");
        check_name(&format!("{f}.name"), &p.name)?;
        if path_idx.insert(&p.name, i).is_some() {
            return err(format!("{f}.name"), format!("duplicate path name {:?}", p.name));
        }
        if p.links.is_empty() {
            return err(format!("{f}.links"), "a path needs at least one link");
        }
        let mut fwd_hops = Vec::new();
        for (j, ln) in p.links.iter().enumerate() {
            known(&format!("{f}.links[{j}]"), "link", ln, link_names())?;
            fwd_hops.push(hop_id(link_idx[ln.as_str()], false));
        }
        let rev_hops = match &p.reverse_links {
            None => fwd_hops.iter().rev().map(|h| h ^ 1).collect(),
            Some(rl) => {
                if rl.is_empty() {
                    return err(format!("{f}.reverse_links"), "expected at least one link");
                }
                let mut v = Vec::new();
                for (j, ln) in rl.iter().enumerate() {
                    known(&format!("{f}.reverse_links[{j}]"), "link", ln, link_names())?;
                    v.push(hop_id(link_idx[ln.as_str()], true));
                }
                v
            }
        };
        paths.push(PathPlan { name: p.name.clone(), fwd_hops, rev_hops, backup: p.backup.unwrap_or(false) });
    }

    let delay_samples = s.run.delay_samples.unwrap_or(false);
    let profile = s.run.profile.unwrap_or_default();
    // Every connection and flow name, generated ones included.
    let mut flow_names: HashSet<String> = HashSet::new();
    let mut conns = Vec::new();
    let seed = s.run.seed.unwrap_or(1);
    let ctx = ConnCtx { tcp, profile, delay_samples };
    for (i, c) in s.connections.iter().enumerate() {
        let f = format!("connections[{i}]");
        check_name(&format!("{f}.name"), &c.name)?;
        if !flow_names.insert(c.name.clone()) {
            return err(format!("{f}.name"), format!("duplicate connection/flow name {:?}", c.name));
        }
        if c.from.is_some() || c.to.is_some() {
            if c.paths.is_some() {
                return err(format!("{f}.paths"), "give either `paths` or `from`/`to` hosts, not both");
            }
            let (g, src, dst) = super::expand::host_pair(generated.as_mut(), &f, "connection", &c.from, &c.to)?;
            let n = c.subflows.unwrap_or(1);
            if n == 0 || n > 64 {
                return err(format!("{f}.subflows"), format!("expected 1 to 64 subflows, got {n}"));
            }
            let sel = g.pick(&format!("{f}.to"), &c.name, src, dst, n as usize, c.path_choice.unwrap_or_default(), seed, &mut paths)?;
            let mut cp = conn_plan(&f, c, sel, &paths, &ctx)?;
            cp.hosts = c.from.clone().zip(c.to.clone());
            conns.push(cp);
            continue;
        }
        for (x, given) in [("subflows", c.subflows.is_some()), ("path_choice", c.path_choice.is_some())] {
            if given {
                return err(format!("{f}.{x}"), "only host-pair connections (`from`, `to`) pick paths; list `paths` instead");
            }
        }
        let sel: Vec<usize> = match &c.paths {
            None => return err(format!("{f}.paths"), "expected a list of path names, \"all\", or `from` and `to` hosts of a [topology]"),
            Some(PathSelection::All(_)) if paths_spec.is_empty() => {
                return err(format!("{f}.paths"), "\"all\" means every [[paths]] table, and there is none; with a [topology], give `from` and `to` hosts");
            }
            Some(PathSelection::All(_)) => (0..paths_spec.len()).collect(),
            Some(PathSelection::List(v)) => {
                if v.is_empty() {
                    return err(format!("{f}.paths"), "expected at least one path");
                }
                let mut out = Vec::new();
                for (j, pn) in v.iter().enumerate() {
                    known(&format!("{f}.paths[{j}]"), "path", pn, paths_spec.iter().map(|p| p.name.as_str()))?;
                    let k = path_idx[pn.as_str()];
                    if out.contains(&k) {
                        return err(format!("{f}.paths[{j}]"), format!("path {pn:?} is listed twice"));
                    }
                    out.push(k);
                }
                out
            }
        };
        if sel.len() > 64 {
            return err(format!("{f}.paths"), "at most 64 subflows per connection");
        }
        conns.push(conn_plan(&f, c, sel, &paths, &ctx)?);
    }
    for (i, fl) in s.flows.iter().enumerate() {
        let f = format!("flows[{i}]");
        check_name(&format!("{f}.name"), &fl.name)?;
        if !flow_names.insert(fl.name.clone()) {
            return err(format!("{f}.name"), format!("duplicate connection/flow name {:?}", fl.name));
        }
        if fl.from.is_some() || fl.to.is_some() {
            if fl.path.is_some() {
                return err(format!("{f}.path"), "give either `path` or `from`/`to` hosts, not both");
            }
            let (g, src, dst) = super::expand::host_pair(generated.as_mut(), &f, "flow", &fl.from, &fl.to)?;
            let sel = g.pick(&format!("{f}.to"), &fl.name, src, dst, 1, fl.path_choice.unwrap_or_default(), seed, &mut paths)?;
            let mut cp = flow_plan(&f, fl, sel[0], &ctx)?;
            cp.hosts = fl.from.clone().zip(fl.to.clone());
            conns.push(cp);
            continue;
        }
        if fl.path_choice.is_some() {
            return err(format!("{f}.path_choice"), "only host-pair flows (`from`, `to`) pick a path; give `path` instead");
        }
        let Some(path) = &fl.path else { return err(format!("{f}.path"), "expected a path name, or `from` and `to` hosts of a [topology]") };
        known(&format!("{f}.path"), "path", path, paths_spec.iter().map(|p| p.name.as_str()))?;
        conns.push(flow_plan(&f, fl, path_idx[path.as_str()], &ctx)?);
    }
    for gc in super::expand::traffic(s, generated.as_ref(), seed, duration)? {
        // (`traffic` refuses a [[traffic]] table without a [topology].)
        let Some(g) = generated.as_mut() else { break };
        let c = &gc.spec;
        if !flow_names.insert(c.name.clone()) {
            return err(format!("{}.name", gc.field), format!("generated name {:?} is also the name of another connection or flow; give the [[traffic]] table its own `name`", c.name));
        }
        let n = if gc.transport == Transport::Tcp { 1 } else { c.subflows.unwrap_or(1) as usize };
        let sel = g.pick(&gc.field, &c.name, gc.src, gc.dst, n, c.path_choice.unwrap_or_default(), seed, &mut paths)?;
        let mut cp = if gc.transport == Transport::Tcp {
            let fl = FlowSpec {
                name: c.name.clone(),
                path: None,
                from: c.from.clone(),
                to: c.to.clone(),
                path_choice: c.path_choice,
                cc: c.cc.clone(),
                cc_options: c.cc_options.clone(),
                send_buffer: c.send_buffer.clone(),
                receive_buffer: c.receive_buffer.clone(),
                read_rate: None,
                start: c.start.clone(),
                app: c.app.clone(),
            };
            flow_plan(&gc.field, &fl, sel[0], &ctx)?
        } else {
            conn_plan(&gc.field, c, sel, &paths, &ctx)?
        };
        cp.hosts = c.from.clone().zip(c.to.clone());
        conns.push(cp);
    }
    let start_jitter = s.run.start_jitter.as_ref().map_or(SimTime::ZERO, |d| d.value);
    let join_jitter = s.run.join_jitter.as_ref().map_or(SimTime::ZERO, |d| d.value);
    if join_jitter >= duration {
        return err("run.join_jitter", format!("expected a duration shorter than run.duration ({:.3} s): joins would fall after the run; \"0 s\" or no field joins at once", duration.secs_f64()));
    }
    Ok(Plan { name: s.name.clone().unwrap_or_else(|| "scenario".into()), duration, seed, sample_interval, start_jitter, join_jitter, links, paths, conns, profile })
}

/// What every connection of a scenario shares.
struct ConnCtx {
    tcp: TcpConfig,
    profile: crate::profile::ProfileName,
    delay_samples: bool,
}

fn opt_size(x: &Option<Size>, d: u64) -> u64 { x.as_ref().map_or(d, |v| v.value) }

/// Check one MPTCP connection over the plan paths `sel` (errors at `f`).
fn conn_plan(f: &str, c: &ConnSpec, sel: Vec<usize>, paths: &[PathPlan], ctx: &ConnCtx) -> Result<ConnPlan, ScenarioError> {
    let (tcp, profile, delay_samples, size) = (ctx.tcp, ctx.profile, ctx.delay_samples, opt_size);
    let cc_names = || crate::cc::REGISTRY.iter().map(|c| c.name);
    {
        let initial = match &c.initial_path {
            None => 0,
            Some(pn) => {
                let names: Vec<&str> = sel.iter().map(|&k| paths[k].name.as_str()).collect();
                match names.iter().position(|n| n == pn) {
                    Some(p) => p,
                    None => return err(format!("{f}.initial_path"), format!("{pn:?} is not one of this connection's paths: {}", names.join(", "))),
                }
            }
        };
        let cc = c.cc.clone().unwrap_or_else(|| "cubic".into());
        known(&format!("{f}.cc"), "congestion control", &cc, cc_names())?;
        let mut cc_params = cc_options(&f, &cc, &c.cc_options)?;
        crate::profile::merge_cc_defaults(profile, &cc, &mut cc_params);
        base_kernel_cc_defaults(tcp.base_kernel, &cc, &mut cc_params);
        let scheduler = c.scheduler.clone().unwrap_or_else(|| profile.scheduler().into());
        known(&format!("{f}.scheduler"), "scheduler", &scheduler, crate::mptcp::scheduler::REGISTRY.iter().map(|x| x.name))?;
        let scheduler_params = component_options(&f, "scheduler", "scheduler_options", &c.scheduler_options, |p| crate::mptcp::scheduler::check(&scheduler, p).map(|_| ()))?;
        if scheduler == "upstream" {
            for (field, given) in [("opportunistic_retransmission", c.opportunistic_retransmission), ("penalisation", c.penalisation)] {
                if given == Some(true) {
                    return err(format!("{f}.{field}"), format!("the upstream scheduler has no {}: it is an out-of-tree v0.9x feature (mptcp_rcv_buf_optimization); remove the field, or pick scheduler minrtt, blest or ecf", field.replace('_', " ")));
                }
            }
        }
        // A host-pair connection opens one subflow per picked path: fullmesh.
        let pm_default = if c.from.is_some() { "fullmesh" } else { profile.path_manager() };
        let pm = c.path_manager.clone().unwrap_or_else(|| pm_default.into());
        let sel_names: Vec<&str> = sel.iter().map(|&k| paths[k].name.as_str()).collect();
        known(&format!("{f}.path_manager"), "path manager", &pm, crate::mptcp::pm::REGISTRY.iter().map(|x| x.name))?;
        let pm_params = component_options(&f, "path_manager", "path_manager_options", &c.path_manager_options, |p| crate::mptcp::pm::check(&pm, p, &sel_names).map(|_| ()))?;
        let mut cfg = conn_config(&f, &c.name, true, tcp, cc, &c.send_buffer, &c.receive_buffer, &c.read_rate, &c.app, initial, &c.start, size, delay_samples)?;
        cfg.cc_params = cc_params;
        cfg.stack = profile.stack();
        let policy = cfg.stack.policy();
        cfg.send_buffer_auto = policy.send_buffer_autotunes && c.send_buffer.is_none();
        if policy.dss_off_mss {
            // `tcp_current_mss`: the DSS option every data segment carries comes off the MSS.
            let dss = policy.dss_bytes;
            if cfg.tcp.mss <= dss {
                return err("tcp.mss", format!("expected an MSS above the {dss}-byte DSS option of the upstream profile, got {} B", cfg.tcp.mss));
            }
            cfg.tcp.mss -= dss;
        }
        Ok(ConnPlan {
            cfg,
            paths: sel,
            scheduler,
            scheduler_params,
            path_manager: pm,
            pm_params,
            opportunistic_retransmission: c.opportunistic_retransmission.unwrap_or(profile.rcv_buf_optimization()),
            penalisation: c.penalisation.unwrap_or(profile.rcv_buf_optimization()),
            hosts: None,
        })
    }
}

/// Check one single-path TCP flow on plan path `path` (errors at `f`).
fn flow_plan(f: &str, fl: &FlowSpec, path: usize, ctx: &ConnCtx) -> Result<ConnPlan, ScenarioError> {
    let (tcp, profile, delay_samples, size) = (ctx.tcp, ctx.profile, ctx.delay_samples, opt_size);
    let cc_names = || crate::cc::REGISTRY.iter().map(|c| c.name);
    {
        let cc = fl.cc.clone().unwrap_or_else(|| "cubic".into());
        known(&format!("{f}.cc"), "congestion control", &cc, cc_names())?;
        let mut cc_params = cc_options(&f, &cc, &fl.cc_options)?;
        crate::profile::merge_cc_defaults(profile, &cc, &mut cc_params);
        base_kernel_cc_defaults(tcp.base_kernel, &cc, &mut cc_params);
        let mut cfg = conn_config(&f, &fl.name, false, tcp, cc, &fl.send_buffer, &fl.receive_buffer, &fl.read_rate, &fl.app, 0, &fl.start, size, delay_samples)?;
        cfg.cc_params = cc_params;
        Ok(ConnPlan {
            cfg,
            paths: vec![path],
            scheduler: "minrtt".into(),
            scheduler_params: Default::default(),
            path_manager: "default".into(),
            pm_params: Default::default(),
            opportunistic_retransmission: false,
            penalisation: false,
            hosts: None,
        })
    }
}

/// `cc_options` of a connection or flow, checked against the controller's registry entry.
/// A component's options table (`<f>.<table>`) as checked `Params`. `check` validates
/// the name and the options; an unknown name is reported at `<f>.<name_field>`.
fn component_options(
    f: &str,
    name_field: &str,
    table: &str,
    opts: &Option<std::collections::BTreeMap<String, serde_json::Value>>,
    check: impl Fn(&crate::options::Params) -> Result<(), crate::options::OptionError>,
) -> Result<crate::options::Params, ScenarioError> {
    let mut p = crate::options::Params::new();
    for (k, v) in opts.iter().flatten() {
        let val = crate::options::OptValue::from_json(v).map_err(|m| ScenarioError::new(format!("{f}.{table}.{k}"), m))?;
        p.insert(k.clone(), val);
    }
    check(&p).map_err(|e| match e.option {
        Some(o) => ScenarioError::new(format!("{f}.{table}.{o}"), e.message),
        None => ScenarioError::new(format!("{f}.{name_field}"), e.message),
    })?;
    Ok(p)
}

fn cc_options(f: &str, cc: &str, opts: &Option<std::collections::BTreeMap<String, serde_json::Value>>) -> Result<crate::cc::CcParams, ScenarioError> {
    component_options(f, "cc", "cc_options", opts, |p| crate::cc::registry::validate(cc, p).map(|_| ()))
}

#[allow(clippy::too_many_arguments)]
fn conn_config(
    f: &str,
    name: &str,
    mptcp: bool,
    tcp: TcpConfig,
    cc: String,
    sndbuf: &Option<Size>,
    rcvbuf: &Option<Size>,
    read_rate: &Option<Rate>,
    app: &AppSpec,
    initial_path: usize,
    start: &Option<Duration>,
    size: impl Fn(&Option<Size>, u64) -> u64,
    delay_samples: bool,
) -> Result<ConnConfig, ScenarioError> {
    let send_buffer = size(sndbuf, 4 * 1024 * 1024);
    let receive_buffer = size(rcvbuf, 6 * 1024 * 1024);
    if send_buffer == 0 {
        return err(format!("{f}.send_buffer"), "expected a buffer > 0 B");
    }
    if receive_buffer == 0 {
        return err(format!("{f}.receive_buffer"), "expected a buffer > 0 B");
    }
    let app = match app {
        AppSpec::Bulk { size, poll_chunk } => {
            if size.as_ref().is_some_and(|s| s.value == 0) {
                return err(format!("{f}.app.size"), "expected a size > 0 B (omit it for an unbounded transfer)");
            }
            if poll_chunk.as_ref().is_some_and(|c| c.value == 0) {
                return err(format!("{f}.app.poll_chunk"), "expected a chunk > 0 B (omit it for a writer that fills the buffer)");
            }
            crate::app::App::Bulk(crate::app::Bulk { total: size.as_ref().map(|s| s.value), poll_chunk: poll_chunk.as_ref().map(|c| c.value) })
        }
        AppSpec::Stream { bitrate, frame_rate, duration } => stream_app(f, bitrate, *frame_rate, duration)?,
    };
    let delay_samples = delay_samples || matches!(app, crate::app::App::Stream(_));
    Ok(ConnConfig {
        name: name.to_string(),
        mptcp,
        tcp,
        cc,
        cc_params: Default::default(),
        send_buffer,
        receive_buffer,
        read_rate: read_rate.as_ref().map(|r| r.value),
        app,
        initial_path,
        start: start.as_ref().map_or(SimTime::ZERO, |d| d.value),
        delay_samples,
        stack: Default::default(),
        send_buffer_auto: false,
        receive_buffer_locked: rcvbuf.is_some(),
    })
}

/// A streaming application: rate > 0, frame rate finite in (0, 10 000], at least one
/// byte per frame, a duration > 0 when given.
fn stream_app(f: &str, bitrate: &Option<Rate>, frame_rate: Option<f64>, duration: &Option<Duration>) -> Result<crate::app::App, ScenarioError> {
    use crate::app::{Stream, DEFAULT_FRAME_RATE, DEFAULT_STREAM_BITRATE};
    let bps = match bitrate {
        Some(r) => r.value.bits_per_sec(),
        None => crate::units::parse_rate(DEFAULT_STREAM_BITRATE).map_or(4.5e6, |b| b.bits_per_sec()),
    };
    let fps = frame_rate.unwrap_or(DEFAULT_FRAME_RATE);
    if !fps.is_finite() || fps <= 0.0 || fps > 10_000.0 {
        return err(format!("{f}.app.frame_rate"), format!("expected frames per second in (0, 10000], got {fps}"));
    }
    if bps / (8.0 * fps) < 1.0 {
        let text = bitrate.as_ref().map_or(DEFAULT_STREAM_BITRATE.to_string(), |r| r.text.clone());
        return err(format!("{f}.app.bitrate"), format!("a frame of {text} / {fps} frame/s is less than 1 B; raise the bitrate or lower frame_rate"));
    }
    let frames = match duration {
        None => None,
        Some(d) if d.value == SimTime::ZERO => return err(format!("{f}.app.duration"), "expected a duration > 0 (omit it to stream until the run ends)"),
        Some(d) => Some(Stream::frames_in(bps, fps, d.value)),
    };
    Ok(crate::app::App::Stream(Stream::new(bps, fps, frames)))
}

/// `tcp.cwnd_validation` when the scenario does not say: upstream follows Linux 6.x (the
/// >= 5.18 form); out_of_tree follows its base kernel (`tcp.base_kernel`, default 4.x).
pub fn cwnd_validation_default(profile: crate::profile::ProfileName, base: Option<BaseKernelName>) -> CwndValidationName {
    match (profile, base.unwrap_or_default()) {
        (crate::profile::ProfileName::Upstream, _) => CwndValidationName::Linux5_18,
        (_, BaseKernelName::Linux3_14) => CwndValidationName::Linux3_14,
        (_, BaseKernelName::Linux4) => CwndValidationName::Linux4,
    }
}

/// `tcp.loss_detection` when the scenario does not say: upstream is Linux 6.x, where RACK
/// is the only loss detection (net.ipv4.tcp_recovery = 1); out_of_tree keeps the RFC 6675
/// DupThresh rule with RACK-style detection of lost retransmissions (its 4.x bases before
/// 4.18 ran both side by side; docs/out-of-tree-profile.md).
pub fn loss_detection_default(profile: crate::profile::ProfileName) -> LossDetectionName {
    match profile {
        crate::profile::ProfileName::Upstream => LossDetectionName::Rack,
        _ => LossDetectionName::Dupthresh,
    }
}

/// Congestion-control options the base kernel sets unless `cc_options` gives them: Reno
/// of Linux 3.13-3.17 grows per ACK (`tcp_reno_cong_avoid`, `tcp_cong_avoid_ai(tp, w)`).
fn base_kernel_cc_defaults(base: crate::tcp::BaseKernel, cc: &str, params: &mut crate::options::Params) {
    if base == crate::tcp::BaseKernel::Linux3_14 && cc == "reno" && !params.contains_key("growth") {
        params.insert("growth".into(), crate::options::OptValue::Text("per_ack".into()));
    }
}
