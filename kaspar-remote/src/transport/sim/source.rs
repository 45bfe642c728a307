//! One node's chain of steps in a simulated run: the frames due to it,
//! one at a time, and its periodic work.

use std::sync::Arc;

use kaspar::sim::Source;
use kaspar::Time;

use super::net::{Due, Net};
use super::Hub;
use crate::node::sim::Driven;
use crate::wire::frame::Frame;

/// The [`Source`] of one node on a [`SimNet`](super::SimNet).
pub(super) struct NodeSource {
    hub: Arc<Hub>,
    endpoint: Arc<str>,
    name: String,
    due: Vec<Due>,
}

impl NodeSource {
    pub(super) fn new(hub: Arc<Hub>, endpoint: Arc<str>) -> Self {
        NodeSource {
            name: format!("net:{endpoint}"),
            hub,
            endpoint,
            due: Vec::new(),
        }
    }

    /// Whether the node's periodic work has something to do: its own
    /// reasons (asks waiting, hellos to answer), frames delivered since
    /// its last tick (acks owed), or a link of its that the network will
    /// find lost. A dead node has none.
    fn wants_tick(&self, net: &Net) -> (bool, Option<Arc<dyn Driven>>) {
        let Some(port) = net.ports.get(&self.endpoint) else {
            return (false, None);
        };
        if port.died.is_some() {
            return (false, None);
        }
        let own = port.dirty || net.has_doomed_link(&self.endpoint);
        (own, port.driver.clone())
    }

    /// The steps due at `now`, into `self.due`; admits what was sent
    /// since the last look first.
    fn look(&mut self, now: Time) {
        let (wants, driver) = {
            let mut net = self.hub.net.lock();
            net.admit();
            self.wants_tick(&net)
        };
        // Asked without the network's lock: the node's tables have locks
        // of their own, which its sends take before the network's.
        let wants = wants || driver.is_some_and(|d| d.wants_tick());
        self.hub
            .net
            .lock()
            .due(&self.endpoint, now, wants, &mut self.due);
    }
}

/// A frame, for the trace: its kind and sequence number.
fn describe(bytes: &[u8]) -> String {
    match Frame::parse(bytes) {
        Ok(f) => format!(
            "{:?} #{} (corr {})",
            f.header.kind, f.header.seq, f.header.correlation
        ),
        Err(_) => format!("{} bytes", bytes.len()),
    }
}

impl Source for NodeSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn ready(&mut self, now: Time) -> bool {
        self.look(now);
        !self.due.is_empty()
    }

    fn step(&mut self, now: Time) -> String {
        self.look(now);
        let n = self.due.len() as u64;
        let i = match n {
            0 => return "nothing due".into(),
            1 => 0,
            _ => (kaspar::sim::random() % n) as usize,
        };
        let mut net = self.hub.net.lock();
        match self.due[i] {
            Due::Frame(id) => {
                let Some((bytes, from, to)) = net.take(id, now) else {
                    return "a frame lost (a partition, or its receiver gone)".into();
                };
                let what = describe(&bytes);
                let Some(port) = net.ports.get_mut(&to).filter(|p| p.died.is_none()) else {
                    net.stats.discarded += 1;
                    return format!("{from} -> {to}: {what}, discarded (dead)");
                };
                port.arrived.push_back(bytes);
                port.dirty = true;
                let driver = port.driver.clone();
                net.stats.delivered += 1;
                drop(net);
                if let Some(d) = driver {
                    d.poll_one();
                }
                format!("{from} -> {to}: {what}")
            }
            Due::Tick => {
                let tick = net.tick;
                let driver = net.ports.get_mut(&self.endpoint).and_then(|p| {
                    p.next_tick = now.saturating_add(tick);
                    p.dirty = false;
                    p.driver.clone()
                });
                drop(net);
                if let Some(d) = driver {
                    d.tick(d.now());
                }
                "tick".into()
            }
        }
    }

    fn next_due(&self) -> Option<Time> {
        let (wants, driver, tick_at, frame) = {
            let net = self.hub.net.lock();
            let (wants, driver) = self.wants_tick(&net);
            let tick_at = net.ports.get(&self.endpoint).map(|p| p.next_tick);
            (wants, driver, tick_at, net.next_frame(&self.endpoint))
        };
        let wants = wants || driver.is_some_and(|d| d.wants_tick());
        let tick = tick_at.filter(|_| wants);
        match (frame, tick) {
            (Some(f), Some(t)) => Some(f.min(t)),
            (f, t) => f.or(t),
        }
    }
}
