// Rule: a hook may write its empty return out, `-> ()`, as a handler may.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger {
    started: bool,
}

#[actor]
impl Ponger {
    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) -> () {
        self.started = true;
    }

    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> bool {
        self.started
    }
}

fn main() {
    let system = System::new();
    let ponger = system.spawn(Ponger { started: false }).start();
    assert!(ponger.fast_send(Ping).unwrap());
    system.shutdown();
}
