//! `#[actor(...)]` on the struct: parse the options, implement
//! `ActorConfig`.
//!
//! Options:
//! * `reentrant`: handlers take `&self`; the actor may be re-entered under
//!   the permissive cycle policy;
//! * `policy = conservative | permissive`: this actor's cycle policy;
//! * `mailbox = <expr>`: a `MailboxKind` expression (`MailboxKind` is in
//!   scope), e.g. `mailbox = MailboxKind::BQueue { capacity: 64 }`;
//! * `name = "..."`: the name used in errors and metrics.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Lit, Meta, Token};

use crate::errors::Errors;
use crate::generics;

#[derive(Default)]
struct Options {
    reentrant: bool,
    policy: Option<Ident>,
    mailbox: Option<Expr>,
    name: Option<syn::LitStr>,
}

/// The options that parsed; those that did not are recorded in `errors`,
/// so a misspelt option is reported without discarding the others.
fn parse_options(args: TokenStream, errors: &mut Errors) -> Options {
    let mut opts = Options::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
        Ok(m) => m,
        Err(e) => {
            errors.push(e);
            return opts;
        }
    };
    for meta in metas {
        let key = meta.path().get_ident().map(|i| i.to_string());
        match (key.as_deref(), &meta) {
            (Some("reentrant"), Meta::Path(_)) => opts.reentrant = true,
            (Some("policy"), Meta::NameValue(nv)) => match &nv.value {
                Expr::Path(p)
                    if p.path.is_ident("conservative") || p.path.is_ident("permissive") =>
                {
                    opts.policy = p.path.get_ident().cloned();
                }
                other => errors.spanned(
                    other,
                    "expected `policy = conservative` or `policy = permissive`",
                ),
            },
            (Some("mailbox"), Meta::NameValue(nv)) => opts.mailbox = Some(nv.value.clone()),
            (Some("name"), Meta::NameValue(nv)) => match &nv.value {
                Expr::Lit(l) => match &l.lit {
                    Lit::Str(s) => opts.name = Some(s.clone()),
                    other => errors.spanned(other, "expected `name = \"...\"`"),
                },
                other => errors.spanned(other, "expected `name = \"...\"`"),
            },
            _ => errors.spanned(
                &meta,
                "unknown `#[actor]` option; expected `reentrant`, `policy = ...`, `mailbox = ...` or `name = \"...\"`",
            ),
        }
    }
    opts
}

pub(crate) fn expand_struct(args: TokenStream, item: syn::ItemStruct) -> TokenStream {
    expand_type(args, &item.ident, &item.generics, item.to_token_stream())
}

pub(crate) fn expand_enum(args: TokenStream, item: syn::ItemEnum) -> TokenStream {
    expand_type(args, &item.ident, &item.generics, item.to_token_stream())
}

fn expand_type(
    args: TokenStream,
    ident: &Ident,
    generics: &syn::Generics,
    item: TokenStream,
) -> TokenStream {
    let mut errors = Errors::default();
    let generic = generics::reject(generics);
    let concrete = generic.is_none();
    errors.extend(generic);
    let opts = parse_options(args, &mut errors);
    let errors = errors.finish().err().map(syn::Error::into_compile_error);
    if !concrete {
        return quote!(#item #errors);
    }
    // A bad option is reported, and the actor is still declared with the
    // options that did parse, so the impl block and every use of the actor
    // type-check and the option's error is the only one.
    let p = quote!(::kaspar::__private);
    let access = if opts.reentrant {
        quote!(#p::Shared)
    } else {
        quote!(#p::Exclusive)
    };
    let name = match &opts.name {
        Some(n) => n.clone(),
        None => syn::LitStr::new(&ident.to_string(), Span::call_site()),
    };
    let mailbox = match &opts.mailbox {
        Some(expr) => quote! {{
            #[allow(unused_imports)]
            use ::kaspar::mailbox::{MailboxKind, WhenFull};
            #p::Option::Some(#expr)
        }},
        None => quote!(#p::Option::None),
    };
    let policy = match &opts.policy {
        Some(i) if i == "permissive" => quote!(#p::Option::Some(#p::CyclePolicy::Permissive)),
        Some(_) => quote!(#p::Option::Some(#p::CyclePolicy::Conservative)),
        None => quote!(#p::Option::None),
    };
    quote! {
        #item

        impl #p::ActorConfig for #ident {
            type Access = #access;
            const NAME: &'static str = #name;
            const MAILBOX: #p::Option<#p::MailboxKind> = #mailbox;
            const POLICY: #p::Option<#p::CyclePolicy> = #policy;
        }

        #errors
    }
}
