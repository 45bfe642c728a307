//! What happens when delivery goes wrong, as data and policy: the dead
//! letter sink ([`dead_letters`]) and the supervision policy with its
//! bookkeeping ([`supervision`]). The mechanics that act on an actor's cell
//! live one layer up, in `actor::restart` and `actor::letters`.

pub(crate) mod dead_letters;
pub(crate) mod supervision;
