//! Procedural macros for [kaspar](https://docs.rs/kaspar): `#[actor]` and
//! `#[handler]`.
//!
//! * `#[actor]` / `#[actor(options)]` on a struct declares an actor and
//!   carries its options.
//! * `#[actor]` on the struct's inherent impl block collects the
//!   `#[handler(Msg)]` methods (and optional `#[started]` / `#[stopped]`
//!   hooks) and generates the message enum, the `Actor` impl whose dispatch
//!   is a `match`, and one `Handler<Msg>` impl per handler.
//!
//! Each attribute's module works by stage: parse into a typed model that
//! keeps the user's spans (so errors point at the user's code), validate,
//! expand. Every mistake found is reported at once; on error the user's
//! item is still emitted so IDEs keep working. Generated code names the
//! runtime only through `::kaspar::__private`.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use syn::{parse_macro_input, Item};

mod actor;
mod errors;
mod generics;
mod group;
mod names;

/// Declares an actor (on a struct) or collects its handlers (on its impl
/// block). See the crate documentation.
#[proc_macro_attribute]
pub fn actor(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = parse_macro_input!(item as Item);
    actor::expand(TokenStream2::from(args), item).into()
}

/// Declares an actor group: a struct whose fields are the members'
/// addresses (`name: Addr<Member>`). The members run on one thread behind
/// one shared queue; see `kaspar::GroupSpec`.
#[proc_macro_attribute]
pub fn group(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = parse_macro_input!(item as syn::ItemStruct);
    group::expand(TokenStream2::from(args), item).into()
}

/// Marks a method of an `#[actor]` impl block as the handler of one message
/// type: `#[handler(Msg)] fn on_msg(&mut self, msg: Msg, ctx: &mut Ctx<Self>) -> Reply`.
///
/// Used anywhere else, it is a compile error: only the enclosing `#[actor]`
/// sees all the handlers and can generate the dispatch.
#[proc_macro_attribute]
pub fn handler(_args: TokenStream, item: TokenStream) -> TokenStream {
    let err = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[handler]` must be on a method inside an `#[actor]` impl block; add `#[actor]` to the enclosing `impl`",
    );
    errors::with_item(TokenStream2::from(item), err).into()
}
