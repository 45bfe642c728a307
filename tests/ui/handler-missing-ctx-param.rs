// Rule: a handler takes the context, `&mut Ctx<Self>`, after the message;
// leaving it out is an error (the signature is fixed by the macro).
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping) {}
}

fn main() {}
