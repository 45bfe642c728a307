// Rule: `#[actor(..)]` on a struct accepts only the options it knows
// (`reentrant`, `policy`, `mailbox`, `name`); a misspelt one is an error,
// not silently ignored. The actor is still declared, so its impl block and
// its uses raise no further errors.
use kaspar::prelude::*;

pub struct Ping;

#[actor(reentrnt)]
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
