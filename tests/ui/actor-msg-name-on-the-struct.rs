// Rule: `msg = Name` goes on the impl block, which the message enum is
// generated from; on the struct it is one error saying where it goes, and
// the actor is declared all the same.
use kaspar::prelude::*;

pub struct Ping;

#[actor(msg = PongerMessages)]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Ping);
}
