// Rule: a handler takes its message by value or as `&Msg`; `&mut Msg` is
// rejected with a message, rather than failing inside generated code.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: &mut Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
