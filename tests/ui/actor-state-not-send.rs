// Rule: an actor's state moves between threads (to the actor's thread when
// spawned, to a `fast_send` caller's), so every field of it must be `Send`
// unless the actor is `#[actor(thread_bound)]`. A field that is not (here
// an `Rc`) is reported at the struct's `#[actor]`, naming the field's type
// and the way out; spawning it by value is refused too (it would move the
// state here); sending to it adds nothing.
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
