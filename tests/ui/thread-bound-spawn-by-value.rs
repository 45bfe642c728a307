// Rule: a `#[actor(thread_bound)]` state need not be `Send`, because it is
// built on the actor's own thread and never leaves it. Handing one over by
// value with `spawn` would move it between threads: that must not compile.
// `System::spawn_with(|| ..)` builds it where it lives.
use std::rc::Rc;

use kaspar::prelude::*;

pub struct Ping;

#[actor(thread_bound)]
pub struct Book {
    shared: Rc<u64>,
}

#[actor]
impl Book {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> u64 {
        *self.shared
    }
}

fn main() {
    let system = System::new();
    // Compiles: built on the actor's thread.
    let _fine = system.spawn_with(|| Book { shared: Rc::new(1) }).start();
    // Does not: built here, then moved.
    let _moved = system.spawn(Book { shared: Rc::new(1) }).start();
}
