//! [`Node`]: one per process and transport; exports local actors under
//! names and looks up the actors other processes export.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kaspar::{Addr, AskError};

use crate::addr::RemoteAddr;
use crate::bridge;
use crate::control::{ExportRecord, Hello};
use crate::error::{ExportError, LookupError, Refused};
use crate::frame::Kind;
use crate::inbound::{Inbound, RemoteInput};
use crate::link::{LinkTx, Transport};
use crate::pending::Outcome;
use crate::policy::{IdleStrategy, SendPolicy};
use crate::shared::{DeliverFn, ExportSlot, Shared};
use crate::wire::RemoteActor;

/// A node's settings.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// How long a lookup waits for the exporting node to answer its
    /// hello, and a connect for the peer to appear.
    pub connect_timeout: Duration,
    /// How long a remote ask waits for its reply before it fails with
    /// [`AskError::PeerLost`]: the bound on any wait for another process.
    pub reply_timeout: Duration,
    /// The send policy of the remote addresses [`Node::lookup`] returns,
    /// and of replies.
    pub policy: SendPolicy,
    /// How long the bridge waits for room when an exported actor's mailbox
    /// is full, before it refuses the message ([`Refused::Full`]). While
    /// it waits, frames stay in the node's inbox, so the senders feel the
    /// back-pressure.
    pub inbound_wait: Duration,
    /// The most frames the bridge takes from the inbox per poll.
    pub poll_batch: usize,
    /// How the bridge thread waits while the inbox is empty: the trade
    /// between an idle node's CPU and the latency of a frame that finds
    /// it idle. [`IdleStrategy::Spin`] for a node on a core of its own
    /// (the round-trip bench uses it).
    pub idle: IdleStrategy,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            connect_timeout: Duration::from_secs(2),
            reply_timeout: Duration::from_secs(30),
            policy: SendPolicy::Fail,
            inbound_wait: Duration::from_millis(10),
            poll_batch: 256,
            idle: IdleStrategy::DEFAULT,
        }
    }
}

/// How an exported actor receives its inbound messages.
pub struct Export {
    fast: bool,
    feed: Option<Box<dyn Fn(RemoteInput) -> bool + Send + Sync>>,
}

impl Export {
    /// Delivery by `send` (the default): queued for the actor's thread.
    pub fn new() -> Self {
        Export {
            fast: false,
            feed: None,
        }
    }

    /// Delivery by `fast_send` on the bridge thread: the handler runs there
    /// under the actor's lock and an ask's reply is encoded straight back.
    /// For an actor whose handlers are short; a long one holds up every
    /// other inbound message of the node.
    pub fn fast_send(mut self) -> Self {
        self.fast = true;
        self
    }

    /// Hands every inbound message to `feed` instead, as a
    /// [`RemoteInput`]: to journal a group's remote input, `feed` is the
    /// group's `Journaled::feed` and its route calls
    /// [`deliver_input`](crate::deliver_input). `feed` returns whether the
    /// message was delivered.
    pub fn fed_by(mut self, feed: impl Fn(RemoteInput) -> bool + Send + Sync + 'static) -> Self {
        self.feed = Some(Box::new(feed));
        self
    }
}

impl Default for Export {
    fn default() -> Self {
        Export::new()
    }
}

impl fmt::Debug for Export {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Export")
            .field("fast_send", &self.fast)
            .field("fed", &self.feed.is_some())
            .finish()
    }
}

/// Frames a session lost, as the receiving node saw them.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Gap {
    /// The sending node's endpoint, when known (a reconnect names it).
    pub peer: Option<String>,
    /// The session that lost them.
    pub session: u64,
    /// How many frames never arrived.
    pub missed: u64,
    /// Whether the loss was found when the sender reconnected (frames lost
    /// with the old link), rather than by a jump in the sequence numbers
    /// of a live session (drop-oldest, say).
    pub reconnected: bool,
}

/// A node's counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[non_exhaustive]
pub struct NodeStats {
    /// Frames taken from the inbox.
    pub frames_in: u64,
    /// Frames that were not frames (bad header, body that does not decode
    /// as a control message).
    pub rejected: u64,
    /// Inbound messages not delivered (unknown export or message, full or
    /// stopped actor, ask on an unknown session).
    pub refused: u64,
    /// Frames dropped as duplicates (at-most-once).
    pub duplicates: u64,
    /// Frames known lost: the sum of the [`Gap`]s.
    pub missed: u64,
    /// Outbound messages that could not be framed (see
    /// [`RemoteAddr::send`]).
    pub unsendable: u64,
    /// Links found lost.
    pub peers_lost: u64,
    /// Remote asks waiting for their reply.
    pub pending: usize,
}

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
    shared: Arc<Shared>,
    transport: Arc<T>,
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
    pub fn new(transport: T, endpoint: &str) -> Result<Self, crate::LinkError> {
        Node::with_config(transport, endpoint, NodeConfig::default())
    }

    /// Listens on `endpoint` and starts the bridge thread.
    pub fn with_config(
        transport: T,
        endpoint: &str,
        config: NodeConfig,
    ) -> Result<Self, crate::LinkError> {
        let rx = transport.listen(endpoint)?;
        let transport = Arc::new(transport);
        let t = transport.clone();
        let connect = Box::new(move |ep: &str, timeout: Duration| {
            t.connect(ep, timeout)
                .map(|tx| Box::new(tx) as Box<dyn LinkTx>)
        });
        let shared = Arc::new(Shared::new(endpoint.to_owned(), config, connect));
        let stop = Arc::new(AtomicBool::new(false));
        let bridge = {
            let (shared, stop) = (shared.clone(), stop.clone());
            std::thread::Builder::new()
                .name(format!("kaspar-remote:{endpoint}"))
                .spawn(move || bridge::run(rx, shared, stop))
                .map_err(|e| crate::LinkError::Transport(e.to_string()))?
        };
        Ok(Node {
            shared,
            transport,
            stop,
            bridge: Some(bridge),
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
            .map_err(|e| ExportError::Link(crate::LinkError::Transport(e.to_string())))?;
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
    /// the answer).
    pub fn lookup<A: RemoteActor>(&self, name: &str) -> Result<RemoteAddr<A>, LookupError> {
        let bytes = self
            .transport
            .discover(name)?
            .ok_or_else(|| LookupError::NotFound(name.to_owned()))?;
        let record: ExportRecord =
            postcard::from_bytes(&bytes).map_err(|e| LookupError::BadRecord(e.to_string()))?;
        if record.actor != A::NAME {
            return Err(LookupError::WrongActor {
                expected: A::NAME,
                found: record.actor,
            });
        }
        if record.schema != A::SCHEMA_HASH {
            return Err(LookupError::SchemaMismatch {
                actor: A::NAME,
                expected: A::SCHEMA_HASH,
                found: record.schema,
            });
        }
        let shared = &self.shared;
        let (peer, previous) = shared.peer(&record.endpoint)?;
        let hello = Hello {
            from: shared.endpoint.clone(),
            export: name.to_owned(),
            actor: A::NAME.to_owned(),
            schema: A::SCHEMA_HASH,
            previous,
        };
        let timeout = shared.config.connect_timeout;
        let (mut answer, route) = kaspar::__private::ask_pair::<Result<(), Refused>>();
        let id = shared.pending.next_id();
        shared.pending.insert(
            id,
            peer.id,
            Instant::now() + timeout,
            Box::new(move |outcome: Outcome<'_>| match outcome {
                Outcome::Reply(_) => route.deliver(Ok(())),
                Outcome::Refused(why) => route.deliver(Err(why)),
                Outcome::Lost => route.fail(AskError::PeerLost),
            }),
        );
        let policy = SendPolicy::Wait(timeout);
        if peer
            .send(Kind::Hello, record.slot, 0, id, &hello, policy)
            .is_err()
        {
            shared.pending.cancel(id);
            return Err(LookupError::Link(crate::LinkError::PeerLost));
        }
        match answer.wait_timeout(timeout) {
            Ok(Ok(())) => Ok(RemoteAddr::new(
                shared.clone(),
                peer,
                record.slot,
                name,
                shared.config.policy,
            )),
            Ok(Err(Refused::WrongActor { actor, schema })) if actor != A::NAME => {
                let _ = schema;
                Err(LookupError::WrongActor {
                    expected: A::NAME,
                    found: actor,
                })
            }
            Ok(Err(Refused::WrongActor { schema, .. })) => Err(LookupError::SchemaMismatch {
                actor: A::NAME,
                expected: A::SCHEMA_HASH,
                found: schema,
            }),
            Ok(Err(why)) => Err(LookupError::Refused(why)),
            Err(AskError::Timeout) => {
                shared.pending.cancel(id);
                Err(LookupError::Timeout)
            }
            Err(_) => Err(LookupError::Link(crate::LinkError::PeerLost)),
        }
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
}

impl<T: Transport> Drop for Node<T> {
    /// Says goodbye on every link (so the other ends report no gap),
    /// withdraws every export, stops the bridge thread and fails the
    /// remote asks still waiting ([`AskError::PeerLost`]).
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
