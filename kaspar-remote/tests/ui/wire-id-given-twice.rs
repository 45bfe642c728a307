// Rule: a message has exactly one wire id; a second one is an error at
// the second, not a silent choice.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
#[wire(id = 2)]
pub struct Order {
    pub px: i64,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 3, id = 4)]
pub struct Cancel;

fn main() {}
