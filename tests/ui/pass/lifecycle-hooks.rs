// Rule: `#[started]` and `#[stopped]` hooks are
// `fn name(&mut self, ctx: &mut Ctx<Self>)` and may sit beside handlers in
// the `#[actor]` impl block.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Hooked {
    events: Arc<AtomicU32>,
}

#[actor]
impl Hooked {
    #[started]
    fn on_start(&mut self, _ctx: &mut Ctx<Self>) {
        self.events.fetch_add(1, Ordering::SeqCst);
    }

    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[stopped]
    fn on_stop(&mut self, _ctx: &mut Ctx<Self>) {
        self.events.fetch_add(1, Ordering::SeqCst);
    }
}

fn main() {
    let events = Arc::new(AtomicU32::new(0));
    let system = System::new();
    let hooked = system
        .spawn(Hooked {
            events: Arc::clone(&events),
        })
        .start();
    hooked.ask(Ping).unwrap().wait().unwrap();
    system.shutdown();
    assert_eq!(events.load(Ordering::SeqCst), 2);
}
