//! The liveness monitor: finds dead peer processes and removes what they
//! left in shared memory, off every send and receive path.
//!
//! iceoryx2 learns that a process died from its node's monitoring token
//! (a lock the operating system releases with the process), but only when
//! someone asks: listing the nodes costs a directory scan and a few system
//! calls per node. Doing that inside `send_frame` would put a spike of tens
//! of microseconds on the hot path every check. Instead one thread per
//! transport, started with its first link, lists the nodes every quarter of
//! the liveness timeout, marks the links whose peer node is gone, and
//! removes the stale resources of every dead node it saw. A link's hot path
//! only loads one atomic flag.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use ::iceoryx2::config::Config as IceConfig;
use ::iceoryx2::node::NodeView;
use ::iceoryx2::prelude::*;
use parking_lot::Mutex;

use super::Ipc;

/// What the monitor knows about one link's peer.
#[derive(Debug)]
pub(super) struct PeerWatch {
    /// The peer's node (`None` for an inbox, which watches nobody but keeps
    /// the dead-sender cleanup running).
    node: Option<u128>,
    lost: AtomicBool,
}

impl PeerWatch {
    /// Whether the peer was found dead or gone. Never turns back.
    #[inline]
    pub(super) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Marks the peer lost (a link that saw it leave).
    pub(super) fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }
}

struct Shared {
    config: IceConfig,
    interval: Duration,
    watches: Mutex<Vec<Weak<PeerWatch>>>,
    stop: AtomicBool,
    cleaned: AtomicU64,
}

/// One monitor per transport; its thread stops when the transport drops.
pub(super) struct Monitor {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Monitor {
    pub(super) fn new(config: IceConfig, interval: Duration) -> Self {
        Monitor {
            shared: Arc::new(Shared {
                config,
                interval,
                watches: Mutex::new(Vec::new()),
                stop: AtomicBool::new(false),
                cleaned: AtomicU64::new(0),
            }),
            thread: Mutex::new(None),
        }
    }

    /// Starts watching the process that owns `node` (or, with `None`, only
    /// keeps the monitor running for the caller's lifetime). The watch ends
    /// when the returned handle's last clone drops.
    pub(super) fn watch(&self, node: Option<u128>) -> Result<Arc<PeerWatch>, String> {
        let watch = Arc::new(PeerWatch {
            node,
            lost: AtomicBool::new(false),
        });
        self.shared.watches.lock().push(Arc::downgrade(&watch));
        let mut thread = self.thread.lock();
        if thread.is_none() {
            let shared = Arc::clone(&self.shared);
            let handle = std::thread::Builder::new()
                .name("kaspar-iox2-liveness".into())
                .spawn(move || run(&shared))
                .map_err(|e| format!("cannot start the liveness monitor thread: {e}"))?;
            *thread = Some(handle);
        }
        Ok(watch)
    }

    /// How many dead nodes this monitor has removed so far.
    pub(super) fn dead_nodes_cleaned(&self) -> u64 {
        self.shared.cleaned.load(Ordering::Relaxed)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(handle) = self.thread.lock().take() {
            handle.thread().unpark();
            // The thread only sleeps and lists nodes; it ends within one
            // interval. A panic in it has already been reported.
            let _ = handle.join();
        }
    }
}

fn run(shared: &Shared) {
    while !shared.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(shared.interval);
        if shared.stop.load(Ordering::Acquire) {
            break;
        }
        round(shared);
    }
}

/// One look at every node: marks the watches whose node is not alive, then
/// removes the dead nodes' resources.
fn round(shared: &Shared) {
    let watches: Vec<Arc<PeerWatch>> = {
        let mut list = shared.watches.lock();
        list.retain(|w| w.strong_count() > 0);
        list.iter().filter_map(Weak::upgrade).collect()
    };
    if watches.is_empty() {
        return;
    }
    let mut alive = HashSet::new();
    let mut dead = Vec::new();
    let listed = Node::<Ipc>::list(&shared.config, |state| {
        match state {
            NodeState::Alive(view) => {
                alive.insert(view.id().value());
            }
            NodeState::Dead(view) => dead.push(view),
            // Cannot tell (no permission, or half created or removed):
            // not evidence of death.
            NodeState::Inaccessible(id) | NodeState::Undefined(id) => {
                alive.insert(id.value());
            }
        }
        CallbackProgression::Continue
    });
    if listed.is_err() {
        // The node directory could not be read this round; try again next.
        return;
    }
    for watch in &watches {
        if let Some(node) = watch.node {
            if !alive.contains(&node) {
                watch.mark_lost();
            }
        }
    }
    for view in dead {
        // Another process may be removing the same node; either way it goes.
        if view.try_remove_stale_resources().is_ok() {
            shared.cleaned.fetch_add(1, Ordering::Relaxed);
        }
    }
}
