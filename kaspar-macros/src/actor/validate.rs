//! Check the signature of each method `parse` found against the one the
//! generated code calls, and lower a method that matches into the model.
//! A signature can be wrong in several ways at once; each is reported.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ImplItemFn, PatType, ReturnType, Signature, Type};

use super::model::{HandlerModel, HookModel, Receiver};
use crate::errors::Errors;
use crate::generics;

const SIGNATURE: &str = "fn name(&mut self, msg: Msg, ctx: &mut Ctx<Self>) -> Reply";

/// A `#[handler(msg)]` method; `msg` is `None` where the attribute did not
/// name one type (already reported), and the signature is still checked.
pub(super) fn handler(
    f: &ImplItemFn,
    msg: Option<Type>,
    errs: &mut Errors,
) -> Option<HandlerModel> {
    let receiver = check_common(f, "a handler", errs);
    let sig = &f.sig;
    let typed = typed_params(sig);

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
                if let Some(Type::Reference(attr_ref)) = msg.as_ref() {
                    // `msg: &M` already means "borrow the message `M`", so
                    // a reference named as the message type can never
                    // match its parameter: say what to write instead of
                    // "declared for `&M` but the parameter is `&M`".
                    let elem = attr_ref.elem.to_token_stream();
                    let unsized_elem = matches!(&*attr_ref.elem, Type::Slice(_))
                        || matches!(&*attr_ref.elem, Type::Path(p) if p.path.is_ident("str"));
                    let text = if unsized_elem {
                        "a message is an owned, sized type, not a borrowed `str` or slice: send it owned (`String`, `Vec<_>`), or wrap the reference in a message type of its own (`struct Line(&'static str)`)".to_owned()
                    } else {
                        format!(
                            "name the message type itself, not a reference to it: `#[handler({elem})]`, and take `msg: &{elem}` to borrow it in the handler"
                        )
                    };
                    errs.spanned(attr_ref, text);
                    ok = false;
                } else if let Some(msg) = msg.as_ref().filter(|_| !by_mut_ref) {
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
            local: None,
            cfg: super::parse::cfgs(f),
        }),
        _ => None,
    }
}

/// A `#[started]` or `#[stopped]` method; `name` is the attribute, as
/// the errors spell it.
pub(super) fn hook(f: &ImplItemFn, name: &str, errs: &mut Errors) -> Option<HookModel> {
    let receiver = check_common(f, &format!("a {name} hook"), errs);
    let typed = typed_params(&f.sig);
    let shape_ok = matches!(typed.as_slice(), [c] if is_ctx(&c.ty));
    if !shape_ok {
        errs.spanned(
            &f.sig.inputs,
            format!("a {name} hook is `fn name(&mut self, ctx: &mut Ctx<Self>)`"),
        );
    }
    // Nothing, or `-> ()` written out, as a handler may.
    let unit = match &f.sig.output {
        ReturnType::Default => true,
        ReturnType::Type(_, t) => matches!(&**t, Type::Tuple(t) if t.elems.is_empty()),
    };
    if !unit {
        errs.spanned(&f.sig.output, format!("a {name} hook returns nothing"));
    }
    match (receiver, shape_ok) {
        (Some(receiver), true) => Some(HookModel {
            method: f.sig.ident.clone(),
            receiver,
            cfg: super::parse::cfgs(f),
        }),
        _ => None,
    }
}

/// Checks what every `#[actor]` method shares: no `async`, no generics, a
/// `&self` / `&mut self` receiver; the receiver when it is one of those.
fn check_common(f: &ImplItemFn, what: &str, errs: &mut Errors) -> Option<Receiver> {
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        errs.spanned(
            a,
            format!("{what} cannot be `async`: handlers run to completion under the actor's lock, inline on the caller's thread or on the actor's own"),
        );
    }
    if let Some(u) = &sig.unsafety {
        errs.spanned(
            u,
            format!("{what} cannot be `unsafe`: the runtime calls it for every message it dispatches, with no caller to uphold a safety contract; keep the `unsafe` block inside a safe method"),
        );
    }
    if generics::declared(&sig.generics) {
        // Spanned at the parameters and the `where` clause: the latter
        // may be all there is, and `Generics` alone prints nothing then.
        errs.spanned(
            generics::written(&sig.generics),
            format!(
                "{what} cannot be generic: the generated dispatch calls it with one concrete type"
            ),
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

fn typed_params(sig: &Signature) -> Vec<&PatType> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(t) => Some(t),
            FnArg::Receiver(_) => None,
        })
        .collect()
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

pub(super) fn last_ident(ty: &Type) -> Option<&Ident> {
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

pub(super) fn same_type(a: &Type, b: &Type) -> bool {
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}
