// Rule: a `#[cfg]` on one member of a `#[group]` is refused at the
// attribute: the members' states are passed as one tuple at spawn, whose
// elements cannot be configured out one by one, and without the rule the
// build fails later in generated code that names the missing field.
use kaspar::prelude::*;

pub struct Ping;

#[actor]
pub struct Quoter;

#[actor]
impl Quoter {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) {}
}

#[group]
pub struct Desk {
    pub quoter: Addr<Quoter>,
    #[cfg(any())]
    pub hedger: Addr<Quoter>,
}

fn main() {}
