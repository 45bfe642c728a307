//! What `#[actor]` and `#[group]` accept in the way of generics.
//!
//! An actor may have type and const parameters and a `where` clause: every
//! impl generated for it carries them. It may not have lifetime
//! parameters: an actor's state moves to another thread and lives until
//! the actor stops, so it borrows nothing. A group is concrete; its members
//! may be instances of generic actors.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{GenericParam, Generics, Ident};

/// Whether `generics` declares anything: parameters or a `where` clause.
pub(crate) fn declared(generics: &Generics) -> bool {
    !generics.params.is_empty() || generics.where_clause.is_some()
}

/// The error for each lifetime parameter of an actor's struct or impl
/// block, spanned at the lifetime.
pub(crate) fn reject_lifetimes(generics: &Generics) -> impl Iterator<Item = syn::Error> + '_ {
    generics.lifetimes().map(|lt| {
        syn::Error::new_spanned(
            lt,
            "an actor cannot have lifetime parameters: its state moves to the actor's thread and lives until the actor stops, so it must be `'static`; \
             own the data instead of borrowing it (`String`, `Vec<T>`, `Arc<T>`)",
        )
    })
}

/// The generics as written, parameters and `where` clause, to span an
/// error at. `Generics` prints its parameters only; the `where` clause
/// sits elsewhere in the item, and may be all there is.
pub(crate) fn written(generics: &Generics) -> proc_macro2::TokenStream {
    let mut written = generics.to_token_stream();
    generics.where_clause.to_tokens(&mut written);
    written
}

/// The error for a generic group, spanned at its parameters and its
/// `where` clause; `None` for a concrete group.
pub(crate) fn reject_group(generics: &Generics) -> Option<syn::Error> {
    declared(generics).then(|| {
        syn::Error::new_spanned(
            written(generics),
            "a `#[group]` cannot be generic: its message enum and its list of members are generated for one concrete set of actors; \
             declare a concrete group for each combination, whose members may be instances of generic actors (`quotes: Addr<Strategy<Linear>>`)",
        )
    })
}

/// The type and const parameters of `generics`, by name: the names a
/// type written inside the generic item can use to depend on them.
pub(crate) fn param_names(generics: &Generics) -> Vec<&Ident> {
    generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            GenericParam::Const(c) => Some(&c.ident),
            GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// Whether `tokens` (a type as written) names one of `params`. A token
/// match, so it errs towards yes (`other::P` counts as `P`); callers only
/// use a yes to add generics that cost nothing when unused.
pub(crate) fn mentions(tokens: TokenStream, params: &[&Ident]) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => params.iter().any(|p| i == **p),
        TokenTree::Group(g) => mentions(g.stream(), params),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}
