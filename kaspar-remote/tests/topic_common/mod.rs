//! The message types and the recording actor the topic tests of every
//! transport share.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use kaspar::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 40)]
pub struct Tick {
    pub n: u64,
    pub px: i64,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 41)]
pub struct Other(pub u64);

/// Records the number of every tick it is sent.
#[actor]
pub struct Recorder {
    log: Arc<Mutex<Vec<u64>>>,
}

#[actor]
impl Recorder {
    #[handler(Tick)]
    fn on_tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
        self.log.lock().unwrap().push(t.n);
    }
}

/// A started recorder and its log.
pub fn recorder(system: &System) -> (Addr<Recorder>, Arc<Mutex<Vec<u64>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let addr = system.spawn(Recorder { log: log.clone() }).start();
    (addr, log)
}

/// The numbers logged so far.
pub fn logged(log: &Mutex<Vec<u64>>) -> Vec<u64> {
    log.lock().unwrap().clone()
}
