// Rule: the message parameter's type must be the type named in
// `#[handler(..)]`; a handler cannot claim one message and take another.
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Pong, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
