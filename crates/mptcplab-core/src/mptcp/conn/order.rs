//! The order in which a connection walks its subflows, as the kernel walks `conn_list`:
//! a subflow joins the list when its SYN leaves, at the head (out-of-tree
//! `mptcp_add_sock`) or at the tail (upstream `__mptcp_subflow_connect`), as the stack's
//! `SubflowOrder` says; subflows not yet connected follow in index order. The scheduler,
//! the coupled controllers' sibling views and the MPTCP retransmit timer use this order.

use crate::mptcp::stack::SubflowOrder;

#[derive(Clone, Debug, Default)]
pub struct WalkOrder {
    /// Subflow indices in the order their SYNs left.
    created: Vec<usize>,
    order: Vec<usize>,
    /// The position of each subflow in `order`.
    pos: Vec<usize>,
}

impl WalkOrder {
    /// `n` subflows, none connected: index order.
    pub(super) fn new(n: usize) -> WalkOrder { WalkOrder { created: Vec::new(), order: (0..n).collect(), pos: (0..n).collect() } }

    /// A subflow slot was added (not yet connected; it joins the order at `connect`).
    pub(super) fn slot_added(&mut self) { self.pos.push(0); }

    /// Subflow `i` of `n` sends its SYN: it joins the list. Returns false if it had already.
    pub(super) fn connect(&mut self, i: usize, n: usize, how: SubflowOrder) -> bool {
        if self.created.contains(&i) {
            return false;
        }
        self.created.push(i);
        let rest = (0..n).filter(|j| !self.created.contains(j));
        self.order = match how {
            SubflowOrder::OldestFirst => self.created.iter().copied().chain(rest).collect(),
            SubflowOrder::NewestFirst => self.created.iter().rev().copied().chain(rest).collect(),
        };
        for (pos, &j) in self.order.iter().enumerate() {
            self.pos[j] = pos;
        }
        true
    }

    #[inline]
    pub(super) fn order(&self) -> &[usize] { &self.order }

    #[inline]
    pub(super) fn pos(&self, i: usize) -> usize { self.pos[i] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subflow_joins_the_walk_when_its_syn_leaves_at_the_head_or_the_tail() {
        for (how, want) in [(SubflowOrder::NewestFirst, [2, 0, 1]), (SubflowOrder::OldestFirst, [0, 2, 1])] {
            let mut w = WalkOrder::new(3);
            assert_eq!(w.order(), &[0, 1, 2]);
            assert!(w.connect(0, 3, how) && !w.connect(0, 3, how));
            assert!(w.connect(2, 3, how));
            assert_eq!(w.order(), &want, "{how:?}");
            assert_eq!((0..3).map(|i| want[w.pos(i)]).collect::<Vec<_>>(), vec![0, 1, 2]);
            w.slot_added();
            assert!(w.connect(3, 4, how));
            assert_eq!(w.order().len(), 4);
        }
    }
}
