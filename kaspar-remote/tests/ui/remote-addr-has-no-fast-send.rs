// Rule: a `RemoteAddr` offers `send`, `ask` and `request` only; a handler in
// another process cannot run on this thread, so `fast_send` (and its
// family) does not compile, and the error says what to use instead:
// `send`/`ask`/`request`, or `ActorRef::fast_send_or_send`.
use kaspar::prelude::*;
use kaspar_remote::RemoteAddr;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Ping;

#[actor]
pub struct Ponger;

#[actor(remote)]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn poke(remote: &RemoteAddr<Ponger>) {
    let _ = remote.fast_send(Ping);
    let _ = remote.fast_send_void(Ping);
    let _ = remote.fast_send_spin(Ping);
    let _ = remote.fast_send_x(Ping);
    let _ = remote.fast_send_adaptive(Ping);
}

fn main() {}
