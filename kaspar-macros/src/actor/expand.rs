//! Turn `#[actor]` into code: on the struct, the `ActorConfig` impl; on
//! the impl block, from the validated [`ActorImpl`], the message enum (see
//! [`MessageEnum`]), the `Actor` impl (dispatch is a `match`), one
//! `Handler<M>` impl per handler (plus one that is never called, for an
//! actor with a single handler; see [`no_message_impl`]) and the
//! `ActorState` impl (see [`assumes_state`]).
//!
//! Every impl carries the generics it is generated from: the struct's for
//! `ActorConfig`, the impl block's for the others. A concrete actor's
//! expansion is exactly what it was before actors could be generic.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::{Generics, Ident, LitStr, Type, WhereClause};

use super::message::MessageEnum;
use super::model::{ActorImpl, HookModel, Receiver};
use super::options::Options;

/// `ActorConfig` for the struct or enum `ident` declared with `generics`,
/// from its options. `NAME` is the same for every instance of a generic
/// actor: the type's name without its arguments, as `type_name` is not a
/// `const fn`.
pub(super) fn config(ident: &Ident, generics: &Generics, opts: &Options) -> TokenStream {
    let p = quote!(::kaspar::__private);
    let access = if opts.reentrant {
        quote!(#p::Shared)
    } else {
        quote!(#p::Exclusive)
    };
    let name = match &opts.name {
        Some(n) => n.clone(),
        None => LitStr::new(&ident.to_string(), Span::call_site()),
    };
    let mailbox = match &opts.mailbox {
        Some(expr) => quote! {{
            #[allow(unused_imports)]
            use ::kaspar::mailbox::{MailboxKind, WhenFull};
            #p::Option::Some(#expr)
        }},
        None => quote!(#p::Option::None),
    };
    let policy = match opts.policy.as_ref().map(|p| &p.value) {
        Some(i) if i == "permissive" => quote!(#p::Option::Some(#p::CyclePolicy::Permissive)),
        Some(_) => quote!(#p::Option::Some(#p::CyclePolicy::Conservative)),
        None => quote!(#p::Option::None),
    };
    // Spanned at the struct: a state that is not `Send` (and not
    // thread-bound) is reported there, once.
    let home = if opts.thread_bound {
        quote_spanned!(ident.span()=> #p::OwnThread)
    } else {
        quote_spanned!(ident.span()=> #p::AnyThread)
    };
    let (impl_generics, ty_generics, user_where) = generics.split_for_impl();
    let assumes_state = assumes_state(user_where);
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::ActorConfig for #ident #ty_generics #assumes_state {
            type Access = #access;
            type Home = #home;
            const NAME: &'static str = #name;
            const MAILBOX: #p::Option<#p::MailboxKind> = #mailbox;
            const POLICY: #p::Option<#p::CyclePolicy> = #policy;
        }
    }
}

/// The expression that turns the runtime's `AccessRef` into what the method
/// takes. For `&mut self` it goes through `exclusive_ref`, whose bound fails
/// with a clear message, pointing at the receiver, on a reentrant actor.
fn receiver_conv(receiver: Receiver, this: &TokenStream) -> TokenStream {
    match receiver {
        Receiver::Exclusive(span) => {
            quote_spanned!(span=> ::kaspar::__private::exclusive_ref::<Self>(#this))
        }
        Receiver::Shared(span) => {
            quote_spanned!(span=> ::kaspar::__private::shared_ref::<Self>(#this))
        }
    }
}

/// The where clause of the impls generated for an actor, all but its
/// `ActorState` impl: the user's `where` clause, if any, and
/// `Self: ActorState`. `ActorConfig`, and so `Actor` and `Handler<M>`,
/// requires `Send + 'static`, and each impl would check it, reporting a
/// state that is not `Send` (or a type parameter that is not `'static`)
/// once per impl; assuming `ActorState`, whose impl checks both once, they
/// do not. That impl comes from the impl block, not
/// the struct, so that an impl block whose struct lacks `#[actor]` still
/// meets this clause and is reported for the missing `#[actor]` alone. The
/// binder keeps rustc from checking the clause at the impl, as it would a
/// bound with no generic parameters.
pub(super) fn assumes_state(user_where: Option<&WhereClause>) -> TokenStream {
    let user = user_where.into_iter().flat_map(|w| &w.predicates);
    quote!(where #(#user,)* for<'__kaspar> Self: ::kaspar::__private::ActorState)
}

/// The code for an `#[actor]` impl block, beside the block itself.
pub(super) fn impl_block(model: &ActorImpl) -> TokenStream {
    let p = quote!(::kaspar::__private);
    let self_ty = &model.self_ty;
    let (impl_generics, _, user_where) = model.generics.split_for_impl();
    let this = quote!(this);

    let msgs: Vec<&syn::Type> = model.handlers.iter().map(|h| &h.msg).collect();
    let replies: Vec<TokenStream> = model
        .handlers
        .iter()
        .map(|h| match &h.reply {
            Some(t) => t.to_token_stream(),
            None => quote!(()),
        })
        .collect();
    let class_names: Vec<String> = msgs
        .iter()
        .map(|m| m.to_token_stream().to_string().replace(' ', ""))
        .collect();
    let indices: Vec<u16> = (0..model.handlers.len() as u16).collect();
    let cfgs: Vec<&TokenStream> = model.handlers.iter().map(|h| &h.cfg).collect();
    // Where a handler may be configured out, its arm goes with it, and
    // with it the match could lose every arm, or its last but one: a
    // wildcard keeps the match whole whichever set is configured in.
    let configured_out = cfgs.iter().any(|c| !c.is_empty()).then(|| {
        quote! {
            #[allow(unreachable_patterns)]
            _ => #p::unreachable!("kaspar: a message of a handler configured out"),
        }
    });

    let message_enum = MessageEnum::new(model, &replies);
    let enum_ident = &message_enum.ident;
    let enum_ty = &message_enum.ty;
    let variants = &message_enum.variants;
    let phantom_by_ref = message_enum.phantom_arm(true);
    let phantom_by_value = message_enum.phantom_arm(false);

    let (class_of, dispatch) = if model.handlers.is_empty() {
        (quote!(match *msg {}), quote!(match msg {}))
    } else {
        (
            quote! {
                match msg {
                    #( #cfgs #enum_ident::#variants(..) => #p::ClassId::new(#indices), )*
                    #phantom_by_ref
                    #configured_out
                }
            },
            quote! {
                match msg {
                    #( #cfgs #enum_ident::#variants(m, reply) =>
                        reply.deliver(<Self as #p::Handler<#msgs>>::handle(this, m, ctx)), )*
                    #phantom_by_value
                    #configured_out
                }
            },
        )
    };

    let (packed_item, packing) = super::packed::packing(
        &message_enum,
        cfgs.iter().any(|c| !c.is_empty()),
        phantom_by_value.as_ref(),
        (&class_of, &dispatch),
    );

    let hook = |name: &str, h: &HookModel| -> TokenStream {
        let fn_name = Ident::new(name, Span::call_site());
        let method = &h.method;
        let cfg = &h.cfg;
        let conv = receiver_conv(h.receiver, &this);
        quote! {
            #cfg
            #[inline]
            fn #fn_name(this: #p::AccessRef<'_, Self>, ctx: &mut #p::Ctx<'_, Self>) {
                Self::#method(#conv, ctx)
            }
        }
    };
    let assumes_state = assumes_state(user_where);
    let mut started = TokenStream::new();
    for h in &model.started {
        let cfg = &h.cfg;
        started.extend(hook("started", h));
        started.extend(quote!(
            #cfg
            const HAS_STARTED: bool = true;
        ));
    }
    let stopped: TokenStream = model.stopped.iter().map(|h| hook("stopped", h)).collect();

    let actor_impl = quote! {
        #[automatically_derived]
        impl #impl_generics #p::Actor for #self_ty #assumes_state {
            type Msg = #enum_ty;
            const CLASSES: &'static [&'static str] = &[#(#class_names),*];

            #packing

            #[inline]
            fn class_of(msg: &Self::Msg) -> #p::ClassId {
                #class_of
            }

            #[inline]
            fn dispatch(
                this: #p::AccessRef<'_, Self>,
                msg: Self::Msg,
                ctx: &mut #p::Ctx<'_, Self>,
            ) {
                #dispatch
            }

            #started
            #stopped
        }
    };

    let handler_impls = model.handlers.iter().enumerate().map(|(i, h)| {
        let msg = &h.msg;
        let reply = &replies[i];
        let variant = &variants[i];
        let index = i as u16;
        let method = &h.method;
        let conv = receiver_conv(h.receiver, &this);
        let arg = if h.by_ref { quote!(&msg) } else { quote!(msg) };
        let open_fallback = if model.handlers.len() > 1 {
            // Unreachable where every other handler is configured out.
            let allow = configured_out
                .as_ref()
                .map(|_| quote!(#[allow(unreachable_patterns)]));
            Some(
                quote!(#allow _ => #p::unreachable!("kaspar: envelope opened as the wrong message type"),),
            )
        } else {
            phantom_by_value.clone()
        };
        let header = quote!(#impl_generics #p::Handler<#msg> for #self_ty #assumes_state);
        let body = quote! {
            type Reply = #reply;
            const CLASS: #p::ClassId = #p::ClassId::new(#index);

            #[inline(always)]
            fn handle(
                this: #p::AccessRef<'_, Self>,
                msg: #msg,
                ctx: &mut #p::Ctx<'_, Self>,
            ) -> Self::Reply {
                Self::#method(#conv, #arg, ctx)
            }

            #[inline(always)]
            fn envelope(msg: #msg, reply: #p::ReplyTo<Self::Reply>) -> Self::Msg {
                #enum_ident::#variant(msg, reply)
            }

            #[inline]
            fn open(env: Self::Msg) -> (#msg, #p::ReplyTo<Self::Reply>) {
                match env {
                    #enum_ident::#variant(msg, reply) => (msg, reply),
                    #open_fallback
                }
            }
        };
        // The impl's own span (not its contents') is the message type's:
        // rustc points there when it names the impl, as when two handlers'
        // message types can be the same type, or when it lists the
        // actor's handlers after a message it has none for.
        let span = syn::spanned::Spanned::span(msg);
        let cfg = &h.cfg;
        quote_spanned! {span=>
            #cfg
            #[automatically_derived]
            impl #header { #body }
        }
    });

    let no_message = match model.handlers.as_slice() {
        [only] if !may_be_any_type(&only.msg, &model.generics) => Some(no_message_impl(model)),
        _ => None,
    };

    // Checks, once, that the state is `Send + 'static`; see
    // `assumes_state`. Spanned at the actor's type, where rustc reports a
    // failing bound. A block with lifetime parameters, already reported,
    // gets none: it would only repeat that error in rustc's words.
    let borrows = model.generics.lifetimes().next().is_some();
    let state_impl = (!borrows).then(|| {
        quote_spanned! {syn::spanned::Spanned::span(self_ty)=>
            #[automatically_derived]
            impl #impl_generics ::kaspar::__private::ActorState for #self_ty #user_where {}
        }
    });

    let message_enum = &message_enum.definition;
    quote! {
        #message_enum
        #packed_item
        #state_impl
        #actor_impl
        #( #handler_impls )*
        #no_message
    }
}

/// For an actor with exactly one handler, a second `Handler` impl, for a
/// message that has no values. With only one impl, rustc would infer the
/// message type from it at every `send(msg)` and report a message the
/// actor does not handle as a type mismatch; with two it reports the
/// missing `Handler` impl, in `Handler`'s words. `do_not_recommend` keeps
/// this impl out of that error's list of the actor's handlers.
fn no_message_impl(model: &ActorImpl) -> TokenStream {
    let p = quote!(::kaspar::__private);
    let self_ty = &model.self_ty;
    let (impl_generics, _, user_where) = model.generics.split_for_impl();
    let assumes_state = assumes_state(user_where);
    quote! {
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        impl #impl_generics #p::Handler<#p::NoMessage> for #self_ty #assumes_state {
            type Reply = #p::NoMessage;
            // Past the one handler's class; no message ever has it.
            const CLASS: #p::ClassId = #p::ClassId::new(1);

            fn handle(
                _this: #p::AccessRef<'_, Self>,
                msg: #p::NoMessage,
                _ctx: &mut #p::Ctx<'_, Self>,
            ) -> Self::Reply {
                match msg {}
            }

            fn envelope(msg: #p::NoMessage, _reply: #p::ReplyTo<Self::Reply>) -> Self::Msg {
                match msg {}
            }

            fn open(_env: Self::Msg) -> (#p::NoMessage, #p::ReplyTo<Self::Reply>) {
                #p::unreachable!("kaspar: envelope opened as the wrong message type")
            }
        }
    }
}

/// Whether the message type `ty`, in an impl block declaring `generics`,
/// could be `NoMessage` for some choice of the parameters: a type
/// parameter (`M`), a projection from one (`P::Quote`) or a qualified path.
/// The second `Handler` impl would then overlap the handler's own, which
/// Rust refuses, so it is left out.
fn may_be_any_type(ty: &Type, generics: &Generics) -> bool {
    match ty {
        Type::Path(p) => {
            p.qself.is_some()
                || p.path.leading_colon.is_none()
                    && p.path
                        .segments
                        .first()
                        .is_some_and(|first| generics.type_params().any(|t| t.ident == first.ident))
        }
        Type::Paren(p) => may_be_any_type(&p.elem, generics),
        Type::Group(g) => may_be_any_type(&g.elem, generics),
        Type::Macro(_) => true,
        _ => false,
    }
}
