// Rule: a wire id is a `u32` literal; a string, a path, a negative or
// too large number, or an unknown key is an error at that token.
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = "seven")]
pub struct A;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = SEVEN)]
pub struct B;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 4294967296)]
pub struct C;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(id = 7u8)]
pub struct D;

#[derive(Serialize, Deserialize, kaspar_remote::Wire)]
#[wire(ident = 7)]
pub struct E;

fn main() {}
