// Rule: a `#[actor(reentrant)]` actor's handlers take `&self` and keep
// their mutable state in `Cell`/`RefCell`/atomics; that compiles, and so do
// `&self` hooks.
use std::cell::Cell;

use kaspar::prelude::*;

pub struct Tick;

#[actor(reentrant, policy = permissive)]
pub struct Ticker {
    ticks: Cell<u64>,
}

#[actor]
impl Ticker {
    #[started]
    fn on_start(&self, _ctx: &mut Ctx<Self>) {
        self.ticks.set(0);
    }

    #[handler(Tick)]
    fn on_tick(&self, _msg: Tick, _ctx: &mut Ctx<Self>) -> u64 {
        self.ticks.set(self.ticks.get() + 1);
        self.ticks.get()
    }
}

fn main() {
    let system = System::new();
    let ticker = system
        .spawn(Ticker {
            ticks: Cell::new(0),
        })
        .start();
    ticker.send(Tick).unwrap();
    let n = ticker.ask(Tick).unwrap().wait().unwrap();
    assert!(n >= 1);
    system.shutdown();
}
