// Rule: handler and member names that camel-case alike (`on_x`, `on__x`,
// `r#type`) still expand to distinct, valid variants.
use kaspar::prelude::*;

pub struct A;
pub struct B;
pub struct C;

#[actor]
pub struct Odd;

#[actor]
impl Odd {
    #[handler(A)]
    fn on_x(&mut self, _m: A, _ctx: &mut Ctx<Self>) {}
    #[handler(B)]
    #[allow(non_snake_case)]
    fn on__x(&mut self, _m: B, _ctx: &mut Ctx<Self>) {}
    #[handler(C)]
    fn r#type(&mut self, _m: C, _ctx: &mut Ctx<Self>) {}
}

#[group]
pub struct Pair {
    pub r#type: Addr<Odd>,
    pub __: Addr<Odd>,
}

fn main() {
    let system = System::new();
    let p = system.spawn_group::<Pair>((Odd, Odd)).start();
    p.r#type.fast_send(A).unwrap();
    p.__.fast_send(B).unwrap();
    p.r#type.fast_send(C).unwrap();
}
