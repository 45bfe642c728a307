//! A node without a bridge thread, stepped by a simulated network
//! ([`SimNet`](crate::transport::sim::SimNet), feature `sim`): the
//! network hands it one frame at a time and runs its periodic work when
//! due, on the simulator's thread, on virtual time. And the lookup a
//! simulated client awaits, since a blocking wait is refused there.

use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::Mutex;

use crate::actor::RemoteActor;
use crate::link::{LinkError, LinkRx, Transport};
use crate::node::addr::RemoteAddr;
use crate::node::bridge;
use crate::node::clock::NodeTime;
use crate::node::config::NodeConfig;
use crate::node::error::LookupError;
use crate::node::inbox::Inbox;
use crate::node::shared::Shared;
use crate::node::Node;

/// How often a live bridge runs the node's periodic work: a simulated
/// network's default.
pub(crate) const TICK: std::time::Duration = bridge::TICK;

/// What a simulated network does to one of its nodes. Holds the node
/// weakly: once the node is dropped, every call does nothing.
pub(crate) trait Driven: Send + Sync {
    /// Hands the node at most one frame from its inbox; returns how many
    /// it took.
    fn poll_one(&self) -> usize;
    /// Runs the node's periodic work at `now` (lost links, ask deadlines,
    /// acks, idle sessions, hellos whose link back is open).
    fn tick(&self, now: Instant);
    /// Whether the periodic work has something to do: asks waiting for
    /// their reply or deadline, or hellos to answer. (The network adds
    /// its own reasons: acks owed for frames delivered, links to a dead
    /// or cut off peer not yet found lost.)
    fn wants_tick(&self) -> bool;
    /// The node's time now (its virtual clock, as an `Instant`).
    fn now(&self) -> Instant;
}

struct Driver<R> {
    shared: Weak<Shared>,
    inbox: Weak<Mutex<Inbox<R>>>,
}

impl<R: LinkRx> Driven for Driver<R> {
    fn poll_one(&self) -> usize {
        let (Some(shared), Some(inbox)) = (self.shared.upgrade(), self.inbox.upgrade()) else {
            return 0;
        };
        let Some(mut inbox) = inbox.try_lock() else {
            return 0;
        };
        inbox.poll(&shared, 1).0.unwrap_or(0)
    }

    fn tick(&self, now: Instant) {
        let (Some(shared), Some(inbox)) = (self.shared.upgrade(), self.inbox.upgrade()) else {
            return;
        };
        bridge::periodic(&inbox, &shared, now);
    }

    fn wants_tick(&self) -> bool {
        let (Some(shared), Some(_)) = (self.shared.upgrade(), self.inbox.upgrade()) else {
            return false;
        };
        shared.pending.len() > 0 || shared.connect_back.has_landed()
    }

    fn now(&self) -> Instant {
        match self.shared.upgrade() {
            Some(shared) => shared.time.now(),
            None => Instant::now(),
        }
    }
}

impl<T: Transport> Node<T> {
    /// A node on `endpoint` that starts no thread: the caller (a
    /// simulated network) steps it through the returned [`Driven`].
    pub(crate) fn simulated(
        transport: T,
        endpoint: &str,
        config: NodeConfig,
        time: NodeTime,
    ) -> Result<(Self, Arc<dyn Driven>), LinkError> {
        let node = Node::without_bridge(transport, endpoint, config, time)?;
        let driver = Driver {
            shared: Arc::downgrade(&node.shared),
            inbox: Arc::downgrade(&node.inbox),
        };
        Ok((node, Arc::new(driver)))
    }

    /// [`lookup`](Self::lookup) for a simulated client (feature `sim`):
    /// the same steps (the record found and checked, the link opened or
    /// joined, the hello said), then the answer awaited rather than
    /// waited for, since a simulated run refuses every blocking wait on
    /// its thread. A hello that gets no answer (the network dropped it or
    /// its answer) fails once the node's periodic work finds it past the
    /// connect timeout, in virtual time: [`LookupError::Link`] with
    /// [`LinkError::PeerLost`], as a lost link's does.
    pub async fn lookup_async<A: RemoteActor>(
        &self,
        name: &str,
    ) -> Result<RemoteAddr<A>, LookupError> {
        let shared = &self.shared;
        let mut sent = shared.say_hello(name, A::NAME, A::SCHEMA_HASH)?;
        let answered = (&mut sent.answer).await;
        let (peer, slot) = shared.welcomed(sent, answered, A::NAME, A::SCHEMA_HASH)?;
        Ok(RemoteAddr::new(
            shared.clone(),
            peer,
            slot,
            name,
            shared.config.policy,
        ))
    }
}
