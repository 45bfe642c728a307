//! `#[actor(remote)]` on the impl block: the actor's remote table, for
//! kaspar-remote. Every handler is in it except those marked
//! `#[handler(M, local)]`; the expansion adds `RemoteActor` (schema, schema
//! hash, the decoder that matches wire ids) and one `RemoteHandler<M>` per
//! handler in the table, beside what `#[actor]` always generates, which is
//! unchanged. Generated code names kaspar-remote only through
//! `::kaspar_remote::__private`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use super::expand::assumes_state;
use super::model::{ActorImpl, HandlerModel};
use crate::errors::Errors;

/// `local` means something only in a remote impl block.
pub(super) fn check(model: &ActorImpl, remote: bool) -> syn::Result<()> {
    let mut errs = Errors::default();
    if !remote {
        for span in model.handlers.iter().filter_map(|h| h.local) {
            errs.push(syn::Error::new(
                span,
                "`local` keeps a handler out of the remote table of an `#[actor(remote)]` impl block; this impl block is not remote, so remove it",
            ));
        }
    }
    errs.finish()
}

fn type_text(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string().replace(' ', "")
}

pub(super) fn expand(model: &ActorImpl) -> TokenStream {
    let r = quote!(::kaspar_remote::__private);
    let self_ty = &model.self_ty;
    let (impl_generics, _, user_where) = model.generics.split_for_impl();
    let assumes_state = assumes_state(user_where);
    let remote: Vec<&HandlerModel> = model
        .handlers
        .iter()
        .filter(|h| h.local.is_none())
        .collect();
    // Everything that names a message is spanned at it, paths included, so
    // that a message that is not `Wire`, or a reply that is not serde, is
    // reported at the handler's `#[handler(M)]`.
    let entries = remote.iter().map(|h| {
        let msg = &h.msg;
        let cfg = &h.cfg;
        let r = quote_spanned!(msg.span()=> ::kaspar_remote::__private);
        let message = type_text(msg);
        let reply = h.reply.as_ref().map_or_else(|| "()".to_owned(), type_text);
        quote_spanned! {msg.span()=>
            #cfg
            #r::RemoteMessage {
                wire_id: <#msg as #r::Wire>::WIRE_ID,
                shape: <#msg as #r::Schema>::HASH,
                message: #message,
                reply: #reply,
                reply_shape: <<Self as #r::Handler<#msg>>::Reply as #r::Schema>::HASH,
            }
        }
    });
    let arms = remote.iter().map(|h| {
        let (msg, cfg) = (&h.msg, &h.cfg);
        let r = quote_spanned!(msg.span()=> ::kaspar_remote::__private);
        quote_spanned! {msg.span()=>
            #cfg
            if id == <#msg as #r::Wire>::WIRE_ID {
                return #r::deliver::<Self, #msg>(addr, inbound);
            }
        }
    });

    // One assertion per pair, at the later handler's message type, naming
    // both: two remote messages of one actor with one wire id could not be
    // told apart on the wire.
    let mut distinct = Vec::new();
    for (j, &later_h) in remote.iter().enumerate() {
        let later = &later_h.msg;
        for &earlier_h in &remote[..j] {
            let earlier = &earlier_h.msg;
            let cfgs = [&earlier_h.cfg, &later_h.cfg];
            let text = format!(
                "`{}` and `{}` have the same wire id: each message of a remote actor needs its own `#[wire(id = ..)]`",
                type_text(earlier),
                type_text(later),
            );
            distinct.push(quote_spanned! {later.span()=>
                #(#cfgs)*
                ::core::assert!(
                    <#earlier as ::kaspar_remote::__private::Wire>::WIRE_ID
                        != <#later as ::kaspar_remote::__private::Wire>::WIRE_ID,
                    #text
                );
            });
        }
    }
    // A concrete actor is checked where it is declared; a generic one when
    // an instance's schema hash is evaluated (it is, at every export and
    // lookup).
    let (eager, in_hash) = if model.generics.params.is_empty() {
        (quote!(const _: () = { #(#distinct)* };), TokenStream::new())
    } else {
        (TokenStream::new(), quote!(#(#distinct)*))
    };

    let remote_handlers = remote.iter().map(|h| {
        let (msg, cfg) = (&h.msg, &h.cfg);
        let r = quote_spanned!(msg.span()=> ::kaspar_remote::__private);
        quote_spanned! {msg.span()=>
            #cfg
            #[automatically_derived]
            impl #impl_generics #r::RemoteHandler<#msg> for #self_ty #assumes_state {}
        }
    });

    quote! {
        #[automatically_derived]
        impl #impl_generics #r::RemoteActor for #self_ty #assumes_state {
            const SCHEMA: &'static [#r::RemoteMessage] = &[#(#entries),*];
            const SCHEMA_HASH: u64 = {
                #in_hash
                #r::schema_hash(<Self as #r::ActorConfig>::NAME, Self::SCHEMA)
            };

            fn deliver(
                addr: &#r::Addr<Self>,
                inbound: #r::Inbound<'_>,
            ) -> #r::Result<(), #r::Refused> {
                let id = inbound.wire_id();
                #( #arms )*
                #r::unknown_message(inbound)
            }
        }
        #( #remote_handlers )*
        #eager
    }
}
