// Rule: `#[derive(Wire)]` needs `#[wire(id = N)]`: the id names the
// message on the wire and is never made up (a `TypeId` differs between
// builds).
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
pub struct Order {
    pub px: i64,
}

fn main() {}
