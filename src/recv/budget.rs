//! Body bytes the receiver holds at once, and each peer's share of them.

use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};

/// Body bytes that may be held at once, and each peer's share of them:
/// taken as bytes arrive and given back by guards, so neither a few slow
/// clients nor one busy host can take it all.
pub(super) struct Budget {
    state: Mutex<BudgetState>,
    /// The most one peer (an IP address) may hold at once.
    share: usize,
}

struct BudgetState {
    left: usize,
    by_peer: std::collections::HashMap<IpAddr, usize>,
}

/// Holds part of a [`Budget`] for one body until dropped.
pub(super) struct Held<'a> {
    budget: &'a Budget,
    peer: Option<IpAddr>,
    bytes: usize,
}

/// A peer's share of the budget: a quarter, but room for one largest body.
pub(super) fn peer_share(total: usize, max_body: usize) -> usize {
    (total / 4).max(max_body).min(total)
}

impl Budget {
    pub(super) fn new(bytes: usize, share: usize) -> Self {
        Budget {
            state: Mutex::new(BudgetState {
                left: bytes,
                by_peer: std::collections::HashMap::new(),
            }),
            share,
        }
    }

    /// An empty reservation for a body from `peer`.
    pub(super) fn hold(&self, peer: Option<IpAddr>) -> Held<'_> {
        Held {
            budget: self,
            peer,
            bytes: 0,
        }
    }
}

impl Held<'_> {
    /// Grows the reservation to `bytes`; false when the budget, or the
    /// peer's share of it, has no room.
    pub(super) fn grow_to(&mut self, bytes: usize) -> bool {
        let Some(more) = bytes.checked_sub(self.bytes).filter(|&m| m > 0) else {
            return true;
        };
        let mut st = self
            .budget
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let peer_held = self
            .peer
            .and_then(|p| st.by_peer.get(&p).copied())
            .unwrap_or(0);
        if more > st.left || peer_held + more > self.budget.share {
            return false;
        }
        st.left -= more;
        if let Some(p) = self.peer {
            *st.by_peer.entry(p).or_insert(0) += more;
        }
        self.bytes = bytes;
        true
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut st = self
            .budget
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        st.left += self.bytes;
        if let Some(p) = self.peer
            && let Some(n) = st.by_peer.get_mut(&p)
        {
            *n -= self.bytes.min(*n);
            if *n == 0 {
                st.by_peer.remove(&p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_taken_as_bytes_arrive_within_each_peers_share() {
        let budget = Budget::new(100, peer_share(100, 30));
        assert_eq!(budget.share, 30);
        let (a, b) = (Some([10, 0, 0, 1].into()), Some([10, 0, 0, 2].into()));
        let mut first = budget.hold(a);
        assert!(first.grow_to(20));
        let mut second = budget.hold(a);
        // The same peer: 20 + 15 is past its share of 30.
        assert!(!second.grow_to(15));
        assert!(second.grow_to(10));
        // Another peer has its own share; the total still bounds both.
        let mut other = budget.hold(b);
        assert!(other.grow_to(30));
        let mut third = budget.hold(Some([10, 0, 0, 3].into()));
        assert!(third.grow_to(30));
        assert!(!budget.hold(Some([10, 0, 0, 4].into())).grow_to(11));
        drop(first);
        // Given back: the first peer has room again.
        assert!(second.grow_to(30));
    }
}
