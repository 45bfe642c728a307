//! What the simulated network's tests share: the worker every test
//! exports, the nodes' settings, and the planted bug's proxy ([`proxy`]).

pub mod proxy;

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::sim::{self, Sim};
use kaspar_remote::transport::sim::{SimNet, SimPort};
use kaspar_remote::{Node, NodeConfig, Retain};
use serde::{Deserialize, Serialize};

/// The liveness timeout of every test's network.
pub const LIVENESS: Duration = Duration::from_millis(5);
/// The nodes' periodic work, as a live bridge's.
pub const TICK: Duration = Duration::from_millis(1);

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Debug)]
#[wire(id = 1)]
pub struct Work(pub u64);

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Debug)]
#[wire(id = 2)]
pub struct Note(pub u64);

/// The numbers a `Worker` handled, in order.
pub type Log = Arc<Mutex<Vec<u64>>>;

/// Logs every number it handles.
#[actor]
pub struct Worker {
    pub log: Log,
}

#[actor(remote)]
impl Worker {
    #[handler(Work)]
    fn work(&mut self, w: Work, _ctx: &mut Ctx<Self>) -> u64 {
        self.log.lock().unwrap().push(w.0);
        w.0 * 2
    }

    #[handler(Note)]
    fn note(&mut self, n: Note, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(n.0);
    }
}

pub fn config() -> NodeConfig {
    NodeConfig {
        connect_timeout: Duration::from_millis(20),
        reply_timeout: Duration::from_millis(20),
        ..NodeConfig::default()
    }
}

/// Two nodes on `net`: "server" exporting a `Worker` as "work" (its log
/// returned), and "client"; their sources added to `sim`.
pub fn two_nodes(sim: &mut Sim, net: &SimNet) -> (Node<SimPort>, Rc<Node<SimPort>>, Log) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = net.node("server", config()).unwrap();
    let worker = sim.system().spawn(Worker { log: log.clone() }).start();
    server.export("work", &worker).unwrap();
    // The client keeps what it sends until it is acknowledged, for dead
    // letters if the link is lost first.
    let retain = Retain::new(64, sim.system().dead_letters());
    let client = NodeConfig {
        retain: Some(retain),
        ..config()
    };
    let client = Rc::new(net.node("client", client).unwrap());
    for s in net.sources() {
        sim.source(s);
    }
    (server, client, log)
}

/// Waits (in virtual time) until `flag` is set.
pub async fn until(flag: &Cell<bool>) {
    while !flag.get() {
        sim::sleep(Duration::from_micros(50)).await;
    }
}
