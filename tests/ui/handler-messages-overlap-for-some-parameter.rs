// Rule: each message type has at most one handler in every instance of a
// generic actor. Handlers for `M` and for `Stop` would both handle `Stop`
// in `Relay<Stop>`, which Rust's coherence rules refuse for every
// instance: the error points at the two handlers' message types.
use kaspar::prelude::*;

pub struct Stop;

#[actor]
pub struct Relay<M: Send + 'static> {
    last: Option<M>,
}

#[actor]
impl<M: Send + 'static> Relay<M> {
    #[handler(M)]
    fn on_msg(&mut self, msg: M, _ctx: &mut Ctx<Self>) {
        self.last = Some(msg);
    }

    #[handler(Stop)]
    fn on_stop(&mut self, _msg: Stop, ctx: &mut Ctx<Self>) {
        ctx.stop();
    }
}

fn main() {}
