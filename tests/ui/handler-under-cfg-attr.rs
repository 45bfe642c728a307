// Rule: `#[cfg_attr(pred, handler(..))]` cannot work (`#[actor]` reads its
// impl block before `cfg_attr` is applied), so it is refused at the
// attribute, with what to write instead, rather than leaving the method a
// plain one in some builds and a stray `#[handler]` in others.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Ponger;

#[actor]
impl Ponger {
    #[cfg_attr(all(), handler(Ping))]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}

    #[cfg_attr(any(), inline, started)]
    fn started(&mut self, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
