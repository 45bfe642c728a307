//! What happens when delivery goes wrong, as data and policy: the dead
//! letter sink ([`dead_letters`]) and the supervision policy with its
//! bookkeeping ([`supervision`]). The mechanics that act on an actor's cell
//! live one layer up, in `actor::restart` and `actor::letters`.

pub(crate) mod dead_letters;
pub(crate) mod supervision;

// The helpers live in the bottom layer, so that the timer thread uses them
// too; supervision and dead letters name them from here.
pub(crate) use crate::base::quiet::{drop_quietly, quietly};
