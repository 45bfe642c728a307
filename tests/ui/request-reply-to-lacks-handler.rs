// Rule: `request(msg, &reply_to)` delivers the handler's reply to
// `reply_to`'s mailbox as an ordinary message, so it compiles only if the
// `reply_to` actor has a `#[handler]` for the reply type.
use kaspar::prelude::*;

pub struct Ping;
pub struct Pong;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> Pong {
        Pong
    }
}

// Handles `Ping`, not `Pong`: it cannot take `Ponger`'s reply.
#[actor]
pub struct Pinger;

#[actor]
impl Pinger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let pinger = system.spawn(Pinger).start();
    let _ = ponger.request(Ping, &pinger);
}
