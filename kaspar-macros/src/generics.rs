//! The one rule on generics: the types `#[actor]` and `#[group]` implement
//! traits for are concrete.

use quote::ToTokens;
use syn::Generics;

/// Whether `generics` declares anything: parameters or a `where` clause.
pub(crate) fn declared(generics: &Generics) -> bool {
    !generics.params.is_empty() || generics.where_clause.is_some()
}

/// The error for a generic actor or group type, spanned at its parameters
/// and its `where` clause; `None` for a concrete type.
pub(crate) fn reject(generics: &Generics) -> Option<syn::Error> {
    declared(generics).then(|| {
        // `Generics` prints its parameters only; the `where` clause sits
        // elsewhere in the item, and may be all there is.
        let mut written = generics.to_token_stream();
        generics.where_clause.to_tokens(&mut written);
        syn::Error::new_spanned(
            written,
            "generic actors and groups are not supported: the message enum and its dispatch are generated for one concrete type; wrap the generic state in a concrete type",
        )
    })
}
