//! `[topology]`, host-pair connections and `[[traffic]]` (issue 16): the generator's
//! cables become links, each connection's chosen equal-cost paths become paths, and every
//! generated demand becomes a connection or flow spec, checked by the same code as a
//! hand-written one.

use super::validate::{hop_id, DirPlan, LinkPlan, PathPlan};
use super::*;
use crate::net::loss::LossModel;
use crate::rng::{fnv1a64, Rng};
use crate::topology::{self, Hop, Topology};
use crate::traffic::{self, Demand, SizeCdf};
use crate::units::SimTime;
use std::collections::HashMap;

fn err<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T, ScenarioError> { Err(ScenarioError::new(field, msg)) }

/// The generated topology, and the links it adds to the plan from `link_base` on.
pub(super) struct Generated {
    pub topo: Topology,
    pub link_base: usize,
    /// Equal-cost paths by (src node, dst node), enumerated once.
    cache: HashMap<(usize, usize), Vec<Vec<Hop>>>,
}

/// Build the `[topology]` (None without one).
pub(super) fn topology(s: &Scenario) -> Result<Option<Topology>, ScenarioError> {
    let Some(t) = &s.topology else { return Ok(None) };
    if !s.hosts.is_empty() {
        return err("topology", "give either [[hosts]] or [topology], not both");
    }
    let queue = topology::Queues {
        switch: t.queue.as_ref().map_or(super::validate::DEFAULT_QUEUE, |q| q.value),
        host: t.host_queue.as_ref().map_or(super::validate::DEFAULT_QUEUE, |q| q.value),
    };
    let (rate, delay) = (t.rate.value, t.delay.value);
    if rate.0 <= 0.0 {
        return err("topology.rate", "expected a rate > 0");
    }
    let host_rate = t.host_rate.as_ref().map_or(rate, |r| r.value);
    let need = |f: &'static str, v: Option<u32>| v.ok_or_else(|| ScenarioError::new(format!("topology.{f}"), format!("a {} topology needs `{f}`", kind_name(t.kind))));
    // A field of another generator is a mistake worth naming.
    let given = [
        ("k", t.k.is_some()),
        ("leaves", t.leaves.is_some()),
        ("spines", t.spines.is_some()),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some()),
        ("oversubscription", t.oversubscription.is_some()),
        ("hosts", t.hosts.is_some()),
        ("hops", t.hops.is_some()),
    ];
    let allowed: &[&str] = match t.kind {
        TopologyKind::FatTree => &["k"],
        TopologyKind::LeafSpine => &["leaves", "spines", "hosts_per_leaf", "oversubscription"],
        TopologyKind::Dumbbell => &["hosts"],
        TopologyKind::ParkingLot => &["hops"],
    };
    only_fields("topology", &given, allowed, &format!("a {} topology", kind_name(t.kind)))?;
    if t.host_rate.is_some() && matches!(t.kind, TopologyKind::FatTree | TopologyKind::LeafSpine) {
        return err("topology.host_rate", format!("a {} topology runs its host links at `rate`", kind_name(t.kind)));
    }
    let built = match t.kind {
        TopologyKind::FatTree => topology::fat_tree(need("k", t.k)?, rate, delay, queue),
        TopologyKind::LeafSpine => topology::leaf_spine(
            need("leaves", t.leaves)?,
            need("spines", t.spines)?,
            need("hosts_per_leaf", t.hosts_per_leaf)?,
            rate,
            t.oversubscription.unwrap_or(1.0),
            delay,
            queue,
        ),
        TopologyKind::Dumbbell => topology::dumbbell(need("hosts", t.hosts)?, rate, host_rate, delay, queue),
        TopologyKind::ParkingLot => topology::parking_lot(need("hops", t.hops)?, rate, host_rate, delay, queue),
    };
    built.map(Some).map_err(|(f, m)| ScenarioError::new(format!("topology.{f}"), m))
}

/// Refuse a field (`given`: name, set) that the table's kind (`what`) does not have.
fn only_fields(table: &str, given: &[(&str, bool)], allowed: &[&str], what: &str) -> Result<(), ScenarioError> {
    match given.iter().find(|(x, set)| *set && !allowed.contains(x)) {
        Some((x, _)) => err(format!("{table}.{x}"), format!("not a field of {what} (its fields: {})", allowed.join(", "))),
        None => Ok(()),
    }
}

/// The hosts of a host-pair connection or flow (`what`) at `f`: both named, both hosts of
/// the `[topology]`.
pub(super) fn host_pair<'g>(g: Option<&'g mut Generated>, f: &str, what: &str, from: &Option<String>, to: &Option<String>) -> Result<(&'g mut Generated, usize, usize), ScenarioError> {
    let Some(g) = g else { return err(format!("{f}.from"), "`from`/`to` name hosts of a [topology]; this scenario has none") };
    let (Some(a), Some(b)) = (from, to) else {
        let missing = if from.is_none() { "from" } else { "to" };
        return err(format!("{f}.{missing}"), format!("a host-pair {what} needs both `from` and `to`; `{missing}` is missing"));
    };
    let (src, dst) = (g.host(&format!("{f}.from"), a)?, g.host(&format!("{f}.to"), b)?);
    Ok((g, src, dst))
}

fn kind_name(k: TopologyKind) -> &'static str {
    match k {
        TopologyKind::FatTree => "fat_tree",
        TopologyKind::LeafSpine => "leaf_spine",
        TopologyKind::Dumbbell => "dumbbell",
        TopologyKind::ParkingLot => "parking_lot",
    }
}

impl Generated {
    pub fn new(topo: Topology, link_base: usize) -> Generated { Generated { topo, link_base, cache: HashMap::new() } }

    /// One link per cable, both directions alike, no loss.
    pub fn links(&self) -> Vec<LinkPlan> {
        let dir = |c: &topology::Cable, queue| DirPlan { rate: c.rate, delay: c.delay, queue, loss: LossModel::none(), changes: vec![], jitter: SimTime::ZERO };
        self.topo.cables.iter().map(|c| LinkPlan { name: c.name.clone(), fwd: dir(c, c.queue_fwd), rev: dir(c, c.queue_rev) }).collect()
    }

    /// The node of host `name`, or an error at `field` naming the hosts there are.
    pub fn host(&self, field: &str, name: &str) -> Result<usize, ScenarioError> {
        self.topo.host(name).ok_or_else(|| {
            let names: Vec<&str> = self.topo.host_names().collect();
            let list = if names.len() <= 8 { names.join(", ") } else { format!("{}, {}, ..., {}", names[0], names[1], names[names.len() - 1]) };
            ScenarioError::new(field, format!("unknown host {name:?}; the topology's hosts are {list}"))
        })
    }

    /// `n` paths from `src` to `dst` picked by `choice` (stream "paths/<conn>" or the
    /// seeded hash), appended to `paths` as "<conn>#<i>"; returns their indexes.
    #[allow(clippy::too_many_arguments)]
    pub fn pick(&mut self, field: &str, conn: &str, src: usize, dst: usize, n: usize, choice: PathChoice, seed: u64, paths: &mut Vec<PathPlan>) -> Result<Vec<usize>, ScenarioError> {
        if src == dst {
            return err(field, format!("a connection from {0} to {0}: expected two different hosts", self.topo.nodes[src].name));
        }
        if !self.cache.contains_key(&(src, dst)) {
            let ps = self.topo.equal_cost_paths(src, dst).map_err(|m| ScenarioError::new(field, m))?;
            self.cache.insert((src, dst), ps);
        }
        let cands = &self.cache[&(src, dst)];
        let order: Vec<usize> = match choice {
            PathChoice::Random => {
                let mut rng = Rng::stream(seed, &format!("paths/{conn}"));
                let mut idx: Vec<usize> = (0..cands.len()).collect();
                traffic::shuffle(&mut idx, &mut rng);
                (0..n).map(|i| idx[i % idx.len()]).collect()
            }
            PathChoice::Hash => {
                let (a, b) = (&self.topo.nodes[src].name, &self.topo.nodes[dst].name);
                (0..n).map(|i| (fnv1a64(format!("{seed}/{a}/{b}/{i}").as_bytes()) % cands.len() as u64) as usize).collect()
            }
        };
        let mut sel = Vec::with_capacity(n);
        for (i, &k) in order.iter().enumerate() {
            let fwd_hops: Vec<u32> = cands[k].iter().map(|h| hop_id(self.link_base + h.cable as usize, h.reverse)).collect();
            let rev_hops = fwd_hops.iter().rev().map(|h| h ^ 1).collect();
            sel.push(paths.len());
            paths.push(PathPlan { name: format!("{conn}#{i}"), fwd_hops, rev_hops, backup: false });
        }
        Ok(sel)
    }
}

/// A connection or flow the traffic generated: its spec (checked like a hand-written
/// one, errors at `traffic[j]`), its hosts and its paths' choice.
pub(super) struct GenConn {
    pub field: String,
    pub spec: ConnSpec,
    pub transport: Transport,
    pub src: usize,
    pub dst: usize,
}

/// Expand every `[[traffic]]` table into connection specs.
pub(super) fn traffic(s: &Scenario, g: Option<&Generated>, seed: u64, duration: SimTime) -> Result<Vec<GenConn>, ScenarioError> {
    let mut out = Vec::new();
    for (j, t) in s.traffic.iter().enumerate() {
        let f = format!("traffic[{j}]");
        let Some(g) = g else { return err(f, "[[traffic]] needs a [topology] to draw hosts from") };
        let name = t.name.clone().unwrap_or_else(|| format!("t{j}"));
        if name.trim().is_empty() {
            return err(format!("{f}.name"), "expected a non-empty name");
        }
        let hosts: Vec<usize> = match &t.hosts {
            None => g.topo.hosts.clone(),
            Some(v) => {
                let mut h = Vec::new();
                for (i, n) in v.iter().enumerate() {
                    let id = g.host(&format!("{f}.hosts[{i}]"), n)?;
                    if h.contains(&id) {
                        return err(format!("{f}.hosts[{i}]"), format!("host {n:?} is listed twice"));
                    }
                    h.push(id);
                }
                h
            }
        };
        if hosts.len() < 2 {
            return err(format!("{f}.hosts"), format!("expected at least 2 hosts, got {}", hosts.len()));
        }
        let kind_fields: &[(&str, bool)] = &[
            ("to", t.to.is_some()),
            ("senders", t.senders.is_some()),
            ("size", t.size.is_some()),
            ("load", t.load.is_some()),
            ("size_cdf", t.size_cdf.is_some()),
            ("until", t.until.is_some()),
        ];
        let allowed: &[&str] = match t.kind {
            TrafficKind::Permutation | TrafficKind::Random => &["size"],
            TrafficKind::Incast => &["to", "senders", "size"],
            TrafficKind::Poisson => &["load", "size_cdf", "until"],
        };
        only_fields(&f, kind_fields, allowed, &format!("{:?} traffic", format!("{:?}", t.kind).to_lowercase()))?;
        let start = t.start.as_ref().map_or(SimTime::ZERO, |d| d.value);
        let size = match &t.size {
            Some(z) if z.value == 0 => return err(format!("{f}.size"), "expected a size > 0 B (omit it for unbounded transfers)"),
            z => z.as_ref().map(|z| z.value),
        };
        let n = hosts.len();
        let mut rng = Rng::stream(seed, &format!("traffic/{name}"));
        let demands: Vec<Demand> = match t.kind {
            TrafficKind::Permutation => traffic::permutation(n, &mut rng).into_iter().enumerate().map(|(src, dst)| Demand { src, dst, start, size }).collect(),
            TrafficKind::Random => traffic::random(n, &mut rng).into_iter().enumerate().map(|(src, dst)| Demand { src, dst, start, size }).collect(),
            TrafficKind::Incast => {
                let to = match &t.to {
                    None => 0,
                    Some(name) => {
                        let id = g.host(&format!("{f}.to"), name)?;
                        match hosts.iter().position(|&h| h == id) {
                            Some(p) => p,
                            None => return err(format!("{f}.to"), format!("host {name:?} is not among the traffic's hosts")),
                        }
                    }
                };
                let senders = t.senders.map_or(n - 1, |x| x as usize);
                if senders == 0 || senders > n - 1 {
                    return err(format!("{f}.senders"), format!("expected 1 to {} senders (the other hosts), got {senders}", n - 1));
                }
                traffic::incast(n, to, senders, &mut rng).into_iter().map(|src| Demand { src, dst: to, start, size }).collect()
            }
            TrafficKind::Poisson => {
                let load = t.load.ok_or_else(|| ScenarioError::new(format!("{f}.load"), "poisson traffic needs `load`, the offered load per host in (0, 1]"))?;
                if !(load > 0.0 && load <= 1.0) {
                    return err(format!("{f}.load"), format!("expected a load in (0, 1], got {load}"));
                }
                let cdf = match &t.size_cdf {
                    None => return err(format!("{f}.size_cdf"), "poisson traffic needs `size_cdf`: a CDF file, \"websearch\", \"datamining\" or [[size, probability], ...]"),
                    Some(SizeCdfSpec::Name(n)) => return err(format!("{f}.size_cdf"), format!("the CDF {n:?} was not read into points; load the scenario with the Python front end (it reads files and built-in names) or give the points")),
                    Some(SizeCdfSpec::Points(p)) => SizeCdf::new(p).map_err(|m| ScenarioError::new(format!("{f}.size_cdf"), m))?,
                };
                let until = t.until.as_ref().map_or(duration, |d| d.value);
                // One rate for all hosts: the slowest host link, so no host is offered more
                // than `load` of its link.
                let link = hosts.iter().map(|&h| host_link_rate(&g.topo, h)).fold(f64::INFINITY, f64::min);
                let rate = load * link / (8.0 * cdf.mean());
                let expected = rate * n as f64 * (until.secs_f64() - start.secs_f64()).max(0.0);
                if expected > 1e6 {
                    return err(format!("{f}.load"), format!("about {expected:.0} flows would arrive; at most 10^6 (lower load, hosts or until)"));
                }
                let names: Vec<String> = hosts.iter().map(|&h| g.topo.nodes[h].name.clone()).collect();
                traffic::poisson(n, rate, &cdf, start, until, &mut |h| Rng::stream(seed, &format!("traffic/{name}/{}", names[h])))
            }
        };
        let transport = t.transport.unwrap_or_default();
        let subflows = t.subflows.unwrap_or(1);
        if subflows == 0 || subflows > 64 {
            return err(format!("{f}.subflows"), format!("expected 1 to 64 subflows, got {subflows}"));
        }
        if transport == Transport::Tcp && subflows != 1 {
            return err(format!("{f}.subflows"), "single-path TCP (transport = \"tcp\") has one path; remove `subflows` or use transport \"mptcp\"");
        }
        for (i, d) in demands.iter().enumerate() {
            let spec = ConnSpec {
                name: format!("{name}.{i}"),
                paths: None,
                from: Some(g.topo.nodes[hosts[d.src]].name.clone()),
                to: Some(g.topo.nodes[hosts[d.dst]].name.clone()),
                subflows: Some(subflows),
                path_choice: t.path_choice,
                initial_path: None,
                cc: t.cc.clone(),
                cc_options: t.cc_options.clone(),
                scheduler: t.scheduler.clone(),
                scheduler_options: t.scheduler_options.clone(),
                path_manager: None,
                path_manager_options: None,
                send_buffer: t.send_buffer.clone(),
                receive_buffer: t.receive_buffer.clone(),
                read_rate: None,
                opportunistic_retransmission: None,
                penalisation: None,
                start: Some(Duration { text: format!("{} ns", d.start.ns()), value: d.start }),
                app: AppSpec::Bulk { size: d.size.map(|b| Size { text: format!("{b} B"), value: b }), poll_chunk: None },
            };
            out.push(GenConn { field: f.clone(), spec, transport, src: hosts[d.src], dst: hosts[d.dst] });
        }
    }
    Ok(out)
}

/// The rate of a host's (only) access link.
fn host_link_rate(t: &Topology, host: usize) -> f64 { t.links_of(host).first().map_or(f64::INFINITY, |&(_, c)| t.cables[c].rate.0) }
