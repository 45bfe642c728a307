// Rule: `#[group(msg = Name)]` names the group's message enum, so a group
// whose default `<Group>Msg` would collide with a type of the user's
// still compiles; the enum is the one the group's queue holds.
use kaspar::prelude::*;

/// The user's own type, whose name the default enum would take.
pub struct DeskMsg;

pub struct Quote(pub i64);

#[actor]
pub struct Book {
    last: i64,
}

#[actor]
impl Book {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        self.last = q.0;
        self.last
    }
}

#[group(msg = DeskMessages)]
pub struct Desk {
    pub book: Addr<Book>,
}

fn main() {
    let _ = DeskMsg;
    let _: Option<DeskMessages> = None;
    let system = System::new();
    let desk: Desk = system.spawn_group::<Desk>((Book { last: 0 },)).start();
    assert_eq!(desk.book.ask(Quote(7)).unwrap().wait().unwrap(), 7);
    system.shutdown();
}
