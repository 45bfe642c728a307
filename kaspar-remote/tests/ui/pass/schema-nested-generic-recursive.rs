// Nested, generic and self-referential types derive `Schema`, and a
// message holding them is `Wire`; a hand-written `Schema` for a type with
// its own encoding.
use kaspar_remote::{Schema, Wire};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Schema)]
pub struct Level {
    pub px: i64,
    pub qty: u64,
}

#[derive(Serialize, Deserialize, Schema)]
pub struct Tagged<T> {
    pub tag: u8,
    pub value: T,
}

#[derive(Serialize, Deserialize, Schema)]
pub enum Tree {
    Leaf(Level),
    Node(Box<Tree>, Box<Tree>),
}

pub struct Raw([u8; 4]);

impl Schema for Raw {
    const HASH: u64 = <[u8; 4] as Schema>::HASH;
}

#[derive(Serialize, Deserialize, Wire)]
#[wire(id = 1)]
pub struct Book {
    pub levels: Vec<Tagged<Level>>,
    pub tree: Option<Tree>,
    pub by_venue: std::collections::BTreeMap<String, (u32, Level)>,
}

#[derive(Serialize, Deserialize, Wire)]
#[wire(id = 2)]
pub struct Generic<T> {
    pub inner: Tagged<T>,
}

fn main() {
    assert_ne!(<Tagged<Level>>::HASH, <Tagged<u64>>::HASH);
    assert_eq!(<Generic<u8> as Wire>::WIRE_ID, 2);
    let _ = (Book::HASH, Raw::HASH, <Generic<Level>>::HASH);
}
