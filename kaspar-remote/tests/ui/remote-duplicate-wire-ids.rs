// Rule: two messages of one remote actor cannot share a wire id (they
// could not be told apart on the wire); the error names both, at the
// later handler.
use kaspar::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 5)]
pub struct Order;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 5)]
pub struct Cancel;

#[actor]
pub struct Desk;

#[actor(remote)]
impl Desk {
    #[handler(Order)]
    fn on_order(&mut self, _o: Order, _ctx: &mut Ctx<Self>) {}

    #[handler(Cancel)]
    fn on_cancel(&mut self, _c: Cancel, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
