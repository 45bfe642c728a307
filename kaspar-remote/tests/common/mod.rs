//! Actors and messages the remote tests share.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::Terminated;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 1)]
pub struct Seq(pub u64);

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 2)]
pub struct Report;

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 3)]
pub struct Boom;

#[derive(Serialize, Deserialize, kaspar_remote::Schema, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Messages seen.
    pub seen: u64,
    /// Messages whose number was not the one after the previous.
    pub out_of_order: u64,
    /// The last number seen.
    pub last: Option<u64>,
}

/// Checks that the numbers it is sent arrive in order, each once.
#[actor]
pub struct Counter {
    pub tally: Tally,
    pub log: Arc<Mutex<Vec<u64>>>,
}

impl Counter {
    pub fn new() -> (Counter, Arc<Mutex<Vec<u64>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let c = Counter {
            tally: Tally {
                seen: 0,
                out_of_order: 0,
                last: None,
            },
            log: log.clone(),
        };
        (c, log)
    }
}

#[actor(remote)]
impl Counter {
    #[handler(Seq)]
    fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        let t = &mut self.tally;
        if t.last.map_or(0, |l| l + 1) != s.0 {
            t.out_of_order += 1;
        }
        t.last = Some(s.0);
        t.seen += 1;
        self.log.lock().unwrap().push(s.0);
        s.0 * 2
    }

    #[handler(Report)]
    fn on_report(&mut self, _r: Report, _ctx: &mut Ctx<Self>) -> Tally {
        self.tally
    }

    #[handler(Boom)]
    fn on_boom(&mut self, _b: Boom, _ctx: &mut Ctx<Self>) -> u64 {
        panic!("boom (expected by the test)")
    }
}

/// Another actor type, for wrong-type lookups.
#[actor]
pub struct Other;

#[actor(remote)]
impl Other {
    #[handler(Seq)]
    fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        s.0
    }
}

/// Named like `Counter`, with one handler less: another build's `Counter`.
#[actor(name = "Counter")]
pub struct CounterV2;

#[actor(remote)]
impl CounterV2 {
    #[handler(Seq)]
    fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        s.0
    }
}

/// Keeps what it is told: termination notices and replies.
#[actor]
pub struct Inbox {
    pub terminated: Arc<Mutex<Vec<Terminated>>>,
    pub replies: Arc<Mutex<Vec<u64>>>,
}

pub struct Taken;

#[actor]
impl Inbox {
    #[handler(Terminated)]
    fn on_terminated(&mut self, t: Terminated, _ctx: &mut Ctx<Self>) {
        self.terminated.lock().unwrap().push(t);
    }

    #[handler(u64)]
    fn on_reply(&mut self, r: u64, _ctx: &mut Ctx<Self>) {
        self.replies.lock().unwrap().push(r);
    }

    #[handler(Taken)]
    fn on_taken(&mut self, _t: Taken, _ctx: &mut Ctx<Self>) -> usize {
        self.terminated.lock().unwrap().len() + self.replies.lock().unwrap().len()
    }
}

/// Polls `done` every millisecond for at most `limit`; returns whether it
/// became true.
pub fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    done()
}
