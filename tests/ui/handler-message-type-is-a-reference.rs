// Rule: the message type named in `#[handler(..)]` is the owned type; a
// reference there is refused with what to write instead (`msg: &M` is how
// a handler borrows its message), not with "declared for `&M` but its
// parameter is `&M`".
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(&Ping)]
    fn on_ping(&mut self, _msg: &Ping, _ctx: &mut Ctx<Self>) {}

    #[handler(&'static str)]
    fn on_line(&mut self, _line: &'static str, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
