//! The schema hash of a type: [`Schema::HASH`], computed at compile time
//! from the type's whole definition, the definitions of the types inside it
//! included.
//!
//! A derived hash folds in, in order: what kind of type it is (a struct
//! with named fields, a tuple struct, a unit struct, an enum), how many
//! fields or variants it has, each variant's name and kind, each field's
//! name and its type's own `HASH`, and the text of every `#[serde(..)]`
//! attribute (which can change the encoding). Not the type's name, its
//! documentation, its other attributes or anything that differs between
//! builds of the same source (no `TypeId`, no address): two builds agree on
//! a hash exactly when they agree on the definitions.
//!
//! The hash is FNV-1a (64 bit) over that sequence, every name preceded by
//! its length, so that no two sequences of names run together into the
//! same bytes. It guards against two builds that read a message
//! differently, not against an adversary choosing a collision.
//!
//! The std types that serde encodes are implemented here, hashed by their
//! encoding rather than their spelling: `String`, `str`, `Box<str>` and
//! `Cow<str>` agree, as do `Vec<T>`, `VecDeque<T>`, `[T]` and the sets of
//! `T` (a sequence), and the maps; `usize` hashes as `u64` and `isize` as
//! `i64`, as serde sends them.

use std::borrow::{Cow, ToOwned};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::num::{
    NonZeroI128, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI8, NonZeroU128, NonZeroU16,
    NonZeroU32, NonZeroU64, NonZeroU8,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A type whose definition has a stable hash, so that two processes can
/// tell whether they encode and decode it alike.
///
/// Every type inside a [`Wire`](crate::Wire) message, and every reply of a
/// remote handler, needs it: derive it beside serde's derives.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use kaspar_remote::Schema;
///
/// #[derive(Serialize, Deserialize, Schema)]
/// pub struct Level {
///     pub px: i64,
///     pub qty: u64,
/// }
///
/// #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
/// #[wire(id = 3)]
/// pub struct Snapshot {
///     pub bids: Vec<Level>,
/// }
///
/// // The message's hash covers `Level`'s fields: swapping `px` and `qty`
/// // there changes it.
/// assert_ne!(<Snapshot as Schema>::HASH, <Vec<(u64, i64)> as Schema>::HASH);
/// ```
///
/// `#[derive(Wire)]` implements `Schema` too; do not derive both. A field
/// whose type is the type itself, directly (`Box<Self>` in a list, say),
/// is hashed by its text; a cycle through another type does not compile
/// (the two hashes would each need the other first).
///
/// For a type with a hand-written serde encoding, implement it by hand
/// with the hash of a type that describes the encoding:
///
/// ```
/// use kaspar_remote::Schema;
///
/// /// Sent as 16 raw bytes.
/// pub struct Uuid([u8; 16]);
///
/// impl Schema for Uuid {
///     const HASH: u64 = <[u8; 16] as Schema>::HASH;
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no schema hash, so it cannot cross a process boundary",
    label = "every type inside a wire message, and every reply of a remote handler, must be `Schema`",
    note = "derive it beside serde's derives: `#[derive(Serialize, Deserialize, kaspar_remote::Schema)]`; for a type of another crate, wrap it in a type of yours and implement `Schema` for that"
)]
pub trait Schema {
    /// The hash of the type's definition: equal in two builds exactly when
    /// the type (and every type inside it) is defined alike in both.
    const HASH: u64;
}

/// FNV-1a's offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// The start of a type's hash: the kind of type, named by `kind`.
#[doc(hidden)]
pub const fn tag(kind: &str) -> u64 {
    name(FNV_OFFSET, kind)
}

/// `h`, then a number (a count, a length, another type's hash).
#[doc(hidden)]
pub const fn num(h: u64, n: u64) -> u64 {
    crate::wire::fnv1a(h, &n.to_le_bytes())
}

/// `h`, then a name (a field's, a variant's, an attribute's text), after
/// its length.
#[doc(hidden)]
pub const fn name(h: u64, text: &str) -> u64 {
    crate::wire::fnv1a(num(h, text.len() as u64), text.as_bytes())
}

/// `h`, then one field: its name (empty for a tuple field) and its type's
/// hash.
#[doc(hidden)]
pub const fn field(h: u64, field_name: &str, ty: u64) -> u64 {
    num(name(h, field_name), ty)
}

macro_rules! leaf {
    ($($kind:literal: $($t:ty),+;)+) => {
        $($(
            impl Schema for $t {
                const HASH: u64 = tag($kind);
            }
        )+)+
    };
}

leaf! {
    "bool": bool;
    "char": char;
    "u8": u8;
    "u16": u16;
    "u32": u32;
    "u64": u64, usize;
    "u128": u128;
    "i8": i8;
    "i16": i16;
    "i32": i32;
    "i64": i64, isize;
    "i128": i128;
    "f32": f32;
    "f64": f64;
    "nonzero u8": NonZeroU8;
    "nonzero u16": NonZeroU16;
    "nonzero u32": NonZeroU32;
    "nonzero u64": NonZeroU64;
    "nonzero u128": NonZeroU128;
    "nonzero i8": NonZeroI8;
    "nonzero i16": NonZeroI16;
    "nonzero i32": NonZeroI32;
    "nonzero i64": NonZeroI64;
    "nonzero i128": NonZeroI128;
    "string": str, String;
    "path": Path, PathBuf;
    "unit": ();
    "duration": Duration;
    "system time": SystemTime;
    "ip": IpAddr;
    "ipv4": Ipv4Addr;
    "ipv6": Ipv6Addr;
    "socket": SocketAddr;
    "socket v4": SocketAddrV4;
    "socket v6": SocketAddrV6;
}

impl<T: ?Sized + Schema> Schema for Box<T> {
    const HASH: u64 = T::HASH;
}

impl<T: ?Sized + ToOwned + Schema> Schema for Cow<'_, T> {
    const HASH: u64 = T::HASH;
}

impl<T: ?Sized> Schema for PhantomData<T> {
    const HASH: u64 = tag("phantom");
}

impl<T: Schema> Schema for Option<T> {
    const HASH: u64 = num(tag("option"), T::HASH);
}

impl<T: Schema, E: Schema> Schema for Result<T, E> {
    const HASH: u64 = num(num(tag("result"), T::HASH), E::HASH);
}

impl<T: Schema, const N: usize> Schema for [T; N] {
    const HASH: u64 = num(num(tag("array"), N as u64), T::HASH);
}

macro_rules! seq {
    ($($t:ident $(: $bound:path)?),+) => {
        $(
            impl<T: Schema $(+ $bound)?> Schema for $t<T> {
                const HASH: u64 = num(tag("seq"), T::HASH);
            }
        )+
    };
}

seq!(Vec, VecDeque, LinkedList, BinaryHeap: Ord, BTreeSet: Ord);

impl<T: Schema> Schema for [T] {
    const HASH: u64 = num(tag("seq"), T::HASH);
}

impl<T: Schema, S> Schema for HashSet<T, S> {
    const HASH: u64 = num(tag("seq"), T::HASH);
}

impl<K: Schema, V: Schema> Schema for BTreeMap<K, V> {
    const HASH: u64 = num(num(tag("map"), K::HASH), V::HASH);
}

impl<K: Schema, V: Schema, S> Schema for HashMap<K, V, S> {
    const HASH: u64 = num(num(tag("map"), K::HASH), V::HASH);
}

macro_rules! tuple {
    ($($n:literal: $($t:ident)+;)+) => {
        $(
            impl<$($t: Schema),+> Schema for ($($t,)+) {
                const HASH: u64 = {
                    let h = num(tag("tuple"), $n);
                    $(let h = num(h, $t::HASH);)+
                    h
                };
            }
        )+
    };
}

tuple! {
    1: A;
    2: A B;
    3: A B C;
    4: A B C D;
    5: A B C D E;
    6: A B C D E F;
    7: A B C D E F G;
    8: A B C D E F G H;
    9: A B C D E F G H I;
    10: A B C D E F G H I J;
    11: A B C D E F G H I J K;
    12: A B C D E F G H I J K L;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_with_one_encoding_agree_and_others_differ() {
        assert_eq!(String::HASH, <Box<str>>::HASH);
        assert_eq!(String::HASH, <Cow<'static, str>>::HASH);
        assert_eq!(<Vec<u32>>::HASH, <VecDeque<u32>>::HASH);
        assert_eq!(<Vec<u32>>::HASH, <[u32]>::HASH);
        assert_eq!(<HashMap<u8, u8>>::HASH, <BTreeMap<u8, u8>>::HASH);
        assert_eq!(usize::HASH, u64::HASH);
        assert_ne!(u32::HASH, u64::HASH);
        assert_ne!(<Vec<u32>>::HASH, <Vec<u64>>::HASH);
        assert_ne!(<Option<u8>>::HASH, u8::HASH);
        assert_ne!(<[u8; 2]>::HASH, <[u8; 3]>::HASH);
        assert_ne!(<(u8, u16)>::HASH, <(u16, u8)>::HASH);
        assert_ne!(<(u8,)>::HASH, <(u8, u8)>::HASH);
        assert_ne!(<Result<u8, String>>::HASH, <Result<String, u8>>::HASH);
        assert_ne!(<HashMap<u8, u16>>::HASH, <HashMap<u16, u8>>::HASH);
    }

    #[test]
    fn names_cannot_run_together() {
        // "ab" then "c" is not "a" then "bc": each name carries its length.
        assert_ne!(name(name(0, "ab"), "c"), name(name(0, "a"), "bc"));
        assert_ne!(field(0, "a", 1), field(0, "", 1));
    }

    #[test]
    fn the_hash_of_a_std_type_is_the_same_in_every_build() {
        // Pinned (and computed independently, from the definition above,
        // by a few lines of Python): a change here is a change to the
        // wire schema, which needs `SCHEMA_VERSION` in `wire/mod.rs` bumped.
        assert_eq!(u64::HASH, 0x2b03_fdd2_8e27_f29b);
        assert_eq!(<Vec<(String, i64)>>::HASH, 0xc8d3_e014_169b_038d);
    }
}
