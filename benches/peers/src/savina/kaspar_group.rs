//! Savina on kaspar with every actor of a benchmark a member of one group:
//! one thread, one queue, and every `send` between members a push onto the
//! queue the group's own thread pops next, with no wake-up. The actors and
//! drivers are `kaspar.rs`'s; only the spawning differs.
//!
//! A `#[group]` is a struct with one named field per member, so the groups
//! of 60, 100 and 101 members are declared by `group_of!` from a list of
//! field names.

use std::time::Duration;

use kaspar::prelude::*;
use kaspar::GroupSpec;

use super::chameneos::kaspar::{self as kc, Chameneo, Mall};
use super::kaspar::{self as k, Counter, Pinger, Ponger, Producer, RingNode, Worker};
use super::Params;

/// The group's queue: batched (drain everything queued per lock), with a
/// ring that spills over, as the standalone actors' default.
const MAILBOX: MailboxKind = MailboxKind::batched(1024);

#[group]
pub struct PingPong {
    pub ping: Addr<Pinger>,
    pub pong: Addr<Ponger>,
}

#[group]
pub struct Counting {
    pub producer: Addr<Producer>,
    pub counter: Addr<Counter>,
}

/// Declares `#[group] struct $name` with the `$head` members first, then
/// one `$member` per name in `{ .. }`, and two helpers: `members`, which
/// builds the members tuple (the `i`th `$member` from `make(i)`), and
/// `many`, the `$member` addresses in order.
macro_rules! group_of {
    ($name:ident { $($head:ident: $head_ty:ty),* } $member:ty { $($field:ident)* }) => {
        #[group]
        pub struct $name {
            $(pub $head: Addr<$head_ty>,)*
            $(pub $field: Addr<$member>,)*
        }

        impl $name {
            const MANY: usize = [$(stringify!($field)),*].len();

            fn members($($head: $head_ty,)* mut make: impl FnMut(usize) -> $member) -> <Self as GroupSpec>::Members {
                let mut i = 0;
                // Tuple fields are evaluated left to right.
                ($($head,)* $({ let _ = stringify!($field); i += 1; make(i - 1) },)*)
            }

            fn many(&self) -> Vec<Addr<$member>> {
                vec![$(self.$field.clone()),*]
            }
        }
    };
}

group_of!(Ring {} RingNode {
    n00 n01 n02 n03 n04 n05 n06 n07 n08 n09 n10 n11 n12 n13 n14 n15 n16 n17 n18 n19
    n20 n21 n22 n23 n24 n25 n26 n27 n28 n29 n30 n31 n32 n33 n34 n35 n36 n37 n38 n39
    n40 n41 n42 n43 n44 n45 n46 n47 n48 n49 n50 n51 n52 n53 n54 n55 n56 n57 n58 n59
    n60 n61 n62 n63 n64 n65 n66 n67 n68 n69 n70 n71 n72 n73 n74 n75 n76 n77 n78 n79
    n80 n81 n82 n83 n84 n85 n86 n87 n88 n89 n90 n91 n92 n93 n94 n95 n96 n97 n98 n99
});

group_of!(ForkJoin {} Worker {
    w00 w01 w02 w03 w04 w05 w06 w07 w08 w09 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19
    w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39
    w40 w41 w42 w43 w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59
});

group_of!(Chameneos { mall: Mall } Chameneo {
    c00 c01 c02 c03 c04 c05 c06 c07 c08 c09 c10 c11 c12 c13 c14 c15 c16 c17 c18 c19
    c20 c21 c22 c23 c24 c25 c26 c27 c28 c29 c30 c31 c32 c33 c34 c35 c36 c37 c38 c39
    c40 c41 c42 c43 c44 c45 c46 c47 c48 c49 c50 c51 c52 c53 c54 c55 c56 c57 c58 c59
    c60 c61 c62 c63 c64 c65 c66 c67 c68 c69 c70 c71 c72 c73 c74 c75 c76 c77 c78 c79
    c80 c81 c82 c83 c84 c85 c86 c87 c88 c89 c90 c91 c92 c93 c94 c95 c96 c97 c98 c99
});

pub fn ping_pong(p: &Params) -> Duration {
    k::ping_pong_with(p, |s| {
        let g = s
            .spawn_group::<PingPong>((Pinger::default(), Ponger { pings: 0 }))
            .mailbox(MAILBOX)
            .start();
        (g.ping, g.pong)
    })
}

pub fn counting(p: &Params) -> Duration {
    k::counting_with(p, |s| {
        let g = s
            .spawn_group::<Counting>((Producer::default(), Counter { count: 0 }))
            .mailbox(MAILBOX)
            .start();
        (g.producer, g.counter)
    })
}

pub fn thread_ring(p: &Params) -> Duration {
    assert_eq!(p.ring_actors, Ring::MANY, "the ring group has a fixed size");
    k::thread_ring_with(p, |s, done| {
        let members = Ring::members(|i| RingNode::new(i, done));
        s.spawn_group::<Ring>(members)
            .mailbox(MAILBOX)
            .start()
            .many()
    })
}

pub fn fork_join(p: &Params) -> Duration {
    assert_eq!(
        p.fj_workers,
        ForkJoin::MANY,
        "the fork-join group has a fixed size"
    );
    k::fork_join_with(p, |s, done| {
        let members = ForkJoin::members(|_| Worker::new(p.fj_msgs, done));
        s.spawn_group::<ForkJoin>(members)
            .mailbox(MAILBOX)
            .start()
            .many()
    })
}

pub fn chameneos(p: &Params) -> Duration {
    assert_eq!(
        p.chameneos,
        Chameneos::MANY,
        "the chameneos group has a fixed size"
    );
    kc::chameneos_with(p, |s, done| {
        let members = Chameneos::members(Mall::new(p, done), Chameneo::new);
        let g = s.spawn_group::<Chameneos>(members).mailbox(MAILBOX).start();
        (g.mall.clone(), g.many())
    })
}
