use super::*;
use crate::units::{Bandwidth, QueueLimit, SimTime};
use std::collections::HashSet;

fn g() -> (Bandwidth, SimTime, Queues) { (Bandwidth(1000.0e6), SimTime::from_us(1), Queues { switch: QueueLimit::Packets(100), host: QueueLimit::Packets(1000) }) }

/// The cable of host h0.
fn p0(t: &Topology) -> usize { t.links_of(t.host("h0").unwrap())[0].1 }

fn paths(t: &Topology, a: &str, b: &str) -> Vec<Vec<Hop>> { t.equal_cost_paths(t.host(a).unwrap(), t.host(b).unwrap()).unwrap() }

/// Each path runs from `a` to `b` over adjacent cables, never twice through a node, and
/// the set holds no duplicate.
fn check_paths(t: &Topology, a: &str, b: &str, ps: &[Vec<Hop>]) {
    let mut seen = HashSet::new();
    for p in ps {
        let mut at = t.host(a).unwrap();
        let mut visited = HashSet::from([at]);
        for h in p {
            let c = &t.cables[h.cable as usize];
            let (from, to) = if h.reverse { (c.b, c.a) } else { (c.a, c.b) };
            assert_eq!(from, at, "hops of {a}->{b} are not adjacent");
            assert!(visited.insert(to), "a path of {a}->{b} visits a node twice");
            at = to;
        }
        assert_eq!(at, t.host(b).unwrap());
        assert!(seen.insert(p.clone()), "duplicate path {a}->{b}");
    }
}

#[test]
fn fat_tree_k4_counts_by_hand() {
    // k = 4 (Al-Fares et al. Fig. 3): 4 pods × (2 edge + 2 aggregation) + 4 core = 20
    // switches; 2 hosts per edge switch = 16 hosts; 16 host links + 4 pods × 2 × 2
    // edge-aggregation + 4 pods × 2 × 2 aggregation-core = 48 links.
    let (r, d, q) = g();
    let t = fat_tree(4, r, d, q).unwrap();
    assert_eq!(t.hosts.len(), 16);
    assert_eq!(t.nodes.iter().filter(|n| !n.host).count(), 20);
    assert_eq!(t.cables.len(), 48);
    // Every switch has k = 4 ports, every host one.
    let mut degree = vec![0; t.nodes.len()];
    for c in &t.cables {
        degree[c.a] += 1;
        degree[c.b] += 1;
    }
    for (n, d) in t.nodes.iter().zip(&degree) {
        assert_eq!(*d, if n.host { 1 } else { 4 }, "{}", n.name);
    }
    // h0, h1 share edge e0.0: 1 path of 2 hops. h0, h2: same pod, other edge: one path
    // per aggregation switch, 2, of 4 hops. h0, h4: other pod: one per core, 4, of 6 hops.
    for (b, n, len) in [("h1", 1, 2), ("h2", 2, 4), ("h3", 2, 4), ("h4", 4, 6), ("h15", 4, 6)] {
        let ps = paths(&t, "h0", b);
        assert_eq!(ps.len(), n, "h0->{b}");
        assert!(ps.iter().all(|p| p.len() == len), "h0->{b}");
        check_paths(&t, "h0", b, &ps);
    }
    // A host's own NIC queue is the forward direction of its link; the switch port
    // towards it, the reverse.
    let c = &t.cables[p0(&t)];
    assert_eq!((c.queue_fwd, c.queue_rev), (QueueLimit::Packets(1000), QueueLimit::Packets(100)));
    // Up in forward directions, down in reverse ones.
    let p = &paths(&t, "h0", "h4")[0];
    assert_eq!(p.iter().map(|h| h.reverse).collect::<Vec<_>>(), [false, false, false, true, true, true]);
}

#[test]
fn fat_tree_k8_counts() {
    // k = 8: 128 hosts, 8 × 8 + 16 = 80 switches, 128 + 128 + 128 = 384 links; 16 paths
    // between pods, 4 within a pod.
    let (r, d, q) = g();
    let t = fat_tree(8, r, d, q).unwrap();
    assert_eq!((t.hosts.len(), t.nodes.len() - t.hosts.len(), t.cables.len()), (128, 80, 384));
    assert_eq!(paths(&t, "h0", "h127").len(), 16);
    assert_eq!(paths(&t, "h0", "h5").len(), 4);
    assert_eq!(paths(&t, "h0", "h3").len(), 1);
    check_paths(&t, "h0", "h127", &paths(&t, "h0", "h127"));
}

#[test]
fn fat_tree_refuses_odd_or_small_k() {
    let (r, d, q) = g();
    for k in [0, 1, 3, 7] {
        let e = fat_tree(k, r, d, q).unwrap_err();
        assert_eq!(e.0, "k");
        assert!(e.1.contains("even"), "{}", e.1);
    }
    assert!(fat_tree(2, r, d, q).is_ok());
}

#[test]
fn leaf_spine_counts_and_uplink_rate() {
    let (r, d, q) = g();
    let t = leaf_spine(4, 2, 8, r, 2.0, d, q).unwrap();
    assert_eq!((t.hosts.len(), t.nodes.len() - 32, t.cables.len()), (32, 6, 32 + 8));
    // 8 hosts × 1 Gbit/s over 2 spines at 2:1 = 2 Gbit/s per uplink.
    assert_eq!(t.cables[32].rate, Bandwidth(2000.0e6));
    assert_eq!(paths(&t, "h0", "h8").len(), 2);
    assert_eq!(paths(&t, "h0", "h7").len(), 1);
    assert_eq!(leaf_spine(4, 2, 8, r, 0.0, d, q).unwrap_err().0, "oversubscription");
}

#[test]
fn dumbbell_and_parking_lot() {
    let (r, d, q) = g();
    let t = dumbbell(3, r, Bandwidth(10_000.0e6), d, q).unwrap();
    assert_eq!((t.hosts.len(), t.cables.len()), (6, 7));
    assert_eq!(paths(&t, "l0", "r2")[0].len(), 3);
    let t = parking_lot(3, r, r, d, q).unwrap();
    assert_eq!((t.hosts.len(), t.cables.len()), (4, 7));
    let p = paths(&t, "h0", "h3");
    assert_eq!((p.len(), p[0].len()), (1, 5));
    check_paths(&t, "h0", "h3", &p);
    assert_eq!(paths(&t, "h1", "h2")[0].len(), 3);
}
