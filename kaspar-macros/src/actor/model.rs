//! The typed model of an `#[actor]` impl block: what `parse` and
//! `validate` build and all that `expand` reads. It holds only what passed
//! every check, and keeps the user's tokens (and so their spans), so an
//! error the compiler finds in the generated code points at the user's.

use proc_macro2::{Span, TokenStream};
use syn::{Generics, Ident, Type};

/// How a handler takes `self`.
#[derive(Clone, Copy)]
pub(super) enum Receiver {
    /// `&self`
    Shared(Span),
    /// `&mut self`
    Exclusive(Span),
}

pub(super) struct HandlerModel {
    pub(super) method: Ident,
    /// The message type from `#[handler(M)]`.
    pub(super) msg: Type,
    /// The handler takes `&M` rather than `M`.
    pub(super) by_ref: bool,
    pub(super) receiver: Receiver,
    /// `None` for `()`.
    pub(super) reply: Option<Type>,
    /// `#[handler(M, local)]`: kept out of the remote table; the span of
    /// `local`.
    pub(super) local: Option<Span>,
    /// The method's `#[cfg(..)]` attributes, carried by everything
    /// generated for it (see `parse::cfgs`); empty for most.
    pub(super) cfg: TokenStream,
}

pub(super) struct HookModel {
    pub(super) method: Ident,
    pub(super) receiver: Receiver,
    /// As [`HandlerModel::cfg`].
    pub(super) cfg: TokenStream,
}

pub(super) struct ActorImpl {
    /// The impl block's parameters and `where` clause, carried by every
    /// impl generated from it. Lifetimes only in the model of a block
    /// already reported for them (`ActorImpl::fallback`).
    pub(super) generics: Generics,
    pub(super) self_ty: Type,
    pub(super) ident: Ident,
    /// `#[actor(msg = Name)]` on the impl block: the message enum's name,
    /// where the default `<Actor>Msg` would collide with a type of the
    /// user's.
    pub(super) msg_name: Option<Ident>,
    pub(super) handlers: Vec<HandlerModel>,
    /// At most one, or several under different `cfg`s.
    pub(super) started: Vec<HookModel>,
    /// As `started`.
    pub(super) stopped: Vec<HookModel>,
}
