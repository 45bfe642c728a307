//! The options of `#[actor(...)]` on the struct or enum, documented on
//! the `actor` macro.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, LitStr, Meta, MetaNameValue, Token};

use crate::errors::Errors;

#[derive(Default)]
pub(super) struct Options {
    pub(super) reentrant: bool,
    pub(super) thread_bound: bool,
    pub(super) policy: Option<Policy>,
    pub(super) mailbox: Option<Expr>,
    pub(super) name: Option<LitStr>,
}

/// `policy = conservative` or `policy = permissive`.
pub(super) struct Policy {
    /// `conservative` or `permissive`.
    pub(super) value: Ident,
    /// The whole option, where its errors point.
    option: MetaNameValue,
}

impl Options {
    /// The options that parsed; those that did not are recorded in
    /// `errors`, so a misspelt option is reported without discarding the
    /// others.
    pub(super) fn parse(args: TokenStream, errors: &mut Errors) -> Options {
        let mut opts = Options::default();
        let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                return opts;
            }
        };
        let mut seen: Vec<String> = Vec::new();
        for meta in metas {
            let key = meta.path().get_ident().map(|i| i.to_string());
            if let Some(key) = &key {
                // Given twice, the last would win without a word.
                if seen.contains(key) {
                    errors.spanned(&meta, format!("option `{key}` is given twice"));
                    continue;
                }
                seen.push(key.clone());
            }
            match (key.as_deref(), &meta) {
                (Some("reentrant"), Meta::Path(_)) => opts.reentrant = true,
                (Some("thread_bound"), Meta::Path(_)) => opts.thread_bound = true,
                (Some("policy"), Meta::NameValue(nv)) => match &nv.value {
                    Expr::Path(p)
                        if p.path.is_ident("conservative") || p.path.is_ident("permissive") =>
                    {
                        opts.policy = p.path.get_ident().map(|value| Policy {
                            value: value.clone(),
                            option: nv.clone(),
                        });
                    }
                    other => errors.spanned(
                        other,
                        "expected `policy = conservative` or `policy = permissive`",
                    ),
                },
                (Some("mailbox"), Meta::NameValue(nv)) => opts.mailbox = Some(nv.value.clone()),
                (Some("name"), Meta::NameValue(nv)) => match &nv.value {
                    Expr::Lit(l) => match &l.lit {
                        Lit::Str(s) if s.value().is_empty() => {
                            errors.spanned(s, "an actor's name cannot be empty")
                        }
                        Lit::Str(s) => opts.name = Some(s.clone()),
                        other => errors.spanned(other, "expected `name = \"...\"`"),
                    },
                    other => errors.spanned(other, "expected `name = \"...\"`"),
                },
                (Some("remote"), Meta::Path(_)) => errors.spanned(
                    &meta,
                    "`remote` goes on the actor's impl block, which lists the handlers the remote table is built from: `#[actor(remote)] impl ...`",
                ),
                (Some("msg"), Meta::NameValue(_)) => errors.spanned(
                    &meta,
                    "`msg` goes on the actor's impl block, whose handlers the message enum is made of: `#[actor(msg = Name)] impl ...`",
                ),
                _ => errors.spanned(
                    &meta,
                    "unknown `#[actor]` option; expected `reentrant`, `thread_bound`, `policy = ...`, `mailbox = ...` or `name = \"...\"`",
                ),
            }
        }
        opts.check_policy(errors);
        opts
    }

    /// The permissive policy only lets an actor be re-entered with a
    /// different message class, and only a `reentrant` actor is ever
    /// re-entered: on any other it would silently do nothing.
    fn check_policy(&self, errors: &mut Errors) {
        let permissive = self.policy.as_ref().filter(|p| p.value == "permissive");
        if let Some(policy) = permissive.filter(|_| !self.reentrant) {
            errors.spanned(
                &policy.option,
                "`policy = permissive` does nothing on an actor that is not `reentrant`: it only lets an actor be re-entered with a different message, \
                 and an actor whose handlers take `&mut self` is never re-entered under any policy (a second `&mut` to its state would be undefined behaviour); \
                 write `#[actor(reentrant, policy = permissive)]` and give the handlers `&self`, keeping mutable state in `Cell`, `RefCell` or atomics, or remove `policy = permissive`",
            );
        }
    }
}
