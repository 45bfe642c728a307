// Rule: a handler cannot be generic: each message type is one concrete
// dispatch key, with its own handler.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping<T: Default>(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> T {
        T::default()
    }
}

fn main() {}
