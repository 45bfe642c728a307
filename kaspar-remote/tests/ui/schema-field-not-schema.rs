// Rule: the schema hash covers every type inside a message, so each
// field's type must be `Schema`; the error points at the field's type and
// says to derive it.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct Level {
    pub px: i64,
    pub qty: u64,
}

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 1)]
pub struct Depth {
    pub venue: String,
    pub bids: Vec<Level>,
}

fn main() {}
