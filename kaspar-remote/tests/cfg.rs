//! `#[cfg]` on the handlers of an `#[actor(remote)]` impl block: the
//! remote table holds the handlers configured in and no others, two
//! handlers configured in alternately may share a wire id, and the
//! configured-in one answers over the loopback. Before, a configured-out
//! handler stayed in the table, naming a message type that was configured
//! out with it, and the build failed.
//!
//! A test build has `cfg(test)` and lacks `cfg(not(test))`.

use kaspar::prelude::*;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Node, RemoteActor, Wire};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Wire, Clone, Debug, PartialEq)]
#[wire(id = 1)]
pub struct Price(pub i64);

/// The build that would price in ticks: never configured in here.
#[cfg(not(test))]
#[derive(Serialize, Deserialize, Wire, Clone, Debug, PartialEq)]
#[wire(id = 1)]
pub struct Ticks(pub i64);

#[derive(Serialize, Deserialize, Wire, Clone, Debug, PartialEq)]
#[wire(id = 2)]
pub struct Halve(pub i64);

#[actor(name = "Pricer")]
pub struct Pricer;

#[actor(remote)]
impl Pricer {
    #[cfg(test)]
    #[handler(Price)]
    fn price(&mut self, p: Price, _ctx: &mut Ctx<Self>) -> i64 {
        p.0
    }

    #[cfg(not(test))]
    #[handler(Ticks)]
    fn ticks(&mut self, t: Ticks, _ctx: &mut Ctx<Self>) -> i64 {
        t.0 * 100
    }

    #[cfg(test)]
    #[handler(Halve)]
    fn halve(&mut self, h: Halve, _ctx: &mut Ctx<Self>) -> i64 {
        h.0 / 2
    }

    #[cfg(not(test))]
    #[handler(Halve)]
    fn halve_out(&mut self, h: Halve, _ctx: &mut Ctx<Self>) -> i64 {
        h.0
    }
}

#[test]
fn the_remote_table_holds_the_handlers_configured_in() {
    let table: Vec<(u32, &str)> = Pricer::SCHEMA
        .iter()
        .map(|m| (m.wire_id, m.message))
        .collect();
    assert_eq!(table, [(1, "Price"), (2, "Halve")]);

    let net = Loopback::new(64);
    let system = System::new();
    let server = Node::new(net.clone(), "server").unwrap();
    server
        .export("pricer", &system.spawn(Pricer).start())
        .unwrap();
    let client = Node::new(net, "client").unwrap();
    let pricer = client.lookup::<Pricer>("pricer").unwrap();
    assert_eq!(pricer.ask(Price(101)).unwrap().wait(), Ok(101));
    assert_eq!(pricer.ask(Halve(10)).unwrap().wait(), Ok(5));
    drop((client, server));
    system.shutdown();
}
