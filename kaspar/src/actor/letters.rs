//! The actor side of dead letters: subscribing an actor to a sink, posting
//! a queued envelope, and naming a message's handler class in a letter.
//! The sink itself is [`failure::dead_letters`](crate::failure::dead_letters).

use std::sync::Arc;

use crate::actor::addr::Addr;
use crate::actor::cell::ActorCell;
use crate::actor::traits::{Actor, Handler};
use crate::base::ids::ClassId;
use crate::base::stats::Rare;
use crate::error::Target;
use crate::failure::dead_letters::{DeadLetter, DeadLetterReason, DeadLetters, LetterBox};
use crate::failure::supervision::ExitReason;
use crate::mailbox::{Drained, IdleWait};
use crate::reply::ReplyTo;

impl DeadLetters {
    /// Forwards every later dead letter to `addr` as a [`DeadLetter`]
    /// message. Compiles only if `S` has a `#[handler(DeadLetter)]`.
    ///
    /// The subscription ends when the subscriber stops. Give a subscriber
    /// an unbounded mailbox (or [`WhenFull::Reject`](crate::WhenFull)): a
    /// letter is posted from whichever thread failed to deliver, and a
    /// subscriber's own dead letters are never forwarded back to it.
    pub fn subscribe<S: Handler<DeadLetter>>(&self, addr: &Addr<S>) {
        let strong: Arc<dyn LetterBox> = addr.cell.clone();
        self.add_subscriber(Arc::downgrade(&strong));
    }

    /// Posts a queued envelope of `cell`'s actor.
    pub(crate) fn post_queued<A: Actor>(
        &self,
        cell: &ActorCell<A>,
        msg: A::Msg,
        reason: DeadLetterReason,
    ) {
        cell.stats.shared.bump(Rare::DeadLetters);
        let class = class_name::<A>(&msg);
        self.post(DeadLetter {
            target: cell.target(),
            class,
            reason,
            message: Some(Box::new(msg)),
            panic: None,
        });
    }
}

/// The handler class name of a queued envelope.
pub(crate) fn class_name<A: Actor>(msg: &A::Msg) -> &'static str {
    name_of_class::<A>(A::class_of(msg))
}

/// The name of `A`'s handler class `class`.
pub(crate) fn name_of_class<A: Actor>(class: ClassId) -> &'static str {
    A::CLASSES
        .get(class.index() as usize)
        .copied()
        .unwrap_or("?")
}

/// The class name of `S`'s handler for `M`.
pub(crate) fn class_of_handler<S: Handler<M>, M>() -> &'static str {
    S::CLASSES
        .get(<S as Handler<M>>::CLASS.index() as usize)
        .copied()
        .unwrap_or("?")
}

impl<S: Handler<DeadLetter>> LetterBox for ActorCell<S> {
    fn target(&self) -> Target {
        ActorCell::target(self)
    }

    fn offer(&self, letter: DeadLetter) -> Result<(), DeadLetter> {
        match self.push(S::envelope(letter, ReplyTo::nobody())) {
            Ok(len) => {
                self.shared_counters().saw_len(len);
                Ok(())
            }
            Err(e) => Err(S::open(e.into_inner()).0),
        }
    }
}

/// Stops an actor that never started (a [`Prepared`](crate::Prepared)
/// dropped without being spawned): it refuses entries from now on, and
/// what was queued for it goes to dead letters, so pending asks resolve.
pub(crate) fn abandon_unstarted<A: Actor>(cell: &ActorCell<A>) {
    {
        let held = cell.hold();
        cell.mark_stopped(&held);
    }
    cell.inbox.close();
    drain_closed(cell, DeadLetterReason::Stopped);
    crate::actor::restart::notify_terminated(cell, ExitReason::Stopped);
}

/// Hands everything an actor's closed mailbox still holds to dead letters,
/// with `reason`: what was queued, and what senders that got in before the
/// close are still writing (a slot reserved but not yet written is waited
/// for, as a run loop's pop waits for it, not skipped). For the thread that
/// is the mailbox's only consumer now: a stopping or dying run loop, or the
/// owner of an actor that never started. A group member's messages are in
/// its group's queue, which the group drains.
pub(crate) fn drain_closed<A: Actor>(cell: &ActorCell<A>, reason: DeadLetterReason) {
    let Some(mailbox) = cell.inbox.own() else {
        return;
    };
    debug_assert!(mailbox.is_closed(), "draining an open mailbox");
    let mut queued = Vec::new();
    // On a closed mailbox `pop_batch` returns what is left, waiting for
    // reserved slots, and `Closed` once it is empty for good.
    while let Drained::Got(_) = mailbox.pop_batch(&mut queued, usize::MAX, IdleWait::Backoff) {
        for msg in queued.drain(..) {
            #[cfg(feature = "tracing")]
            let msg = msg.into_msg();
            // A message's destructor may panic; dead letters drop it
            // quietly, and nothing else here runs user code.
            cell.sup.dead.post_queued(cell, msg.load(), reason);
        }
    }
}
