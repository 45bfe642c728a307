// Rule: a `#[actor(reentrant)]` actor may be re-entered while one of its
// handlers is running further up the stack, so its handlers take `&self`;
// a `&mut self` handler would alias a live `&mut` and is rejected.
use kaspar::prelude::*;

pub struct Ping;

#[actor(reentrant)]
pub struct Ponger {
    seen: u64,
}

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        self.seen += 1;
    }
}

fn main() {}
