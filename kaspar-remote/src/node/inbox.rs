//! A node's receiving side: the transport's inbox, the inbound sessions,
//! and the reply a thread in `Node::ask_polling` is catching. All of it is
//! behind the node's inbox lock, and only the thread holding that lock
//! polls: the bridge, or a thread in one of the polling waits.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::link::{LinkError, LinkRx};
use crate::node::config::NodeConfig;
use crate::node::shared::Shared;
use crate::session::counters::Counters;
use crate::session::sessions::Sessions;
use crate::wire::frame::{Header, Kind};

/// A node's receiving side: the transport's inbox and what only the
/// thread polling it touches, behind the node's inbox lock (the bridge
/// thread polls, or a thread in `Node::wait_polling` or
/// `Node::ask_polling` does). So a frame
/// costs no lock of its own: the sessions' sequence numbers and their
/// links back are this struct's, and a reply route borrows its link from
/// here instead of counting a reference.
pub(crate) struct Inbox<R> {
    rx: R,
    /// The inbound sessions, by session id, bounded.
    sessions: Sessions,
    /// Frames taken (read by [`Node::stats`](crate::Node::stats) from
    /// another thread, written only here: no read-modify-write).
    frames_in: u64,
    /// The reply the thread in `Node::ask_polling` waits for.
    pub(crate) catch: Catch,
}

/// The reply to the ask of the thread in `Node::ask_polling`, which holds
/// the inbox lock from before it sends the ask until it has the reply (or
/// gives up): the reply is caught here as it is polled, and never goes
/// through the table of pending asks or a reply slot.
#[derive(Default)]
pub(crate) struct Catch {
    /// The ask's correlation id; 0 while nobody waits.
    pub(crate) id: u64,
    /// Once caught: the reply frame's kind (`Reply` or `Error`), and its
    /// body, still encoded (the buffer is kept, so a steady state of
    /// replies no longer than earlier ones allocates nothing).
    pub(crate) caught: Option<Kind>,
    pub(crate) body: Vec<u8>,
}

impl Catch {
    /// Expects the reply to ask `id`.
    pub(crate) fn expect(&mut self, id: u64) {
        self.id = id;
        self.caught = None;
    }

    /// Takes the frame if it is the reply expected; returns whether it was.
    pub(crate) fn take(&mut self, h: &Header, body: &[u8]) -> bool {
        if self.id == 0 || h.correlation != self.id || !matches!(h.kind, Kind::Reply | Kind::Error)
        {
            return false;
        }
        self.id = 0;
        self.caught = Some(h.kind);
        self.body.clear();
        self.body.extend_from_slice(body);
        true
    }
}

impl<R> Inbox<R> {
    /// Answers the parked hellos whose connect back has ended (or
    /// could not be made). The bridge calls it from its periodic work
    /// when [`ConnectBack::has_landed`](crate::node::connect_back::ConnectBack::has_landed),
    /// so a poll pays nothing for it.
    #[cold]
    pub(crate) fn land(&mut self, shared: &Shared) {
        let landed = shared.connect_back.take_landed();
        let sessions = &mut self.sessions;
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| shared.on_landed(sessions, landed)))
        {
            shared.caught(payload);
        }
    }

    /// Evicts the sessions idle past the node's `session_idle` (the
    /// bridge's periodic work), and publishes the table's size.
    pub(crate) fn sweep(&mut self, shared: &Shared, now: Instant) {
        // The tick's acks, for what was handled since the last one.
        shared.acknowledge(&mut self.sessions);
        let evicted = self.sessions.sweep(now);
        if evicted > 0 {
            Counters::bump(&shared.counters.sessions_evicted, evicted);
        }
        let open = self.sessions.len() as u64;
        shared.counters.sessions.store(open, Ordering::Relaxed);
    }
}

impl<R: LinkRx> Inbox<R> {
    pub(crate) fn new(rx: R, config: &NodeConfig, now: Instant) -> Self {
        Inbox {
            rx,
            sessions: Sessions::new(config.max_sessions, config.session_idle, now),
            frames_in: 0,
            catch: Catch::default(),
        }
    }

    /// Takes up to `batch` frames and delivers them: returns how many it
    /// took, and whether one answered an ask a thread of this process
    /// waits for.
    ///
    /// A panic while a frame is handled (an export's feed that panics, say)
    /// is caught here, before it unwinds into the engine's poll, and
    /// counted (`NodeStats::panics`); the frame is dropped, and the
    /// thread goes on with the next.
    pub(crate) fn poll(
        &mut self,
        shared: &Shared,
        batch: usize,
    ) -> (Result<usize, LinkError>, bool) {
        let Inbox {
            rx,
            sessions,
            frames_in,
            catch,
        } = self;
        let mut answered = false;
        let polled = rx.poll(batch, &mut |bytes| {
            *frames_in += 1;
            match catch_unwind(AssertUnwindSafe(|| shared.on_frame(sessions, catch, bytes))) {
                Ok(a) => answered |= a,
                Err(payload) => shared.caught(payload),
            }
        });
        if matches!(polled, Ok(n) if n > 0) {
            // The session count first, then the frame count with Release:
            // a snapshot that reads this batch's frame count (Acquire, in
            // `Shared::stats`) reads this batch's session count too.
            let open = sessions.len() as u64;
            shared.counters.sessions.store(open, Ordering::Relaxed);
            shared
                .counters
                .frames_in
                .store(*frames_in, Ordering::Release);
        }
        (polled, answered)
    }
}
