//! A node's place on the simulated network: its [`Transport`], the links
//! it opens and its inbox.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::net::{Net, Port};
use super::Hub;
use crate::link::{Announcement, LinkError, LinkRx, LinkTx, PeerState, Transport};

/// One node's place on a [`SimNet`](super::SimNet): the [`Transport`] of a node made by
/// [`SimNet::node`](super::SimNet::node), whose links start at its endpoint.
#[derive(Clone)]
pub struct SimPort {
    pub(super) hub: Arc<Hub>,
    pub(super) me: Arc<str>,
    /// Which node on its endpoint it is, once it listens.
    pub(super) gen: OnceLock<u64>,
}

impl std::fmt::Debug for SimPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimPort({:?})", self.me)
    }
}

impl Transport for SimPort {
    type Tx = SimTx;
    type Rx = SimRx;

    fn listen(&self, endpoint: &str) -> Result<SimRx, LinkError> {
        let mut net = self.hub.net.lock();
        if net.ports.get(endpoint).is_some_and(|p| p.died.is_none()) {
            return Err(LinkError::Transport(format!(
                "endpoint {endpoint:?} is already listened on"
            )));
        }
        // A node where a dead one was is the endpoint's next incarnation:
        // links to the dead one stay dead.
        let gen = net.ports.get(endpoint).map_or(0, |p| p.gen + 1);
        if *endpoint == *self.me {
            let _ = self.gen.set(gen);
        }
        let endpoint: Arc<str> = endpoint.into();
        net.ports.insert(
            endpoint.clone(),
            Port {
                gen,
                died: None,
                arrived: Default::default(),
                driver: None,
                next_tick: self.hub.clock.now(),
                dirty: false,
            },
        );
        Ok(SimRx {
            hub: self.hub.clone(),
            endpoint,
            gen,
        })
    }

    fn connect(&self, endpoint: &str, _timeout: Duration) -> Result<SimTx, LinkError> {
        let mut net = self.hub.net.lock();
        let gen = self.gen.get().copied().unwrap_or(0);
        if net.is_dead(endpoint) || net.death(&self.me, gen).is_some() {
            return Err(LinkError::PeerLost);
        }
        let id = net.link(self.me.clone(), gen, endpoint.into());
        Ok(SimTx {
            hub: self.hub.clone(),
            id,
        })
    }

    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        let token = {
            let mut net = self.hub.net.lock();
            net.next_id += 1;
            net.next_id
        };
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
        self.hub.net.lock().liveness
    }
}

/// Removes an announced record, unless a later announcement replaced it.
struct Withdraw {
    hub: std::sync::Weak<Hub>,
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

/// A link on a [`SimNet`](super::SimNet).
pub struct SimTx {
    hub: Arc<Hub>,
    id: u64,
}

impl std::fmt::Debug for SimTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimTx({})", self.id)
    }
}

impl SimTx {
    /// Whether the link is lost for its sender now (and marks it so).
    fn found_lost(&self, net: &mut Net) -> bool {
        let now = self.hub.clock.now();
        let doomed = net.doomed_at(self.id).is_some_and(|t| t <= now);
        match net.links.get_mut(&self.id) {
            Some(l) if l.lost => true,
            Some(l) if doomed => {
                l.lost = true;
                true
            }
            Some(_) => false,
            None => true,
        }
    }
}

impl LinkTx for SimTx {
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        let mut net = self.hub.net.lock();
        if self.found_lost(&mut net) {
            return Err(LinkError::PeerLost);
        }
        if len > net.max_frame {
            return Err(LinkError::TooLarge {
                len,
                max: net.max_frame,
            });
        }
        let mut buf = vec![0; len];
        fill(&mut buf);
        let from_dead = net.links.get(&self.id).is_some_and(|l| net.sender_dead(l));
        if from_dead {
            // A dead process sends nothing: the frame never leaves it.
            net.stats.discarded += 1;
        } else {
            net.stats.sent += 1;
            net.sent.push((self.id, self.hub.clock.now(), buf));
        }
        Ok(())
    }

    fn max_frame_len(&self) -> usize {
        self.hub.net.lock().max_frame
    }

    fn peer(&self) -> PeerState {
        if self.found_lost(&mut self.hub.net.lock()) {
            PeerState::Lost
        } else {
            PeerState::Alive
        }
    }
}

impl Drop for SimTx {
    /// Frames in flight on it still arrive; then it is gone.
    fn drop(&mut self) {
        let mut net = self.hub.net.lock();
        let pending = net.sent.iter().any(|(id, _, _)| *id == self.id);
        if let Some(l) = net.links.get_mut(&self.id) {
            l.closed = true;
        }
        if !pending && net.links.get(&self.id).is_some_and(|l| l.is_idle()) {
            net.links.remove(&self.id);
        }
    }
}

/// A node's inbox on a [`SimNet`](super::SimNet): the frames its source delivered.
pub struct SimRx {
    hub: Arc<Hub>,
    endpoint: Arc<str>,
    gen: u64,
}

impl std::fmt::Debug for SimRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimRx({:?})", self.endpoint)
    }
}

impl LinkRx for SimRx {
    fn poll(&mut self, limit: usize, on_frame: &mut dyn FnMut(&[u8])) -> Result<usize, LinkError> {
        let mut n = 0;
        while n < limit {
            let frame = {
                let mut net = self.hub.net.lock();
                match net.ports.get_mut(&self.endpoint) {
                    Some(p) if p.died.is_none() && p.gen == self.gen => p.arrived.pop_front(),
                    _ => return Err(LinkError::PeerLost),
                }
            };
            let Some(frame) = frame else {
                break;
            };
            on_frame(&frame);
            n += 1;
        }
        Ok(n)
    }
}

impl Drop for SimRx {
    /// The node is gone: as if it died now (unless it had, and another
    /// listens there now).
    fn drop(&mut self) {
        let now = self.hub.clock.now();
        self.hub
            .net
            .lock()
            .kill(&self.endpoint, Some(self.gen), now);
    }
}
