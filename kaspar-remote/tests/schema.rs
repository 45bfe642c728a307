//! The schema hash covers every type a message contains, over the
//! loopback: two builds whose message differs only inside a nested plain
//! serde type (two of its fields swapped) no longer connect, where before
//! the lookup succeeded and the values arrived swapped.
//!
//! The two builds are two modules here, each declaring the same actor
//! (`#[actor(name = "Book")]`) over its own version of the nested type.

use kaspar::prelude::*;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{LookupError, Node, RemoteActor, Schema, Wire};
use serde::{Deserialize, Serialize};

/// The first build: a level is price, then quantity.
mod v1 {
    use super::*;

    #[derive(Serialize, Deserialize, Schema, Clone, Copy, Debug, PartialEq)]
    pub struct Level {
        pub px: i64,
        pub qty: i64,
    }

    #[derive(Serialize, Deserialize, Wire, Clone, Debug, PartialEq)]
    #[wire(id = 1)]
    pub struct Quote {
        pub best: Level,
        pub depth: Vec<Level>,
    }

    #[actor(name = "Book")]
    pub struct Book;

    #[actor(remote)]
    impl Book {
        /// Replies with the price it read as the best. (A plain `i64`:
        /// the builds differ only inside the message.)
        #[handler(Quote)]
        fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
            q.best.px
        }
    }
}

/// The second build: the same, but a level is quantity, then price.
/// Every message's own fields read as before (`best: Level`,
/// `depth: Vec<Level>`).
mod v2 {
    use super::*;

    #[derive(Serialize, Deserialize, Schema, Clone, Copy, Debug, PartialEq)]
    pub struct Level {
        pub qty: i64,
        pub px: i64,
    }

    #[derive(Serialize, Deserialize, Wire, Clone, Debug, PartialEq)]
    #[wire(id = 1)]
    pub struct Quote {
        pub best: Level,
        pub depth: Vec<Level>,
    }

    #[actor(name = "Book")]
    pub struct Book;

    #[actor(remote)]
    impl Book {
        #[handler(Quote)]
        fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
            q.best.px
        }
    }
}

#[test]
fn swapping_two_fields_of_a_nested_type_changes_every_hash_above_it() {
    assert_ne!(<v1::Level as Schema>::HASH, <v2::Level as Schema>::HASH);
    assert_ne!(<v1::Quote as Schema>::HASH, <v2::Quote as Schema>::HASH);
    assert_ne!(v1::Book::SCHEMA_HASH, v2::Book::SCHEMA_HASH);
    // The same definition gives the same hash, whatever module it is in.
    mod again {
        use super::*;
        #[derive(Serialize, Deserialize, Schema)]
        pub struct Level {
            pub px: i64,
            pub qty: i64,
        }
    }
    assert_eq!(<v1::Level as Schema>::HASH, <again::Level as Schema>::HASH);
}

#[test]
fn a_lookup_across_builds_whose_nested_types_differ_is_refused() {
    let net = Loopback::new(64);
    let system = System::new();
    let server = Node::new(net.clone(), "server").unwrap();
    server
        .export("book", &system.spawn(v1::Book).start())
        .unwrap();
    let client = Node::new(net, "client").unwrap();

    match client.lookup::<v2::Book>("book") {
        Err(e @ LookupError::SchemaMismatch { .. }) => {
            let LookupError::SchemaMismatch {
                actor,
                expected,
                found,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(
                (*actor, *expected, *found),
                ("Book", v2::Book::SCHEMA_HASH, v1::Book::SCHEMA_HASH)
            );
            let text = e.to_string();
            assert!(
                text.starts_with("Book's handlers differ between the two builds"),
                "{text}"
            );
        }
        other => panic!("expected SchemaMismatch, got {other:?}"),
    }
    // Nothing reached the exporting node.
    assert_eq!(server.stats().frames_in, 0);

    // The same build connects, and a level arrives as it was sent.
    let book = client.lookup::<v1::Book>("book").unwrap();
    let best = v1::Level { px: 101, qty: 7 };
    let quote = v1::Quote {
        best,
        depth: vec![best],
    };
    assert_eq!(book.ask(quote).unwrap().wait(), Ok(101));
    drop((client, server));
    system.shutdown();
}

/// Kinds of definitions the derive hashes, each against a neighbour that
/// differs in one thing only.
mod kinds {
    use super::*;

    #[derive(Serialize, Deserialize, Schema)]
    pub enum Side {
        Buy,
        Sell,
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub enum SideSwapped {
        Sell,
        Buy,
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub enum Cmd {
        Px(i64),
        Qty { n: i64 },
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub enum CmdRenamedField {
        Px(i64),
        Qty { m: i64 },
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub struct Pair(pub i64, pub u64);

    #[derive(Serialize, Deserialize, Schema)]
    pub struct PairSwapped(pub u64, pub i64);

    #[derive(Serialize, Deserialize, Schema)]
    pub struct Named {
        pub a: i64,
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub struct NamedRenamed {
        #[serde(rename = "b")]
        pub a: i64,
    }

    /// Generic: its hash is its argument's.
    #[derive(Serialize, Deserialize, Schema)]
    pub struct Tagged<T> {
        pub tag: u8,
        pub value: T,
    }

    /// Recursive through `Box<Self>`: the field is hashed by its text.
    #[derive(Serialize, Deserialize, Schema)]
    pub enum List {
        Nil,
        Cons(i64, Box<Self>),
    }

    #[derive(Serialize, Deserialize, Schema)]
    pub enum ListOfU64 {
        Nil,
        Cons(u64, Box<Self>),
    }
}

#[test]
fn each_part_of_a_definition_is_in_its_hash() {
    use kinds::*;
    assert_ne!(Side::HASH, SideSwapped::HASH, "variant order");
    assert_ne!(Cmd::HASH, CmdRenamedField::HASH, "a variant's field name");
    assert_ne!(Pair::HASH, PairSwapped::HASH, "tuple field types in order");
    assert_ne!(Named::HASH, NamedRenamed::HASH, "a serde attribute");
    assert_ne!(<Tagged<i64>>::HASH, <Tagged<u64>>::HASH, "a type argument");
    assert_ne!(List::HASH, ListOfU64::HASH, "beside a recursive field");
}

#[test]
fn a_derived_hash_is_the_same_in_every_build() {
    // Pinned: computed from names and std types only (no `TypeId`, no
    // address), so every build of this source gives this number. A change
    // is a change to the schema hash's definition, which must bump its
    // version in `wire.rs`.
    assert_eq!(<v1::Level as Schema>::HASH, 0x8971_57d8_1ea9_1159);
    assert_eq!(v1::Book::SCHEMA_HASH, 0x1570_4644_03f9_baa6);
}
