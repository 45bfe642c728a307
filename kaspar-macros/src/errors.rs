//! Collecting mistakes instead of stopping at the first: every check runs,
//! so the user sees all of them in one build.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The mistakes found so far, combined into one `syn::Error` that still
/// reports each at its own span.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Records `message` at the span of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(all) => Err(all),
            None => Ok(()),
        }
    }
}

impl Extend<syn::Error> for Errors {
    fn extend<I: IntoIterator<Item = syn::Error>>(&mut self, errors: I) {
        for error in errors {
            self.push(error);
        }
    }
}

/// The user's item followed by the errors, as tokio's macros do: with the
/// item still there, IDEs keep completing and the rest of the crate does
/// not fail on a missing type.
pub(crate) fn with_item(item: impl ToTokens, error: syn::Error) -> TokenStream {
    let mut out = item.into_token_stream();
    out.extend(error.into_compile_error());
    out
}
