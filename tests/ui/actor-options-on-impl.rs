// Rule: options belong on the actor's struct; on the impl block they are
// one error at the options, and the handlers are still collected, so
// `Ctx<Self>` and the spawn raise no further errors.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor(reentrant)]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Ping);
}
