// Rule (receiver transparency): the delivery mode lives in private
// framework state that no public path names. The lock's wait strategy and
// the guard of an entered actor are in private modules, so user code cannot
// name (let alone inspect) them.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {
        let _wait: Option<kaspar::guard::lock::Wait> = None;
        let _entered: Option<kaspar::actor::cell::Entered<'static, Ponger>> = None;
    }
}

fn main() {}
