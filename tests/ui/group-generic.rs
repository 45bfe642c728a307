// Rule: a `#[group]` is concrete: its message enum and its members are
// generated for one set of actor types. A generic group is an error at its
// parameters and `where` clause; its members may still be instances of a
// generic actor, as in `Concrete` below, which compiles.
use kaspar::prelude::*;

pub trait Pricer: Send + 'static {}
pub struct Linear;
impl Pricer for Linear {}

pub struct Quote;

#[actor]
pub struct Strategy<P: Pricer> {
    pricer: P,
}

#[actor]
impl<P: Pricer> Strategy<P> {
    #[handler(Quote)]
    fn on_quote(&mut self, _msg: Quote, _ctx: &mut Ctx<Self>) {}
}

#[group]
pub struct Desk<P>
where
    P: Pricer,
{
    pub strategy: Addr<Strategy<P>>,
}

#[group]
pub struct Concrete {
    pub strategy: Addr<Strategy<Linear>>,
}

fn main() {}
