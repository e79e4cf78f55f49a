//! Generated topologies (issue 16): hosts and switches joined by full-duplex cables, and
//! the equal-cost shortest paths between two hosts. `scenario::validate` turns the cables
//! into links and the chosen paths into routes, so the simulator below is unchanged.
//!
//! A cable's forward direction runs from its first node to its second. The generators
//! put the node nearer the hosts first, so "forward" is up towards the core and a route
//! between two hosts goes up in forward directions and down in reverse ones.

mod generators;

pub use generators::{dumbbell, fat_tree, leaf_spine, parking_lot, GenError, Queues};

use crate::units::{Bandwidth, QueueLimit, SimTime};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub host: bool,
}

/// A full-duplex cable between nodes `a` and `b`: one rate and delay, a queue limit per
/// direction (a host's own NIC queue differs from a switch port's).
#[derive(Clone, Debug)]
pub struct Cable {
    pub name: String,
    pub a: usize,
    pub b: usize,
    pub rate: Bandwidth,
    pub delay: SimTime,
    /// a -> b.
    pub queue_fwd: QueueLimit,
    /// b -> a.
    pub queue_rev: QueueLimit,
}

/// One direction of one cable: `reverse` is b -> a.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    pub cable: u32,
    pub reverse: bool,
}

/// More equal-cost paths than this between two hosts is refused rather than enumerated.
pub const MAX_PATHS: usize = 4096;

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub cables: Vec<Cable>,
    /// Node ids of the hosts, in the generator's order (h0, h1, ...).
    pub hosts: Vec<usize>,
    /// Per node: (neighbour, cable), in the order cables were added.
    adj: Vec<Vec<(usize, usize)>>,
    by_name: HashMap<String, usize>,
}

impl Topology {
    pub(crate) fn node(&mut self, name: String, host: bool) -> usize {
        let id = self.nodes.len();
        self.by_name.insert(name.clone(), id);
        self.nodes.push(Node { name, host });
        self.adj.push(Vec::new());
        if host {
            self.hosts.push(id);
        }
        id
    }

    /// A cable from `a` (forward = a -> b) named "<a>-<b>"; `queue` at both ends.
    pub(crate) fn cable(&mut self, a: usize, b: usize, rate: Bandwidth, delay: SimTime, queue: QueueLimit) { self.cable_q(a, b, rate, delay, queue, queue) }

    /// A cable with a queue limit per direction.
    pub(crate) fn cable_q(&mut self, a: usize, b: usize, rate: Bandwidth, delay: SimTime, queue_fwd: QueueLimit, queue_rev: QueueLimit) {
        let id = self.cables.len();
        let name = format!("{}-{}", self.nodes[a].name, self.nodes[b].name);
        self.cables.push(Cable { name, a, b, rate, delay, queue_fwd, queue_rev });
        self.adj[a].push((b, id));
        self.adj[b].push((a, id));
    }

    /// The host called `name`, if there is one.
    pub fn host(&self, name: &str) -> Option<usize> { self.by_name.get(name).copied().filter(|&n| self.nodes[n].host) }

    /// (neighbour, cable) of every cable at `node`.
    pub fn links_of(&self, node: usize) -> &[(usize, usize)] { &self.adj[node] }

    pub fn host_names(&self) -> impl Iterator<Item = &str> { self.hosts.iter().map(|&h| self.nodes[h].name.as_str()) }

    /// Every shortest path from host `src` to host `dst` (node ids), as hops, in a fixed
    /// order (depth first along the generator's cable order). Hosts are never transit
    /// nodes. `Err` when there is no path or more than `MAX_PATHS`.
    pub fn equal_cost_paths(&self, src: usize, dst: usize) -> Result<Vec<Vec<Hop>>, String> {
        let n = self.nodes.len();
        // Breadth first from dst: dist[v] = hops from v to dst, through switches only.
        let mut dist = vec![u32::MAX; n];
        dist[dst] = 0;
        let mut frontier = vec![dst];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &v in &frontier {
                if v != dst && self.nodes[v].host {
                    continue;
                }
                for &(w, _) in &self.adj[v] {
                    if dist[w] == u32::MAX {
                        dist[w] = dist[v] + 1;
                        next.push(w);
                    }
                }
            }
            frontier = next;
        }
        if dist[src] == u32::MAX {
            return Err(format!("no route from {} to {}", self.nodes[src].name, self.nodes[dst].name));
        }
        let mut out = Vec::new();
        let mut stack: Vec<Hop> = Vec::with_capacity(dist[src] as usize);
        self.walk(src, dst, &dist, &mut stack, &mut out)?;
        Ok(out)
    }

    fn walk(&self, v: usize, dst: usize, dist: &[u32], stack: &mut Vec<Hop>, out: &mut Vec<Vec<Hop>>) -> Result<(), String> {
        if v == dst {
            if out.len() == MAX_PATHS {
                return Err(format!("more than {MAX_PATHS} equal-cost paths between two hosts"));
            }
            out.push(stack.clone());
            return Ok(());
        }
        if !stack.is_empty() && self.nodes[v].host {
            return Ok(());
        }
        for &(w, c) in &self.adj[v] {
            if dist[w] != u32::MAX && dist[w] + 1 == dist[v] {
                stack.push(Hop { cable: c as u32, reverse: self.cables[c].a != v });
                self.walk(w, dst, dist, stack, out)?;
                stack.pop();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
