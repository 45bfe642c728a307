//! [`Node`]: one per process and transport; exports local actors under
//! names and looks up the actors other processes export.
//!
//! The top layer: the node's shared state ([`shared`]), what it does with
//! each frame its inbox takes ([`bridge`], [`hello`] with the answers
//! opened off the receiving thread in [`connect_back`], [`acks`]),
//! finding exports ([`lookup`]), the addresses it hands out ([`addr`],
//! [`reconnect`]), waiting for a reply on the asking thread ([`polling`]),
//! and its settings, statistics and errors ([`config`], [`error`]). It
//! uses the session, actor, wire and link layers below it.

mod acks;
pub(crate) mod addr;
mod bridge;
pub(crate) mod clock;
pub(crate) mod config;
mod connect_back;
pub(crate) mod error;
mod hello;
mod inbox;
mod lookup;
mod polling;
pub(crate) mod reconnect;
mod shared;
#[cfg(feature = "sim")]
pub(crate) mod sim;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use kaspar::Addr;
use parking_lot::Mutex;

use crate::actor::inbound::{Inbound, RemoteInput};
use crate::actor::RemoteActor;
use crate::link::policy::SendPolicy;
use crate::link::{LinkTx, Transport};
use crate::node::addr::RemoteAddr;
use crate::node::clock::NodeTime;
use crate::node::config::Gap;
use crate::node::config::{Export, NodeConfig, NodeStats};
use crate::node::error::{ExportError, LookupError};
use crate::node::inbox::Inbox;
use crate::node::shared::{DeliverFn, ExportSlot, Shared};
use crate::session::acks::LinkLoss;
use crate::wire::control::ExportRecord;
use crate::wire::frame::Kind;
use crate::wire::Refused;

/// This process's presence on one transport: an inbox (its endpoint), the
/// bridge thread that serves it, the actors it exports and the links it
/// opened.
///
/// ```
/// use kaspar::prelude::*;
/// use kaspar_remote::{loopback::Loopback, Node};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
/// #[wire(id = 1)]
/// pub struct Add(pub u64);
///
/// #[actor]
/// pub struct Counter {
///     n: u64,
/// }
///
/// #[actor(remote)]
/// impl Counter {
///     #[handler(Add)]
///     fn add(&mut self, a: Add, _ctx: &mut Ctx<Self>) -> u64 {
///         self.n += a.0;
///         self.n
///     }
/// }
///
/// let net = Loopback::new(64);
/// let system = System::new();
/// let server = Node::new(net.clone(), "server").unwrap();
/// server.export("counter", &system.spawn(Counter { n: 0 }).start()).unwrap();
///
/// let client = Node::new(net, "client").unwrap();
/// let counter = client.lookup::<Counter>("counter").unwrap();
/// counter.send(Add(2)).unwrap();
/// assert_eq!(counter.ask(Add(3)).unwrap().wait().unwrap(), 5);
/// drop((client, server));
/// system.shutdown();
/// ```
pub struct Node<T: Transport> {
    pub(crate) shared: Arc<Shared>,
    transport: Arc<T>,
    /// The inbox, polled by the bridge thread and by a thread in
    /// [`wait_polling`](Node::wait_polling): whoever holds the lock polls,
    /// so frames are taken, and delivered, one thread at a time.
    pub(crate) inbox: Arc<Mutex<Inbox<T::Rx>>>,
    stop: Arc<AtomicBool>,
    bridge: Option<JoinHandle<()>>,
}

impl<T: Transport> fmt::Debug for Node<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Node({:?})", self.shared.endpoint)
    }
}

impl<T: Transport> Node<T> {
    /// Listens on `endpoint` with the default [`NodeConfig`] and starts the
    /// bridge thread.
    pub fn new(transport: T, endpoint: &str) -> Result<Self, crate::link::LinkError> {
        Node::with_config(transport, endpoint, NodeConfig::default())
    }

    /// Listens on `endpoint` and starts the bridge thread.
    pub fn with_config(
        transport: T,
        endpoint: &str,
        config: NodeConfig,
    ) -> Result<Self, crate::link::LinkError> {
        let mut node = Node::without_bridge(transport, endpoint, config, NodeTime::Live)?;
        let bridge = {
            let (inbox, shared, stop) =
                (node.inbox.clone(), node.shared.clone(), node.stop.clone());
            std::thread::Builder::new()
                .name(format!("kaspar-remote:{endpoint}"))
                .spawn(move || bridge::run(&inbox, shared, stop))
                .map_err(|e| crate::link::LinkError::Transport(e.to_string()))?
        };
        node.bridge = Some(bridge);
        Ok(node)
    }

    /// Listens on `endpoint`; nothing polls the inbox yet (the caller
    /// starts the bridge thread, or a simulated network steps the node).
    fn without_bridge(
        transport: T,
        endpoint: &str,
        config: NodeConfig,
        time: NodeTime,
    ) -> Result<Self, crate::link::LinkError> {
        let now = time.now();
        let inbox = Arc::new(Mutex::new(Inbox::new(
            transport.listen(endpoint)?,
            &config,
            now,
        )));
        let transport = Arc::new(transport);
        let t = transport.clone();
        let connect = Box::new(move |ep: &str, timeout: Duration| {
            t.connect(ep, timeout)
                .map(|tx| Box::new(tx) as Box<dyn LinkTx>)
        });
        let t = transport.clone();
        let discover = Box::new(move |name: &str| t.discover(name));
        let shared = Arc::new_cyclic(|me| {
            Shared::new(
                endpoint.to_owned(),
                config,
                connect,
                discover,
                me.clone(),
                time,
            )
        });
        Ok(Node {
            shared,
            transport,
            inbox,
            stop: Arc::new(AtomicBool::new(false)),
            bridge: None,
        })
    }

    /// The endpoint this node listens on.
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Exports `addr` under `name`, delivered by `send`: announces it
    /// (endpoint, actor name, schema hash) for [`lookup`](Self::lookup)s in
    /// other processes. It stays exported until
    /// [`withdraw`](Self::withdraw) or until the node is dropped.
    pub fn export<A: RemoteActor>(&self, name: &str, addr: &Addr<A>) -> Result<(), ExportError> {
        self.export_with(name, addr, Export::new())
    }

    /// [`export`](Self::export), delivered as `how` says.
    pub fn export_with<A: RemoteActor>(
        &self,
        name: &str,
        addr: &Addr<A>,
        how: Export,
    ) -> Result<(), ExportError> {
        if how.allow.is_some() && self.shared.auth.is_none() {
            return Err(ExportError::NeedsAuth(name.to_owned()));
        }
        let mut exports = self.shared.exports.write();
        if exports.iter().flatten().any(|e| e.name == name) {
            return Err(ExportError::NameTaken(name.to_owned()));
        }
        let slot = exports.len() as u32;
        let record = ExportRecord {
            endpoint: self.shared.endpoint.clone(),
            slot,
            actor: A::NAME.to_owned(),
            schema: A::SCHEMA_HASH,
        };
        let bytes = postcard::to_stdvec(&record)
            .map_err(|e| ExportError::Link(crate::link::LinkError::Transport(e.to_string())))?;
        let announcement = self
            .transport
            .announce(name, &bytes)
            .map_err(ExportError::Link)?;
        let deliver: DeliverFn = match how.feed {
            Some(feed) => Box::new(move |inbound: Inbound<'_>| {
                let refusal = inbound.reply.clone();
                if feed(RemoteInput::live(
                    inbound.wire_id,
                    inbound.body,
                    inbound.reply,
                )) {
                    Ok(())
                } else {
                    if let Some(r) = refusal {
                        r.refuse(&Refused::Full);
                    }
                    Err(Refused::Full)
                }
            }),
            None => {
                let addr = addr.clone();
                let fast = how.fast;
                Box::new(move |inbound: Inbound<'_>| A::deliver(&addr, Inbound { fast, ..inbound }))
            }
        };
        exports.push(Some(ExportSlot {
            name: name.to_owned(),
            actor: A::NAME,
            schema: A::SCHEMA_HASH,
            deliver,
            _announcement: announcement,
            allow: how
                .allow
                .map(|ids| ids.into_iter().map(String::into_boxed_str).collect()),
        }));
        Ok(())
    }

    /// Withdraws the export `name`; returns whether there was one. Its
    /// slot is never reused, so a remote address to it gets
    /// [`Refused::UnknownTarget`] from now on.
    pub fn withdraw(&self, name: &str) -> bool {
        let mut exports = self.shared.exports.write();
        match exports
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(|e| e.name == name))
        {
            Some(e) => {
                *e = None;
                true
            }
            None => false,
        }
    }

    /// Finds the actor another process exports as `name`, checks that it
    /// is an `A` with this build's schema, connects to it and says hello.
    /// Waits at most the connect timeout (twice: once to connect, once for
    /// the answer). The address's link, once lost, stays lost, unless it
    /// is told to reconnect ([`RemoteAddr::with_reconnect`]).
    pub fn lookup<A: RemoteActor>(&self, name: &str) -> Result<RemoteAddr<A>, LookupError> {
        let shared = &self.shared;
        let (peer, slot) = shared.lookup(name, A::NAME, A::SCHEMA_HASH)?;
        Ok(RemoteAddr::new(
            shared.clone(),
            peer,
            slot,
            name,
            shared.config.policy,
        ))
    }

    /// The node's counters.
    pub fn stats(&self) -> NodeStats {
        self.shared.stats()
    }

    /// The sequence gaps this node has seen in what other nodes sent it,
    /// oldest first (the last 1024).
    pub fn gaps(&self) -> Vec<Gap> {
        self.shared.gaps()
    }

    /// The outbound links this node found lost (the last 1024), each with
    /// what it sent that the peer never acknowledged and what became of
    /// it ([`LinkLoss`]); summed in [`NodeStats::unacknowledged`].
    pub fn losses(&self) -> Vec<LinkLoss> {
        self.shared.losses.list()
    }
}

impl<T: Transport> Drop for Node<T> {
    /// Says goodbye on every link (so the other ends report no gap),
    /// withdraws every export, stops the bridge thread, fails the remote
    /// asks still waiting ([`AskError::PeerLost`](kaspar::AskError::PeerLost)) and tells the watchers
    /// of its remote addresses (`ExitReason::PeerLost`: through this node,
    /// the actors are out of reach). Returns within one idle step of the
    /// bridge (at most a millisecond) plus the time a delivery in progress
    /// takes. A thread still connecting back to the sender of a hello is
    /// not waited for: it keeps the transport until its connect ends (at
    /// most the connect timeout), then drops the link.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        for peer in self.shared.close_links() {
            let _ = peer.send(Kind::Bye, 0, 0, 0, &(), SendPolicy::Fail);
            peer.mark_lost();
            self.shared.report_lost(&peer);
        }
        self.shared.exports.write().clear();
        self.stop.store(true, Ordering::Release);
        if let Some(bridge) = self.bridge.take() {
            let _ = bridge.join();
        }
        self.shared.pending.fail_all();
    }
}
