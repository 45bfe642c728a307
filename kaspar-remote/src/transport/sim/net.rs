//! The simulated network's state, behind one lock: endpoints, links with
//! their frames in flight, cuts, and the fate of each frame sent (drawn
//! from the run's seed when the frame is admitted).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use kaspar::Time;

use super::{NetFaults, NetStats};
use crate::node::sim::Driven;

/// Everything on the network.
pub(super) struct Net {
    pub(super) faults: NetFaults,
    pub(super) liveness: Duration,
    pub(super) tick: Duration,
    pub(super) max_frame: usize,
    /// Links and announcement tokens.
    pub(super) next_id: u64,
    /// Frames in admission order: ties between equal due times break by
    /// it.
    next_seq: u64,
    /// Frames sent and not admitted yet: (link, sent at, bytes).
    pub(super) sent: Vec<(u64, Time, Vec<u8>)>,
    /// By id: iteration in id order, which a seed replays.
    pub(super) links: BTreeMap<u64, Link>,
    pub(super) ports: BTreeMap<Arc<str>, Port>,
    /// When each incarnation of an endpoint died (a node listening on
    /// the endpoint of a dead one is its next incarnation).
    deaths: BTreeMap<(Arc<str>, u64), Time>,
    cuts: Vec<Cut>,
    pub(super) stats: NetStats,
}

/// A connection from one endpoint to another, and its frames in flight.
pub(super) struct Link {
    pub(super) from: Arc<str>,
    pub(super) to: Arc<str>,
    /// The incarnations of its ends when it was opened.
    from_gen: u64,
    to_gen: u64,
    /// Frames in flight, unordered; the next is the one first due.
    queue: Vec<InFlight>,
    /// The due time of the last frame queued in order: a frame keeps its
    /// place behind it unless it is reordered.
    last_due: Time,
    /// Its sender found it lost (`peer()` said so): it stays lost.
    pub(super) lost: bool,
    /// Its sender dropped it; its frames in flight still arrive.
    pub(super) closed: bool,
}

impl Link {
    /// Nothing in flight on it.
    pub(super) fn is_idle(&self) -> bool {
        self.queue.is_empty()
    }
}

struct InFlight {
    due: Time,
    seq: u64,
    bytes: Vec<u8>,
}

/// An endpoint: its node's inbox and its periodic work.
pub(super) struct Port {
    /// Which node on this endpoint it is, from 0.
    pub(super) gen: u64,
    /// Killed (or its inbox dropped) at this time.
    pub(super) died: Option<Time>,
    /// Frames delivered, for the node's next poll.
    pub(super) arrived: VecDeque<Vec<u8>>,
    pub(super) driver: Option<Arc<dyn Driven>>,
    pub(super) next_tick: Time,
    /// Frames were delivered since its last tick (acks may be owed).
    pub(super) dirty: bool,
}

/// No frame crosses between `a` and `b` (either way) from `from` until
/// `until`.
struct Cut {
    a: Arc<str>,
    b: Arc<str>,
    from: Time,
    until: Option<Time>,
}

/// One step a node's source may take.
pub(super) enum Due {
    /// The next frame of this link.
    Frame(u64),
    /// The node's periodic work.
    Tick,
}

/// A number from the run's seed below `n` (0 for `n` 0).
fn below(n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        kaspar::sim::random() % n
    }
}

fn chance(ppm: u32) -> bool {
    ppm > 0 && below(1_000_000) < u64::from(ppm)
}

/// Uniform in `lo..=hi`.
fn between(lo: Duration, hi: Duration) -> Duration {
    let span = hi
        .saturating_sub(lo)
        .as_nanos()
        .min(u128::from(u64::MAX - 1)) as u64;
    lo + Duration::from_nanos(below(span + 1))
}

impl Net {
    pub(super) fn new(faults: NetFaults) -> Self {
        Net {
            faults,
            liveness: Duration::from_millis(20),
            tick: crate::node::sim::TICK,
            max_frame: 64 << 10,
            next_id: 1,
            next_seq: 0,
            sent: Vec::new(),
            links: BTreeMap::new(),
            ports: BTreeMap::new(),
            deaths: BTreeMap::new(),
            cuts: Vec::new(),
            stats: NetStats::default(),
        }
    }

    /// Opens a link from incarnation `from_gen` of `from` to the node on
    /// `to` now.
    pub(super) fn link(&mut self, from: Arc<str>, from_gen: u64, to: Arc<str>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let to_gen = self.ports.get(&to).map_or(0, |p| p.gen);
        self.links.insert(
            id,
            Link {
                from,
                to,
                from_gen,
                to_gen,
                queue: Vec::new(),
                last_due: Time::from_nanos(0),
                lost: false,
                closed: false,
            },
        );
        id
    }

    pub(super) fn is_dead(&self, endpoint: &str) -> bool {
        self.ports.get(endpoint).is_none_or(|p| p.died.is_some())
    }

    /// When the node at `endpoint`'s incarnation `gen` died, if it did.
    pub(super) fn death(&self, endpoint: &Arc<str>, gen: u64) -> Option<Time> {
        self.deaths.get(&(endpoint.clone(), gen)).copied()
    }

    /// Whether link `l`'s sender is dead (what it sends is discarded).
    pub(super) fn sender_dead(&self, l: &Link) -> bool {
        self.death(&l.from, l.from_gen).is_some()
    }

    /// Whether link `l` still reaches the node it was opened to (not one
    /// listening on the endpoint since).
    pub(super) fn reaches(&self, l: &Link) -> bool {
        self.ports
            .get(&l.to)
            .is_some_and(|p| p.gen == l.to_gen && p.died.is_none())
    }

    fn is_cut(&self, a: &str, b: &str, at: Time) -> bool {
        self.cuts.iter().any(|c| {
            ((&*c.a == a && &*c.b == b) || (&*c.a == b && &*c.b == a))
                && c.from <= at
                && c.until.is_none_or(|u| at < u)
        })
    }

    /// When link `id` is lost for its sender if nothing changes: a
    /// liveness timeout after its receiver died, or after a cut that
    /// lasts that long began.
    pub(super) fn doomed_at(&self, id: u64) -> Option<Time> {
        let link = self.links.get(&id)?;
        let died = self
            .death(&link.to, link.to_gen)
            .map(|t| t.saturating_add(self.liveness));
        let cut = self
            .cuts
            .iter()
            .filter(|c| {
                (c.a == link.to && c.b == link.from) || (c.a == link.from && c.b == link.to)
            })
            .map(|c| (c.from.saturating_add(self.liveness), c.until))
            .filter(|&(lost, until)| until.is_none_or(|u| u > lost))
            .map(|(lost, _)| lost);
        died.into_iter().chain(cut).min()
    }

    /// Whether the live node on `endpoint` has a link, not yet found
    /// lost, that will be.
    pub(super) fn has_doomed_link(&self, endpoint: &str) -> bool {
        let Some(port) = self.ports.get(endpoint).filter(|p| p.died.is_none()) else {
            return false;
        };
        self.links.iter().any(|(&id, l)| {
            &*l.from == endpoint
                && l.from_gen == port.gen
                && !l.lost
                && !l.closed
                && self.doomed_at(id).is_some()
        })
    }

    pub(super) fn cut(&mut self, a: &str, b: &str, from: Time, until: Option<Time>) {
        self.cuts.push(Cut {
            a: a.into(),
            b: b.into(),
            from,
            until,
        });
    }

    pub(super) fn heal(&mut self, a: &str, b: &str, now: Time) {
        for c in &mut self.cuts {
            let between = (&*c.a == a && &*c.b == b) || (&*c.a == b && &*c.b == a);
            if between && c.until.is_none_or(|u| u > now) {
                c.until = Some(now.max(c.from));
            }
        }
    }

    /// Kills `endpoint`'s node (its incarnation `gen`, if given): what is
    /// in flight to it is lost.
    pub(super) fn kill(&mut self, endpoint: &str, gen: Option<u64>, now: Time) -> bool {
        let Some(port) = self
            .ports
            .get_mut(endpoint)
            .filter(|p| gen.is_none_or(|g| g == p.gen))
        else {
            return false;
        };
        if port.died.is_none() {
            port.died = Some(now);
            self.deaths.insert((endpoint.into(), port.gen), now);
        }
        port.arrived.clear();
        let gen = port.gen;
        for l in self
            .links
            .values_mut()
            .filter(|l| &*l.to == endpoint && l.to_gen == gen)
        {
            self.stats.discarded += l.queue.len() as u64;
            l.queue.clear();
        }
        true
    }

    /// Decides the fate of every frame sent since the last call: lost,
    /// doubled, late, overtaking; each copy kept gets its due time.
    pub(super) fn admit(&mut self) {
        for (id, at, mut bytes) in std::mem::take(&mut self.sent) {
            let Some(link) = self.links.get(&id) else {
                continue;
            };
            let (from, to) = (link.from.clone(), link.to.clone());
            if self.sender_dead(link) || !self.reaches(link) {
                self.stats.discarded += 1;
                continue;
            }
            if self.is_cut(&from, &to, at) {
                self.stats.cut += 1;
                continue;
            }
            if chance(self.faults.drop_ppm) {
                self.stats.dropped += 1;
                continue;
            }
            let copies = if chance(self.faults.duplicate_ppm) {
                self.stats.duplicated += 1;
                2
            } else {
                1
            };
            for copy in 0..copies {
                let mut due =
                    at.saturating_add(between(self.faults.latency.0, self.faults.latency.1));
                if chance(self.faults.delay_ppm) {
                    self.stats.delayed += 1;
                    due = due.saturating_add(between(Duration::ZERO, self.faults.delay));
                }
                let reordered = chance(self.faults.reorder_ppm);
                let seq = self.next_seq;
                self.next_seq += 1;
                let Some(link) = self.links.get_mut(&id) else {
                    break;
                };
                if reordered {
                    self.stats.reordered += 1;
                } else {
                    due = due.max(link.last_due);
                    link.last_due = due;
                }
                let bytes = if copy + 1 == copies {
                    std::mem::take(&mut bytes)
                } else {
                    bytes.clone()
                };
                link.queue.push(InFlight { due, seq, bytes });
            }
        }
    }

    /// The steps `endpoint`'s source may take at `now` (ticks only if
    /// `wants_tick`), in an order a seed replays.
    pub(super) fn due(&self, endpoint: &str, now: Time, wants_tick: bool, out: &mut Vec<Due>) {
        out.clear();
        for (&id, l) in &self.links {
            if &*l.to == endpoint && l.queue.iter().any(|f| f.due <= now) {
                out.push(Due::Frame(id));
            }
        }
        let Some(port) = self.ports.get(endpoint) else {
            return;
        };
        if wants_tick && port.died.is_none() && port.next_tick <= now {
            out.push(Due::Tick);
        }
    }

    /// The earliest time a frame to `endpoint` is due.
    pub(super) fn next_frame(&self, endpoint: &str) -> Option<Time> {
        self.links
            .values()
            .filter(|l| &*l.to == endpoint)
            .flat_map(|l| l.queue.iter().map(|f| f.due))
            .min()
    }

    /// Takes link `id`'s next frame; `Some` with its bytes and the link's
    /// ends if it is to be delivered at `now` (not cut off, and its
    /// receiver the node the link was opened to).
    pub(super) fn take(&mut self, id: u64, now: Time) -> Option<(Vec<u8>, Arc<str>, Arc<str>)> {
        let reaches = self.reaches(self.links.get(&id)?);
        let link = self.links.get_mut(&id)?;
        let next = (0..link.queue.len()).min_by_key(|&i| (link.queue[i].due, link.queue[i].seq))?;
        let frame = link.queue.swap_remove(next);
        let (from, to) = (link.from.clone(), link.to.clone());
        if link.closed && link.queue.is_empty() {
            self.links.remove(&id);
        }
        if !reaches {
            self.stats.discarded += 1;
            return None;
        }
        if self.is_cut(&from, &to, now) {
            self.stats.cut += 1;
            return None;
        }
        Some((frame.bytes, from, to))
    }
}
