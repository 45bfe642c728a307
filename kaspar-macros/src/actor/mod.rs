//! `#[actor]`, by stage.
//!
//! On a struct or enum it declares the actor: `options` parses the
//! attribute, the one validation is that the type has no lifetime
//! parameters, and `expand::config` implements `ActorConfig`.
//!
//! On the impl block it collects the handlers: `parse` walks the block and
//! reads the attributes, `validate` checks each method's signature, and
//! together they build the typed `model`, from which `expand::impl_block`
//! generates the message enum, the `Actor` impl and the `Handler<M>` impls.

mod expand;
mod message;
mod model;
mod options;
mod packed;
mod parse;
mod remote;
mod validate;

#[cfg(test)]
mod golden;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Generics, Ident, ImplItem, Item, ItemImpl};

use self::model::ActorImpl;
use self::options::Options;
use self::parse::OwnAttr;
use crate::errors::{with_item, Errors};
use crate::generics;

pub(crate) fn expand(args: TokenStream, item: Item) -> TokenStream {
    match item {
        Item::Struct(s) => declare(args, &s.ident, &s.generics, &s),
        Item::Enum(e) => declare(args, &e.ident, &e.generics, &e),
        Item::Impl(imp) => collect(args, imp),
        other => syn::Error::new_spanned(
            &other,
            "`#[actor]` goes on a struct (to declare an actor) or on its impl block (to collect its handlers)",
        )
        .to_compile_error(),
    }
}

/// `#[actor(...)]` on the actor's struct or enum.
fn declare(
    args: TokenStream,
    ident: &Ident,
    generics: &Generics,
    item: impl ToTokens,
) -> TokenStream {
    let mut errors = Errors::default();
    errors.extend(generics::reject_lifetimes(generics));
    let options = Options::parse(args, &mut errors);
    // A bad option or a lifetime parameter is reported, and the actor is
    // still declared with the options that did parse, so the impl block and
    // every use of the actor type-check and that error is the only one.
    let config = expand::config(ident, generics, &options);
    let errors = errors.finish().err().map(syn::Error::into_compile_error);
    quote!(#item #config #errors)
}

/// `#[actor]` on the actor's impl block.
fn collect(args: TokenStream, imp: ItemImpl) -> TokenStream {
    let ImplArgs { remote, msg, bad } = impl_args(args);
    match ActorImpl::parse(&imp).and_then(|m| remote::check(&m, remote).map(|()| m)) {
        Ok(mut model) => {
            model.msg_name = msg;
            let mut out = emitted(imp).into_token_stream();
            out.extend(expand::impl_block(&model));
            if remote {
                out.extend(remote::expand(&model));
            }
            // Misplaced options are reported; the handlers are collected
            // all the same, so that error is the only one.
            out.extend(bad.map(syn::Error::into_compile_error));
            out
        }
        Err(mut err) => {
            if let Some(bad) = bad {
                err.combine(bad);
            }
            let fallback = ActorImpl::fallback(&imp).map(|mut m| {
                m.msg_name = msg;
                m
            });
            let mut out = with_item(emitted(imp), err);
            // An `Actor` impl with no handlers keeps `Ctx<Self>` in the
            // user's signatures well-formed, so the errors above are the
            // only ones reported.
            out.extend(fallback.map(|m| expand::impl_block(&m)));
            out
        }
    }
}

/// What `#[actor(...)]` on an impl block says.
struct ImplArgs {
    /// `remote`: the handlers form a remote table too.
    remote: bool,
    /// `msg = Name`: the message enum's name.
    msg: Option<Ident>,
    /// What was wrong with them, if anything.
    bad: Option<syn::Error>,
}

/// Parses `#[actor(...)]` on an impl block: `remote` and `msg = Name`, in
/// any order, a trailing comma allowed, or nothing. Any other word is an
/// option meant for the struct, reported (the block is then collected as
/// if it had none); an option written wrong (`msg` without a name,
/// `remote` with a value) or given twice is reported where it is.
fn impl_args(args: TokenStream) -> ImplArgs {
    use syn::parse::Parser;
    let mut out = ImplArgs {
        remote: false,
        msg: None,
        bad: None,
    };
    if args.is_empty() {
        return out;
    }
    let mut remote = false;
    let mut msg: Option<Ident> = None;
    let mut misplaced = false;
    let parsed = syn::meta::parser(|meta| {
        if meta.path.is_ident("remote") {
            if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                return Err(meta.error("`remote` takes no value: `#[actor(remote)]`"));
            }
            if remote {
                return Err(meta.error("`remote` is given twice"));
            }
            remote = true;
            Ok(())
        } else if meta.path.is_ident("msg") {
            crate::names::msg_option(
                &meta,
                &mut msg,
                "`msg` names the message enum with an identifier: `#[actor(msg = CounterMessage)]`",
            )
        } else {
            misplaced = true;
            Err(meta.error("misplaced"))
        }
    })
    .parse2(args.clone());
    match parsed {
        Ok(()) => {
            out.remote = remote;
            out.msg = msg;
        }
        Err(_) if misplaced => {
            out.bad = Some(syn::Error::new_spanned(
                &args,
                "options go on the actor's struct, not on its impl block: `#[actor(...)] struct ...`; \
                 the impl block takes only `remote` and `msg = Name`",
            ));
        }
        Err(e) => {
            // An option written wrong, or twice: what was read before it
            // still applies (a `msg` given twice keeps its first name), so
            // the user's code that names the enum raises no further
            // errors.
            out.remote = remote;
            out.msg = msg;
            out.bad = Some(e);
        }
    }
    out
}

/// The impl block as `#[actor]` emits it: without the attributes it
/// consumes, and, where the block is generic, assuming `ActorState`.
///
/// `Ctx<Self>` in a handler's signature needs `Self: Actor`, and so
/// `Self: 'static`. In a generic block whose parameters lack `'static`,
/// rustc would report that at every handler, beside the `ActorState` impl
/// that reports it once; assuming `ActorState` (as the generated impls do)
/// leaves that one report. The clause takes nothing away: the `ActorState`
/// impl has the block's own generics, so it holds wherever the block
/// applies.
fn emitted(imp: ItemImpl) -> ItemImpl {
    let mut imp = strip_impl(imp);
    if !imp.generics.params.is_empty() {
        imp.generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(for<'__kaspar> Self: ::kaspar::__private::ActorState));
    }
    imp
}

/// The impl block without the attributes `#[actor]` consumes.
fn strip_impl(mut imp: ItemImpl) -> ItemImpl {
    for item in &mut imp.items {
        match item {
            ImplItem::Fn(f) => {
                if f.attrs.iter().any(|a| OwnAttr::of(a).is_some()) {
                    // Already reported; left in, `async` would add a
                    // second, confusing error about the elided lifetime in
                    // `Ctx<Self>`.
                    f.sig.asyncness = None;
                }
                f.attrs
                    .retain(|a| OwnAttr::of(a).is_none() && !OwnAttr::wrapped(a));
            }
            // On anything else they were reported by the parse.
            ImplItem::Const(c) => c.attrs.retain(|a| OwnAttr::of(a).is_none()),
            ImplItem::Type(t) => t.attrs.retain(|a| OwnAttr::of(a).is_none()),
            ImplItem::Macro(m) => m.attrs.retain(|a| OwnAttr::of(a).is_none()),
            _ => {}
        }
    }
    imp
}
