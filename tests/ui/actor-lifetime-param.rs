// Rule: an actor cannot borrow: its state moves to the actor's thread and
// lives until the actor stops. A lifetime parameter, on the struct or on
// the impl block, is an error at the lifetime, saying what to do instead.
use kaspar::prelude::*;

pub struct Sum;

#[actor]
pub struct View<'a> {
    levels: &'a [u64],
}

#[actor]
impl<'a> View<'a> {
    #[handler(Sum)]
    fn on_sum(&mut self, _msg: Sum, _ctx: &mut Ctx<Self>) -> u64 {
        self.levels.iter().sum()
    }
}

fn main() {}
