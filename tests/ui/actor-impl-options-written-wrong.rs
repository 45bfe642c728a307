// Rule: `msg` on the impl block takes an identifier, once, and `remote`
// no value; each mistake is one error where it is, and the handlers are
// still collected (a `msg` given twice keeps its first name), so the
// spawn, the send and a use of the name raise no further errors.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor(msg = "PongerMessages")]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[actor]
pub struct Twice;

#[actor(msg = TwiceA, msg = TwiceB)]
impl Twice {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[actor]
pub struct Valued;

#[actor(remote = true)]
impl Valued {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {
    let _: Option<TwiceA> = None;
    let system = System::new();
    let ponger = system.spawn(Ponger).start();
    let _ = ponger.fast_send(Ping);
    let twice = system.spawn(Twice).start();
    let _ = twice.fast_send(Ping);
}
