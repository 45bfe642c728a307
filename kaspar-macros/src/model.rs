//! Parse and validate an `#[actor]` impl block into a typed model.
//!
//! Every check runs and every error is collected (combined into one
//! `syn::Error`), so the user sees all their mistakes in one build. Spans
//! are those of the user's tokens.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, ReturnType, Type};

use crate::errors::Errors;
use crate::generics;

/// The attributes `#[actor]` consumes inside its impl block.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnAttr {
    Handler,
    Started,
    Stopped,
}

impl OwnAttr {
    pub(crate) fn of(attr: &syn::Attribute) -> Option<OwnAttr> {
        let last = attr.path().segments.last()?.ident.to_string();
        match last.as_str() {
            "handler" => Some(OwnAttr::Handler),
            "started" => Some(OwnAttr::Started),
            "stopped" => Some(OwnAttr::Stopped),
            _ => None,
        }
    }
}

/// How a handler takes `self`.
#[derive(Clone, Copy)]
pub(crate) enum Receiver {
    /// `&self`
    Shared(Span),
    /// `&mut self`
    Exclusive(Span),
}

pub(crate) struct HandlerModel {
    pub(crate) method: Ident,
    /// The message type from `#[handler(M)]`.
    pub(crate) msg: Type,
    /// The handler takes `&M` rather than `M`.
    pub(crate) by_ref: bool,
    pub(crate) receiver: Receiver,
    /// `None` for `()`.
    pub(crate) reply: Option<Type>,
}

pub(crate) struct HookModel {
    pub(crate) method: Ident,
    pub(crate) receiver: Receiver,
}

pub(crate) struct ActorImpl {
    pub(crate) self_ty: Type,
    pub(crate) ident: Ident,
    pub(crate) handlers: Vec<HandlerModel>,
    pub(crate) started: Option<HookModel>,
    pub(crate) stopped: Option<HookModel>,
}

impl ActorImpl {
    pub(crate) fn parse(imp: &ItemImpl) -> syn::Result<ActorImpl> {
        let mut errs = Errors::default();
        if let Some((_, path, _)) = &imp.trait_ {
            errs.spanned(
                path,
                "`#[actor]` goes on the actor's inherent impl block (`impl MyActor { ... }`), not on a trait impl",
            );
        }
        errs.extend(generics::reject(&imp.generics));
        let ident = match &*imp.self_ty {
            Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.clone()),
            _ => None,
        };
        let ident = match ident {
            Some(i) => i,
            None => {
                errs.spanned(
                    &imp.self_ty,
                    "`#[actor]` expects an impl block for a named struct",
                );
                Ident::new("__KasparInvalid", Span::call_site())
            }
        };

        let mut handlers: Vec<HandlerModel> = Vec::new();
        let mut started = None;
        let mut stopped = None;
        for item in &imp.items {
            let ImplItem::Fn(f) = item else { continue };
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
            let Some(&(kind, attr)) = own.first() else {
                continue;
            };
            match kind {
                OwnAttr::Handler => {
                    if let Some(h) = parse_handler(f, attr, &mut errs) {
                        if let Some(prev) = handlers.iter().find(|p| same_type(&p.msg, &h.msg)) {
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
                    let hook = parse_hook(f, attr, kind, &mut errs);
                    let slot = if kind == OwnAttr::Started {
                        &mut started
                    } else {
                        &mut stopped
                    };
                    if slot.is_some() {
                        errs.spanned(attr, "this lifecycle hook is already defined in this actor");
                    } else {
                        *slot = hook;
                    }
                }
            }
        }
        if handlers.len() > u16::MAX as usize - 1 {
            errs.spanned(&imp.self_ty, "too many handlers");
        }
        errs.finish()?;
        Ok(ActorImpl {
            self_ty: (*imp.self_ty).clone(),
            ident,
            handlers,
            started,
            stopped,
        })
    }
}

impl ActorImpl {
    /// The model of an impl block with no handlers and no hooks, for
    /// expanding alongside errors; `None` where the block is not a plain
    /// inherent impl of a named, non-generic type.
    pub(crate) fn fallback(imp: &ItemImpl) -> Option<ActorImpl> {
        if imp.trait_.is_some() || generics::declared(&imp.generics) {
            return None;
        }
        let ident = match &*imp.self_ty {
            Type::Path(p) if p.qself.is_none() => p.path.segments.last()?.ident.clone(),
            _ => return None,
        };
        Some(ActorImpl {
            self_ty: (*imp.self_ty).clone(),
            ident,
            handlers: Vec::new(),
            started: None,
            stopped: None,
        })
    }
}

fn same_type(a: &Type, b: &Type) -> bool {
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}

/// Checks what every `#[actor]` method shares: no `async`, no generics, a
/// `&self` / `&mut self` receiver.
fn check_common(f: &ImplItemFn, what: &str, errs: &mut Errors) -> Option<Receiver> {
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        errs.spanned(
            a,
            format!("{what} cannot be `async`: handlers run to completion under the actor's lock, inline on the caller's thread or on the actor's own"),
        );
    }
    if generics::declared(&sig.generics) {
        errs.spanned(
            &sig.generics,
            format!("{what} cannot be generic: each message type needs its own concrete handler"),
        );
    }
    match sig.inputs.first() {
        Some(FnArg::Receiver(r)) => {
            if r.reference.is_none() || r.colon_token.is_some() {
                errs.spanned(
                    r,
                    format!("{what} must take `&mut self` (or `&self` on a `#[actor(reentrant)]` actor): it borrows the actor's state, it cannot take `self` by value or as `self: Type`"),
                );
                None
            } else if r.mutability.is_some() {
                Some(Receiver::Exclusive(r.span()))
            } else {
                Some(Receiver::Shared(r.span()))
            }
        }
        _ => {
            errs.spanned(
                &sig.ident,
                format!("{what} must take `&mut self` (or `&self` on a `#[actor(reentrant)]` actor) as its first parameter"),
            );
            None
        }
    }
}

fn is_ctx(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) if r.mutability.is_some() => match &*r.elem {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Ctx"),
            _ => false,
        },
        _ => false,
    }
}

fn last_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// Whether the handler's parameter type names the attribute's message type.
/// Paths compare by their last segment, so `Ping` and `proto::Ping` agree
/// (the compiler checks what they resolve to); other types compare as
/// written.
fn same_message(param: &Type, msg: &Type) -> bool {
    match (last_ident(param), last_ident(msg)) {
        (Some(p), Some(m)) => p == m,
        _ => same_type(param, msg),
    }
}

const SIGNATURE: &str = "fn name(&mut self, msg: Msg, ctx: &mut Ctx<Self>) -> Reply";

fn parse_handler(f: &ImplItemFn, attr: &syn::Attribute, errs: &mut Errors) -> Option<HandlerModel> {
    let msg: Option<Type> = match &attr.meta {
        syn::Meta::List(list) => match syn::parse2::<Type>(list.tokens.clone()) {
            Ok(t) => Some(t),
            Err(_) => {
                errs.spanned(&list.tokens, "expected one message type: `#[handler(Msg)]`");
                None
            }
        },
        _ => {
            errs.spanned(
                attr,
                "name the message type this method handles: `#[handler(Msg)]`",
            );
            None
        }
    };
    let receiver = check_common(f, "a handler", errs);
    let sig = &f.sig;
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect();

    let mut by_ref = false;
    let mut ok = true;
    match typed.as_slice() {
        [m, c] => {
            if is_ctx(&m.ty) && !is_ctx(&c.ty) {
                errs.spanned(
                    &sig.inputs,
                    format!("parameters are in the wrong order: the message comes first, then the context: `{SIGNATURE}`"),
                );
                ok = false;
            } else {
                if !is_ctx(&c.ty) {
                    errs.spanned(
                        &c.ty,
                        format!("the second parameter must be the context, `ctx: &mut Ctx<Self>`: `{SIGNATURE}`"),
                    );
                    ok = false;
                }
                let (param_ty, r) = match &*m.ty {
                    Type::Reference(r) if r.mutability.is_none() => (&*r.elem, true),
                    t => (t, false),
                };
                by_ref = r;
                let by_mut_ref = matches!(&*m.ty, Type::Reference(r) if r.mutability.is_some());
                if by_mut_ref {
                    errs.spanned(
                        &m.ty,
                        "a handler takes its message by value (`msg: Msg`) or by shared reference (`msg: &Msg`), not `&mut Msg`",
                    );
                    ok = false;
                }
                if let Some(msg) = msg.as_ref().filter(|_| !by_mut_ref) {
                    if !same_message(param_ty, msg) {
                        errs.spanned(
                            &m.ty,
                            format!(
                                "this handler is declared for `{}` but its message parameter is `{}`; they must be the same type",
                                msg.to_token_stream(),
                                m.ty.to_token_stream()
                            ),
                        );
                        ok = false;
                    }
                }
            }
        }
        [only] => {
            let what = if is_ctx(&only.ty) {
                "the message parameter is missing"
            } else {
                "the context parameter is missing"
            };
            errs.spanned(&sig.inputs, format!("{what}: a handler is `{SIGNATURE}`"));
            ok = false;
        }
        [] => {
            errs.spanned(
                &sig.ident,
                format!("a handler takes the message and the context: `{SIGNATURE}`"),
            );
            ok = false;
        }
        [_, _, extra @ ..] => {
            for e in extra {
                errs.spanned(
                    e,
                    format!("unexpected parameter: a handler takes exactly the message and the context: `{SIGNATURE}`"),
                );
            }
            ok = false;
        }
    }
    let reply = match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, t) => match &**t {
            Type::ImplTrait(_) => {
                errs.spanned(
                    t,
                    "a handler's reply must be a concrete type, not `impl Trait`",
                );
                ok = false;
                None
            }
            Type::Tuple(tup) if tup.elems.is_empty() => None,
            t => Some(t.clone()),
        },
    };
    match (msg, receiver, ok) {
        (Some(msg), Some(receiver), true) => Some(HandlerModel {
            method: sig.ident.clone(),
            msg,
            by_ref,
            receiver,
            reply,
        }),
        _ => None,
    }
}

fn parse_hook(
    f: &ImplItemFn,
    attr: &syn::Attribute,
    kind: OwnAttr,
    errs: &mut Errors,
) -> Option<HookModel> {
    let name = if kind == OwnAttr::Started {
        "`#[started]`"
    } else {
        "`#[stopped]`"
    };
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        errs.spanned(attr, format!("{name} takes no arguments"));
    }
    let receiver = check_common(f, &format!("a {name} hook"), errs);
    let typed: Vec<&syn::PatType> = f
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let shape_ok = matches!(typed.as_slice(), [c] if is_ctx(&c.ty));
    if !shape_ok {
        errs.spanned(
            &f.sig.inputs,
            format!("a {name} hook is `fn name(&mut self, ctx: &mut Ctx<Self>)`"),
        );
    }
    if !matches!(f.sig.output, ReturnType::Default) {
        errs.spanned(&f.sig.output, format!("a {name} hook returns nothing"));
    }
    match (receiver, shape_ok) {
        (Some(receiver), true) => Some(HookModel {
            method: f.sig.ident.clone(),
            receiver,
        }),
        _ => None,
    }
}
