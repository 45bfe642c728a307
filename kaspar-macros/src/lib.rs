//! Procedural macros for [kaspar](https://docs.rs/kaspar): `#[actor]` and
//! `#[handler]`.
//!
//! * `#[actor]` / `#[actor(options)]` on a struct declares an actor and
//!   carries its options (see `options`).
//! * `#[actor]` on the struct's inherent impl block collects the
//!   `#[handler(Msg)]` methods (and optional `#[started]` / `#[stopped]`
//!   hooks) and generates the message enum, the `Actor` impl whose dispatch
//!   is a `match`, and one `Handler<Msg>` impl per handler.
//!
//! Work is split by stage: `options` parses and expands the struct
//! attribute; `model` parses and validates an impl block into a typed
//! model (keeping spans so errors point at the user's code); `expand`
//! turns the model into code. Every mistake found is reported at once; on
//! error the user's item is still emitted so IDEs keep working.
//! Generated code names the runtime only through `::kaspar::__private`.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::ToTokens;
use syn::{parse_macro_input, Item};

mod errors;
mod expand;
mod generics;
mod group;
mod model;
mod names;
mod options;

/// Declares an actor (on a struct) or collects its handlers (on its impl
/// block). See the crate documentation.
#[proc_macro_attribute]
pub fn actor(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = TokenStream2::from(args);
    let item = parse_macro_input!(item as Item);
    match item {
        Item::Struct(s) => options::expand_struct(args, s),
        Item::Enum(e) => options::expand_enum(args, e),
        Item::Impl(imp) => {
            if !args.is_empty() {
                let err = syn::Error::new_spanned(
                    &args,
                    "options go on the actor's struct, not on its impl block: `#[actor(...)] struct ...`",
                );
                return errors::with_item(strip_impl(imp), err).into();
            }
            match model::ActorImpl::parse(&imp) {
                Ok(model) => {
                    let mut out = strip_impl(imp).into_token_stream();
                    out.extend(expand::expand(&model));
                    out
                }
                Err(err) => {
                    let fallback = model::ActorImpl::fallback(&imp);
                    let mut out = errors::with_item(strip_impl(imp), err);
                    // An `Actor` impl with no handlers keeps `Ctx<Self>` in
                    // the user's signatures well-formed, so the errors above
                    // are the only ones reported.
                    out.extend(fallback.map(|m| expand::expand(&m)));
                    out
                }
            }
        }
        other => syn::Error::new_spanned(
            &other,
            "`#[actor]` goes on a struct (to declare an actor) or on its impl block (to collect its handlers)",
        )
        .to_compile_error(),
    }
    .into()
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

/// The impl block without the attributes `#[actor]` consumes.
fn strip_impl(mut imp: syn::ItemImpl) -> syn::ItemImpl {
    for item in &mut imp.items {
        if let syn::ImplItem::Fn(f) = item {
            if f.attrs.iter().any(|a| model::OwnAttr::of(a).is_some()) {
                // Already reported; left in, `async` would add a second,
                // confusing error about the elided lifetime in `Ctx<Self>`.
                f.sig.asyncness = None;
            }
            f.attrs.retain(|a| model::OwnAttr::of(a).is_none());
        }
    }
    imp
}
