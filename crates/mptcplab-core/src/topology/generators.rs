//! The four generators. Each checks its own sizes and names the offending field
//! (relative to the `[topology]` table) in its error.

use super::Topology;
use crate::units::{Bandwidth, QueueLimit, SimTime};

/// (field, message): the caller prefixes `topology.`.
pub type GenError = (&'static str, String);

/// Queue limits: `switch` on every switch output port, `host` on each host's own NIC
/// (the forward direction of its access link).
#[derive(Clone, Copy, Debug)]
pub struct Queues {
    pub switch: QueueLimit,
    pub host: QueueLimit,
}

/// Node and host counts kept below this: a topology is expanded eagerly.
const MAX_HOSTS: usize = 1 << 16;

/// The k-ary FatTree of Al-Fares et al. (SIGCOMM 2008, Sec. 3.3), the topology of Raiciu
/// et al. (SIGCOMM 2011): k pods, each of k/2 edge and k/2 aggregation switches; k/2 hosts
/// per edge switch; (k/2)^2 core switches, aggregation switch j of every pod joined to
/// cores j·k/2 .. (j+1)·k/2 - 1. Hosts h0..h(k^3/4 - 1) in pod order; edge switches
/// "e<pod>.<i>", aggregation "a<pod>.<i>", core "c<i>". Every link has `rate` and
/// `delay`; switch ports queue `q.switch`, hosts `q.host`.
pub fn fat_tree(k: u32, rate: Bandwidth, delay: SimTime, q: Queues) -> Result<Topology, GenError> {
    if k < 2 || k % 2 != 0 {
        return Err(("k", format!("expected an even number of ports k >= 2, got {k}")));
    }
    if k > 64 {
        return Err(("k", format!("expected k <= 64 (65536 hosts), got {k}")));
    }
    let k = k as usize;
    let half = k / 2;
    let mut t = Topology::default();
    let hosts: Vec<usize> = (0..k * half * half).map(|i| t.node(format!("h{i}"), true)).collect();
    let mut edge = vec![vec![0; half]; k];
    let mut agg = vec![vec![0; half]; k];
    for p in 0..k {
        for i in 0..half {
            edge[p][i] = t.node(format!("e{p}.{i}"), false);
        }
        for i in 0..half {
            agg[p][i] = t.node(format!("a{p}.{i}"), false);
        }
    }
    let core: Vec<usize> = (0..half * half).map(|i| t.node(format!("c{i}"), false)).collect();
    for (i, &h) in hosts.iter().enumerate() {
        let (p, e) = (i / (half * half), (i % (half * half)) / half);
        t.cable_q(h, edge[p][e], rate, delay, q.host, q.switch);
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                t.cable(edge[p][e], agg[p][a], rate, delay, q.switch);
            }
        }
        for a in 0..half {
            for m in 0..half {
                t.cable(agg[p][a], core[a * half + m], rate, delay, q.switch);
            }
        }
    }
    Ok(t)
}

/// A two-tier Clos: `leaves` leaf switches "l<i>" with `hosts_per_leaf` hosts each (h0..
/// in leaf order), every leaf joined to every spine "s<j>". Host links run at `rate`; a
/// leaf-spine link at rate × hosts_per_leaf / (spines × oversubscription), so a leaf's
/// uplinks carry 1/oversubscription of what its hosts can send.
pub fn leaf_spine(leaves: u32, spines: u32, hosts_per_leaf: u32, rate: Bandwidth, oversubscription: f64, delay: SimTime, q: Queues) -> Result<Topology, GenError> {
    for (f, v) in [("leaves", leaves), ("spines", spines), ("hosts_per_leaf", hosts_per_leaf)] {
        if v == 0 {
            return Err((f, "expected at least 1".into()));
        }
    }
    if leaves as usize * hosts_per_leaf as usize > MAX_HOSTS || spines > 4096 {
        return Err(("leaves", format!("expected at most {MAX_HOSTS} hosts and 4096 spines")));
    }
    if !oversubscription.is_finite() || oversubscription <= 0.0 {
        return Err(("oversubscription", format!("expected a ratio > 0 (1 = full bisection), got {oversubscription}")));
    }
    let mut t = Topology::default();
    let hosts: Vec<usize> = (0..leaves * hosts_per_leaf).map(|i| t.node(format!("h{i}"), true)).collect();
    let leaf: Vec<usize> = (0..leaves).map(|i| t.node(format!("l{i}"), false)).collect();
    let spine: Vec<usize> = (0..spines).map(|j| t.node(format!("s{j}"), false)).collect();
    let up = Bandwidth(rate.0 * hosts_per_leaf as f64 / (spines as f64 * oversubscription));
    for (i, &h) in hosts.iter().enumerate() {
        t.cable_q(h, leaf[i / hosts_per_leaf as usize], rate, delay, q.host, q.switch);
    }
    for &l in &leaf {
        for &s in &spine {
            t.cable(l, s, up, delay, q.switch);
        }
    }
    Ok(t)
}

/// `hosts` hosts on each side ("l<i>", then "r<i>"), joined by access links at
/// `host_rate` to switches "sl" and "sr", which share one bottleneck link at `rate`.
pub fn dumbbell(hosts: u32, rate: Bandwidth, host_rate: Bandwidth, delay: SimTime, q: Queues) -> Result<Topology, GenError> {
    if hosts == 0 || hosts as usize > MAX_HOSTS / 2 {
        return Err(("hosts", format!("expected 1 to {} hosts per side, got {hosts}", MAX_HOSTS / 2)));
    }
    let mut t = Topology::default();
    let left: Vec<usize> = (0..hosts).map(|i| t.node(format!("l{i}"), true)).collect();
    let right: Vec<usize> = (0..hosts).map(|i| t.node(format!("r{i}"), true)).collect();
    let (sl, sr) = (t.node("sl".into(), false), t.node("sr".into(), false));
    for &h in &left {
        t.cable_q(h, sl, host_rate, delay, q.host, q.switch);
    }
    t.cable(sl, sr, rate, delay, q.switch);
    for &h in &right {
        t.cable_q(h, sr, host_rate, delay, q.host, q.switch);
    }
    Ok(t)
}

/// A chain of `hops` bottleneck links at `rate` between switches s0..s<hops>, with host
/// h<i> on switch s<i> at `host_rate`: h0 -> h<hops> crosses every bottleneck, h<i> ->
/// h<i+1> one of them (the parking-lot of Floyd & Jacobson's fairness studies).
pub fn parking_lot(hops: u32, rate: Bandwidth, host_rate: Bandwidth, delay: SimTime, q: Queues) -> Result<Topology, GenError> {
    if hops == 0 || hops > 4096 {
        return Err(("hops", format!("expected 1 to 4096 bottleneck links, got {hops}")));
    }
    let mut t = Topology::default();
    let hosts: Vec<usize> = (0..=hops).map(|i| t.node(format!("h{i}"), true)).collect();
    let sw: Vec<usize> = (0..=hops).map(|i| t.node(format!("s{i}"), false)).collect();
    for (h, s) in hosts.iter().zip(&sw) {
        t.cable_q(*h, *s, host_rate, delay, q.host, q.switch);
    }
    for w in sw.windows(2) {
        t.cable(w[0], w[1], rate, delay, q.switch);
    }
    Ok(t)
}
