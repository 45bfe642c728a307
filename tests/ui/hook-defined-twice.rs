// Rule: an actor has one `#[started]` and one `#[stopped]` hook; a second
// is refused at its attribute, unless every one of them stands under a
// `cfg` of its own (here the second has one, the first does not).
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[started]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {}

    #[cfg(not(test))]
    #[started]
    fn started_again(&mut self, _ctx: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {}

    #[stopped]
    fn stopped_again(&mut self, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
