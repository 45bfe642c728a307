// Rule: an actor's state moves to the actor's thread when it is spawned, so
// every field of it must be `Send`. A field that is not (here an `Rc`) is
// one error, at the actor's impl block, naming the field's type and the
// struct; spawning the actor and sending to it add none.
use std::rc::Rc;

use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger {
    seen: u64,
    shared: Rc<u64>,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        self.seen += *self.shared;
    }
}

fn main() {
    let system = System::new();
    let ponger = system
        .spawn(Ponger {
            seen: 0,
            shared: Rc::new(1),
        })
        .start();
    let _ = ponger.send(Ping);
}
