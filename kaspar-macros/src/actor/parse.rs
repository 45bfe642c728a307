//! Read an `#[actor]` impl block into the model: find the methods that
//! carry `#[handler(M)]`, `#[started]` or `#[stopped]`, read those
//! attributes, and keep each method whose signature `validate` accepts.
//! A mistake is recorded and the walk goes on, so one build reports all.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, ImplItem, ImplItemFn, ItemImpl, Meta, Type};

use super::model::{ActorImpl, HandlerModel, HookModel};
use super::validate::{self, last_ident, same_type};
use crate::errors::Errors;
use crate::generics;

/// The attributes `#[actor]` consumes inside its impl block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OwnAttr {
    Handler,
    Started,
    Stopped,
}

impl OwnAttr {
    pub(super) fn of(attr: &Attribute) -> Option<OwnAttr> {
        let last = attr.path().segments.last()?.ident.to_string();
        match last.as_str() {
            "handler" => Some(OwnAttr::Handler),
            "started" => Some(OwnAttr::Started),
            "stopped" => Some(OwnAttr::Stopped),
            _ => None,
        }
    }

    /// Whether `attr` is `#[cfg_attr(pred, ..)]` applying one of these.
    /// `#[actor]` reads its block before `cfg_attr` is applied, so it
    /// cannot see the attribute; the parse says so.
    pub(super) fn wrapped(attr: &Attribute) -> bool {
        if !attr.path().is_ident("cfg_attr") {
            return false;
        }
        let Meta::List(list) = &attr.meta else {
            return false;
        };
        Punctuated::<Meta, syn::Token![,]>::parse_terminated
            .parse2(list.tokens.clone())
            .is_ok_and(|metas| {
                metas.iter().skip(1).any(|m| {
                    let last = m.path().segments.last().map(|s| s.ident.to_string());
                    matches!(last.as_deref(), Some("handler" | "started" | "stopped"))
                })
            })
    }
}

/// The `#[cfg(..)]` attributes of a handler or hook. An attribute macro
/// gets its item before `cfg` is evaluated inside it, so a method that
/// will be configured out is still in the block `#[actor]` reads; what is
/// generated for it carries the same attributes and goes with it.
pub(super) fn cfgs(f: &ImplItemFn) -> TokenStream {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(ToTokens::to_token_stream)
        .collect()
}

impl ActorImpl {
    pub(super) fn parse(imp: &ItemImpl) -> syn::Result<ActorImpl> {
        let mut errs = Errors::default();
        if let Some((_, path, _)) = &imp.trait_ {
            errs.spanned(
                path,
                "`#[actor]` goes on the actor's inherent impl block (`impl MyActor { ... }`), not on a trait impl",
            );
        }
        errs.extend(generics::reject_lifetimes(&imp.generics));
        let ident = match last_ident(&imp.self_ty) {
            Some(i) => i.clone(),
            None => {
                errs.spanned(
                    &imp.self_ty,
                    "`#[actor]` expects an impl block for a named struct",
                );
                // Never expanded: the error above fails the parse.
                Ident::new("__KasparInvalid", Span::call_site())
            }
        };

        let mut handlers: Vec<HandlerModel> = Vec::new();
        let mut started: Vec<HookModel> = Vec::new();
        let mut stopped: Vec<HookModel> = Vec::new();
        for item in &imp.items {
            let ImplItem::Fn(f) = item else {
                // `#[handler]` on a const or an associated type: said here,
                // where the block is known to be an actor's (left to the
                // attribute itself, it would ask for an `#[actor]` block).
                if let Some(attr) = own_attr_of(item) {
                    errs.spanned(
                        attr,
                        "`#[handler(..)]`, `#[started]` and `#[stopped]` go on a method of the `#[actor]` impl block",
                    );
                }
                continue;
            };
            let own: Vec<_> = f
                .attrs
                .iter()
                .filter_map(|a| OwnAttr::of(a).map(|k| (k, a)))
                .collect();
            if own.len() > 1 {
                errs.spanned(
                    own[1].1,
                    "a method can carry only one of `#[handler(..)]`, `#[started]`, `#[stopped]`",
                );
                continue;
            }
            if let Some(wrapped) = f.attrs.iter().find(|a| OwnAttr::wrapped(a)) {
                errs.spanned(
                    wrapped,
                    "`#[actor]` reads its impl block before `cfg_attr` is applied, so it cannot see this; write `#[cfg(..)]` on the method and the attribute beside it",
                );
                continue;
            }
            let Some(&(kind, attr)) = own.first() else {
                continue;
            };
            match kind {
                OwnAttr::Handler => {
                    if let Some(h) = handler(f, attr, &mut errs) {
                        // Two handlers of one message may stand under
                        // different `cfg`s; where both can be configured
                        // in, rustc reports their two `Handler` impls.
                        let clash = |p: &&HandlerModel| {
                            same_type(&p.msg, &h.msg) && (p.cfg.is_empty() || h.cfg.is_empty())
                        };
                        if let Some(prev) = handlers.iter().find(clash) {
                            errs.spanned(
                                attr,
                                format!(
                                    "`{}` already has a handler in this actor (`{}`); each message type gets exactly one",
                                    h.msg.to_token_stream(),
                                    prev.method
                                ),
                            );
                        } else {
                            handlers.push(h);
                        }
                    }
                }
                OwnAttr::Started | OwnAttr::Stopped => {
                    let parsed = hook(f, attr, kind, &mut errs);
                    let hooks = if kind == OwnAttr::Started {
                        &mut started
                    } else {
                        &mut stopped
                    };
                    // As for handlers: several only under `cfg`s.
                    let clash = !hooks.is_empty()
                        && (cfgs(f).is_empty() || hooks.iter().any(|h| h.cfg.is_empty()));
                    if clash {
                        errs.spanned(attr, "this lifecycle hook is already defined in this actor");
                    } else if let Some(h) = parsed {
                        hooks.push(h);
                    }
                }
            }
        }
        if handlers.len() > u16::MAX as usize - 1 {
            errs.spanned(&imp.self_ty, "too many handlers");
        }
        errs.finish()?;
        Ok(ActorImpl {
            generics: imp.generics.clone(),
            self_ty: (*imp.self_ty).clone(),
            ident,
            msg_name: None,
            handlers,
            started,
            stopped,
        })
    }

    /// The model of an impl block with no handlers and no hooks, for
    /// expanding alongside errors; `None` where the block is not an
    /// inherent impl of a named type.
    pub(super) fn fallback(imp: &ItemImpl) -> Option<ActorImpl> {
        if imp.trait_.is_some() {
            return None;
        }
        Some(ActorImpl {
            generics: imp.generics.clone(),
            self_ty: (*imp.self_ty).clone(),
            ident: last_ident(&imp.self_ty)?.clone(),
            msg_name: None,
            handlers: Vec::new(),
            started: Vec::new(),
            stopped: Vec::new(),
        })
    }
}

fn handler(f: &ImplItemFn, attr: &Attribute, errs: &mut Errors) -> Option<HandlerModel> {
    let mut local = None;
    let msg: Option<Type> = match &attr.meta {
        // `#[handler()]`: nothing to span but the attribute.
        Meta::List(list) if list.tokens.is_empty() => {
            errs.spanned(
                attr,
                "name the message type this method handles: `#[handler(Msg)]`",
            );
            None
        }
        Meta::List(list) => match syn::parse2::<Type>(list.tokens.clone()) {
            Ok(t) => Some(t),
            Err(_) => match handler_args.parse2(list.tokens.clone()) {
                Ok((t, span)) => {
                    local = span;
                    Some(t)
                }
                Err(_) => {
                    errs.spanned(&list.tokens, "expected one message type: `#[handler(Msg)]`");
                    None
                }
            },
        },
        _ => {
            errs.spanned(
                attr,
                "name the message type this method handles: `#[handler(Msg)]`",
            );
            None
        }
    };
    let mut handler = validate::handler(f, msg, errs)?;
    handler.local = local;
    Some(handler)
}

/// `M,` (a trailing comma), or `M, local` (a trailing comma allowed): a
/// handler kept out of the remote table of an `#[actor(remote)]` impl
/// block. Returns the span of `local`, if given.
fn handler_args(input: syn::parse::ParseStream<'_>) -> syn::Result<(Type, Option<Span>)> {
    let ty: Type = input.parse()?;
    input.parse::<syn::Token![,]>()?;
    if input.is_empty() {
        return Ok((ty, None));
    }
    let flag: Ident = input.parse()?;
    if flag != "local" {
        return Err(syn::Error::new(flag.span(), "expected `local`"));
    }
    let _: Option<syn::Token![,]> = input.parse()?;
    if !input.is_empty() {
        return Err(input.error("unexpected tokens"));
    }
    Ok((ty, Some(flag.span())))
}

fn hook(f: &ImplItemFn, attr: &Attribute, kind: OwnAttr, errs: &mut Errors) -> Option<HookModel> {
    let name = if kind == OwnAttr::Started {
        "`#[started]`"
    } else {
        "`#[stopped]`"
    };
    if !matches!(attr.meta, Meta::Path(_)) {
        errs.spanned(attr, format!("{name} takes no arguments"));
    }
    validate::hook(f, name, errs)
}

/// The first attribute `#[actor]` consumes on an impl item that is not a
/// method, if it carries one.
fn own_attr_of(item: &ImplItem) -> Option<&Attribute> {
    let attrs = match item {
        ImplItem::Const(c) => &c.attrs,
        ImplItem::Type(t) => &t.attrs,
        ImplItem::Macro(m) => &m.attrs,
        _ => return None,
    };
    attrs.iter().find(|a| OwnAttr::of(a).is_some())
}
