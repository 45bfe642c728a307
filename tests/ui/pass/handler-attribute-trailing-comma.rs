// Rule: `#[handler(Msg,)]`, with a trailing comma as rustfmt may leave it,
// is the same as `#[handler(Msg)]`.
use kaspar::prelude::*;

pub struct Ping(pub u32);

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping,)]
    fn on_ping(&mut self, msg: Ping, _ctx: &mut Ctx<Self>) -> u32 {
        msg.0 + 1
    }
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    assert_eq!(ponger.fast_send(Ping(1)).unwrap(), 2);
    system.shutdown();
}
