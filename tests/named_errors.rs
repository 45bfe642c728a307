//! Every asynchronous error names the actor it was about, as the
//! `fast_send` family's do: a refused `send`, `ask` or `request`, an `ask`
//! that got no reply, and either of them after `?` into `kaspar::Error`.

use std::sync::mpsc::{channel, Receiver};
use std::sync::Mutex;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::AskError;

pub struct Note(pub u32);
pub struct Boom;
/// Holds the actor's thread until the test sends on the channel.
pub struct Gate(pub Mutex<Receiver<()>>);

#[actor]
pub struct Book;

#[actor]
impl Book {
    #[handler(Note)]
    fn note(&mut self, n: Note, _ctx: &mut Ctx<Self>) -> u32 {
        n.0
    }

    #[handler(Boom)]
    fn boom(&mut self, _b: Boom, _ctx: &mut Ctx<Self>) -> u32 {
        panic!("boom (expected by the test)")
    }

    #[handler(Gate)]
    fn gate(&mut self, g: Gate, _ctx: &mut Ctx<Self>) {
        let _ = g.0.lock().unwrap().recv();
    }

    /// Takes the reply to a `request`.
    #[handler(u32)]
    fn reply(&mut self, _r: u32, _ctx: &mut Ctx<Self>) {}
}

/// `book-eu(Book#<id>)`: how every error names the actor.
fn named(book: &Addr<Book>) -> String {
    format!("book-eu(Book{:?})", book.id())
}

fn stopped_book(system: &System) -> Addr<Book> {
    let book = system.spawn(Book).name("book-eu").start();
    book.stop();
    while !book.is_stopped() {
        std::thread::yield_now();
    }
    book
}

#[test]
fn a_send_to_a_stopped_actor_names_it_and_hands_the_message_back() {
    let system = System::new();
    let book = stopped_book(&system);
    let who = named(&book);
    let err = book.send(Note(1)).unwrap_err();
    assert!(err.is_closed());
    // It used to read "actor stopped; message handed back".
    assert_eq!(
        err.to_string(),
        format!("{who} has stopped; message handed back")
    );
    assert_eq!(err.into_inner().0, 1, "handed back");
    let err = book.ask(Note(2)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{who} has stopped; message handed back")
    );
    let err = book.fast_send_void(Note(3)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{who} has stopped; message handed back")
    );
    let err = book.request(Note(4), &book).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{who} has stopped; message handed back")
    );
    let recipient: Recipient<Note, u32> = book.recipient();
    let err = recipient.send(Note(5)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{who} has stopped; message handed back")
    );
    assert_eq!(err.into_inner().0, 5, "handed back");
    system.shutdown();
}

#[test]
fn after_the_question_mark_the_error_still_names_the_actor() {
    fn tell(book: &Addr<Book>) -> Result<(), kaspar::Error> {
        book.send(Note(1))?;
        Ok(())
    }
    let system = System::new();
    let book = stopped_book(&system);
    let err = tell(&book).unwrap_err();
    // It used to read "actor stopped" (`Error::Closed(None)`).
    assert_eq!(err.to_string(), format!("{} has stopped", named(&book)));
    system.shutdown();
}

#[test]
fn a_full_mailbox_names_its_actor() {
    let system = System::new();
    let book = system
        .spawn(Book)
        .name("book-eu")
        .mailbox(MailboxKind::lock_free(2))
        .start();
    let who = named(&book);
    let (open, gate) = channel();
    book.send(Gate(Mutex::new(gate))).unwrap();
    // The gate holds the thread: what is sent from now on stays queued.
    // The ring's capacity may be rounded up; fill it, whatever it is.
    let mut n = 0;
    let err = loop {
        match book.send(Note(n)) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
    };
    assert!(err.is_full(), "{err}");
    assert_eq!(
        err.to_string(),
        format!("the mailbox of {who} is full; message handed back")
    );
    let err: kaspar::Error = err.into();
    assert_eq!(err.to_string(), format!("the mailbox of {who} is full"));
    open.send(()).unwrap();
    system.shutdown();
}

#[test]
fn an_ask_without_a_reply_names_the_actor_asked() {
    let system = System::new();
    let book = system.spawn(Book).name("book-eu").start();
    let who = named(&book);
    // The handler panics.
    let err = book.ask(Boom).unwrap().wait().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("the handler of {who} panicked; no reply")
    );
    let err: kaspar::Error = err.into();
    assert_eq!(err.to_string(), format!("handler of {who} panicked"));
    // No reply in time: the handle stays valid.
    let (open, gate) = channel();
    book.send(Gate(Mutex::new(gate))).unwrap();
    let mut pending = book.ask(Note(7)).unwrap();
    let err = pending.wait_timeout(Duration::from_millis(10)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("no reply from {who} yet: timed out")
    );
    let err: kaspar::Error = err.into();
    assert_eq!(
        err.to_string(),
        format!("no reply from {who} yet: timed out")
    );
    open.send(()).unwrap();
    assert_eq!(pending.wait().unwrap(), 7);
    system.shutdown();
}

#[test]
fn an_ask_dropped_unhandled_names_the_actor_asked() {
    let system = System::new();
    let prepared = system.prepare::<Book>().name("book-eu");
    let book = prepared.addr();
    let pending = book.ask(Note(1)).unwrap();
    drop(prepared); // never spawned: what was queued is dropped
    let err = pending.wait().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the message to {} was dropped unhandled; no reply",
            named(&book)
        )
    );
    let err: kaspar::Error = err.into();
    assert_eq!(
        err.to_string(),
        format!("the message to {} was dropped unhandled", named(&book))
    );
    system.shutdown();
}

#[test]
fn the_errors_carry_the_target_and_the_message() {
    let system = System::new();
    let book = stopped_book(&system);
    match book.send(Note(1)) {
        Err(SendError::Closed { target, msg }) => {
            assert_eq!(target, Some(book.target()));
            assert_eq!(msg.0, 1);
        }
        other => panic!("expected Closed, got {other:?}"),
    }
    let err = book.send(Note(2)).unwrap_err();
    assert_eq!(err.target(), Some(&book.target()));
    match kaspar::Error::from(err) {
        kaspar::Error::Closed(Some(t)) => assert_eq!(t, book.target()),
        other => panic!("expected Closed(Some(target)), got {other:?}"),
    }
    let live = system.spawn(Book).start();
    let mut asked = live.ask(Boom).unwrap();
    assert_eq!(asked.target(), Some(live.target()));
    let err = asked.wait_timeout(Duration::from_secs(20)).unwrap_err();
    assert_eq!(err, AskError::Panicked(Some(live.target())));
    assert_eq!(err.target(), Some(&live.target()));
    assert!(matches!(
        kaspar::Error::from(err),
        kaspar::Error::Panicked(Some(t)) if t == live.target()
    ));
    system.shutdown();
}
