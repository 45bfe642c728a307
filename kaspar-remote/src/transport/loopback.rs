//! An in-process transport for tests and examples: every [`Loopback`]
//! clone is one "network", each endpoint a bounded ring of frames, with
//! real back-pressure and ways to stall a receiver or lose a link.
//!
//! Frames are written into the ring's buffers in place (the
//! [`LinkTx::send_frame`] contract: `fill` writes straight into the
//! buffer the receiver will read), and buffers are recycled, so a steady
//! stream allocates nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::link::{Announcement, LinkError, LinkRx, LinkTx, PeerState, Transport};

/// Ring slots and buffers allocated when an endpoint opens; a deeper ring
/// allocates the rest as it fills.
const PREALLOCATED: usize = 4096;

/// The smallest frame buffer allocated.
const MIN_BUFFER: usize = 256;

/// An in-process network. Clones share it.
#[derive(Clone, Debug)]
pub struct Loopback {
    hub: Arc<Hub>,
}

#[derive(Debug)]
struct Hub {
    capacity: usize,
    max_frame: usize,
    inboxes: Mutex<HashMap<String, Arc<Inbox>>>,
    records: Mutex<HashMap<String, (u64, Vec<u8>)>>,
    next_id: AtomicU64,
}

#[derive(Debug)]
struct Inbox {
    ring: Mutex<Ring>,
    /// `poll` hands nothing out while set.
    paused: AtomicBool,
    /// The receiver is gone.
    dead: AtomicBool,
}

#[derive(Debug, Default)]
struct Ring {
    /// (sending link, frame), oldest first.
    frames: VecDeque<(u64, Vec<u8>)>,
    /// Buffers of frames already taken, for reuse.
    spare: Vec<Vec<u8>>,
    /// The links connected to this inbox.
    links: Vec<Weak<LinkState>>,
}

#[derive(Debug)]
struct LinkState {
    id: u64,
    lost: AtomicBool,
}

impl Loopback {
    /// A network whose inboxes hold at most `capacity` frames each, of at
    /// most 64 KiB.
    pub fn new(capacity: usize) -> Self {
        Loopback::with_max_frame(capacity, 64 << 10)
    }

    /// A network whose inboxes hold at most `capacity` frames of at most
    /// `max_frame` bytes.
    pub fn with_max_frame(capacity: usize, max_frame: usize) -> Self {
        Loopback {
            hub: Arc::new(Hub {
                capacity: capacity.max(1),
                max_frame,
                inboxes: Mutex::new(HashMap::new()),
                records: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(1),
            }),
        }
    }

    fn inbox(&self, endpoint: &str) -> Option<Arc<Inbox>> {
        self.hub.inboxes.lock().get(endpoint).cloned()
    }

    /// Stops (or resumes) the receiver of `endpoint` taking frames: its
    /// ring fills, and senders get [`LinkError::Full`]. Returns whether
    /// the endpoint exists.
    pub fn pause(&self, endpoint: &str, paused: bool) -> bool {
        self.inbox(endpoint)
            .map(|i| i.paused.store(paused, Ordering::Release))
            .is_some()
    }

    /// Loses every link connected to `endpoint` now, as a broken
    /// connection does: the frames they sent that the receiver has not
    /// taken are discarded, and their senders see [`PeerState::Lost`].
    /// The endpoint itself stays, and new connections to it work. Returns
    /// how many frames were discarded.
    pub fn sever(&self, endpoint: &str) -> usize {
        let Some(inbox) = self.inbox(endpoint) else {
            return 0;
        };
        let mut ring = inbox.ring.lock();
        let lost: Vec<u64> = ring
            .links
            .drain(..)
            .filter_map(|l| l.upgrade())
            .map(|l| {
                l.lost.store(true, Ordering::Release);
                l.id
            })
            .collect();
        let before = ring.frames.len();
        ring.frames.retain(|(from, _)| !lost.contains(from));
        before - ring.frames.len()
    }

    /// Kills the receiver of `endpoint`, as if its process died: its
    /// frames are discarded, every link to it is lost, and its inbox
    /// reports [`LinkError::PeerLost`]. (Its announcements stay until its
    /// node withdraws them; a lookup meanwhile cannot connect, and fails.)
    pub fn kill(&self, endpoint: &str) {
        self.sever(endpoint);
        if let Some(inbox) = self.hub.inboxes.lock().remove(endpoint) {
            inbox.dead.store(true, Ordering::Release);
            inbox.ring.lock().frames.clear();
        }
    }

    /// Frames waiting in `endpoint`'s ring.
    pub fn queued(&self, endpoint: &str) -> usize {
        self.inbox(endpoint)
            .map(|i| i.ring.lock().frames.len())
            .unwrap_or(0)
    }
}

impl Transport for Loopback {
    type Tx = LoopbackTx;
    type Rx = LoopbackRx;

    fn listen(&self, endpoint: &str) -> Result<LoopbackRx, LinkError> {
        let mut inboxes = self.hub.inboxes.lock();
        if inboxes.contains_key(endpoint) {
            return Err(LinkError::Transport(format!(
                "endpoint {endpoint:?} is already listened on"
            )));
        }
        // The ring and its buffers are allocated up front (up to a bound),
        // as an engine's shared memory is, so a steady stream allocates
        // nothing: `capacity` buffers queued, and one in the receiver's
        // hands.
        let room = self.hub.capacity.min(PREALLOCATED) + 1;
        let inbox = Arc::new(Inbox {
            ring: Mutex::new(Ring {
                frames: VecDeque::with_capacity(room),
                spare: (0..room).map(|_| Vec::with_capacity(MIN_BUFFER)).collect(),
                links: Vec::new(),
            }),
            paused: AtomicBool::new(false),
            dead: AtomicBool::new(false),
        });
        inboxes.insert(endpoint.to_owned(), inbox.clone());
        Ok(LoopbackRx {
            hub: self.hub.clone(),
            endpoint: endpoint.to_owned(),
            inbox,
        })
    }

    fn connect(&self, endpoint: &str, _timeout: Duration) -> Result<LoopbackTx, LinkError> {
        let inbox = self.inbox(endpoint).ok_or(LinkError::PeerLost)?;
        let state = Arc::new(LinkState {
            id: self.hub.next_id.fetch_add(1, Ordering::Relaxed),
            lost: AtomicBool::new(false),
        });
        inbox.ring.lock().links.push(Arc::downgrade(&state));
        Ok(LoopbackTx {
            capacity: self.hub.capacity,
            max_frame: self.hub.max_frame,
            inbox,
            state,
        })
    }

    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        let token = self.hub.next_id.fetch_add(1, Ordering::Relaxed);
        self.hub
            .records
            .lock()
            .insert(name.to_owned(), (token, record.to_vec()));
        Ok(Announcement::new(Withdraw {
            hub: Arc::downgrade(&self.hub),
            name: name.to_owned(),
            token,
        }))
    }

    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        Ok(self.hub.records.lock().get(name).map(|(_, r)| r.clone()))
    }

    fn liveness_timeout(&self) -> Duration {
        // A severed or killed link is reported at once.
        Duration::ZERO
    }
}

/// Removes an announced record, unless a later announcement replaced it.
struct Withdraw {
    hub: Weak<Hub>,
    name: String,
    token: u64,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            let mut records = hub.records.lock();
            if records
                .get(&self.name)
                .is_some_and(|(t, _)| *t == self.token)
            {
                records.remove(&self.name);
            }
        }
    }
}

/// A connection to a loopback endpoint.
#[derive(Debug)]
pub struct LoopbackTx {
    capacity: usize,
    max_frame: usize,
    inbox: Arc<Inbox>,
    state: Arc<LinkState>,
}

impl LoopbackTx {
    fn check(&self, len: usize) -> Result<(), LinkError> {
        if self.state.lost.load(Ordering::Acquire) || self.inbox.dead.load(Ordering::Acquire) {
            return Err(LinkError::PeerLost);
        }
        if len > self.max_frame {
            return Err(LinkError::TooLarge {
                len,
                max: self.max_frame,
            });
        }
        Ok(())
    }

    fn push(&self, ring: &mut Ring, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        // A new buffer has room for any small frame, so that reusing it
        // for a slightly longer one (a varint that grew) never reallocates.
        let mut buf = ring
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(len.max(MIN_BUFFER)));
        buf.clear();
        buf.resize(len, 0);
        fill(&mut buf);
        ring.frames.push_back((self.state.id, buf));
    }
}

impl LinkTx for LoopbackTx {
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        self.check(len)?;
        let mut ring = self.inbox.ring.lock();
        if ring.frames.len() >= self.capacity {
            return Err(LinkError::Full);
        }
        self.push(&mut ring, len, fill);
        Ok(())
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame
    }

    fn peer(&self) -> PeerState {
        if self.state.lost.load(Ordering::Acquire) || self.inbox.dead.load(Ordering::Acquire) {
            PeerState::Lost
        } else {
            PeerState::Alive
        }
    }

    fn can_drop_oldest(&self) -> bool {
        true
    }

    fn send_frame_dropping_oldest(
        &mut self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> Result<usize, LinkError> {
        self.check(len)?;
        let mut ring = self.inbox.ring.lock();
        let mut dropped = 0;
        if ring.frames.len() >= self.capacity {
            let me = self.state.id;
            let Some(oldest) = ring.frames.iter().position(|(from, _)| *from == me) else {
                return Err(LinkError::Full);
            };
            if let Some((_, buf)) = ring.frames.remove(oldest) {
                ring.spare.push(buf);
            }
            dropped = 1;
        }
        self.push(&mut ring, len, fill);
        Ok(dropped)
    }
}

/// A loopback endpoint's inbox.
#[derive(Debug)]
pub struct LoopbackRx {
    hub: Arc<Hub>,
    endpoint: String,
    inbox: Arc<Inbox>,
}

impl LinkRx for LoopbackRx {
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        if self.inbox.dead.load(Ordering::Acquire) {
            return Err(LinkError::PeerLost);
        }
        if self.inbox.paused.load(Ordering::Acquire) {
            return Ok(0);
        }
        let mut n = 0;
        while n < limit {
            let Some((_, buf)) = self.inbox.ring.lock().frames.pop_front() else {
                break;
            };
            on_frame(&buf);
            self.inbox.ring.lock().spare.push(buf);
            n += 1;
        }
        Ok(n)
    }
}

impl Drop for LoopbackRx {
    /// The receiver's process is gone: links to it are lost.
    fn drop(&mut self) {
        self.inbox.dead.store(true, Ordering::Release);
        let mut inboxes = self.hub.inboxes.lock();
        if inboxes
            .get(&self.endpoint)
            .is_some_and(|i| Arc::ptr_eq(i, &self.inbox))
        {
            inboxes.remove(&self.endpoint);
        }
    }
}
