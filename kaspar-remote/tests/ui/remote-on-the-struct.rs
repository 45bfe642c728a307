// Rule: `remote` goes on the impl block, which lists the handlers the
// remote table is built from; on the struct it is an error that says so.
use kaspar::prelude::*;

#[actor(remote)]
pub struct Ponger;

#[actor]
impl Ponger {}

fn main() {}
