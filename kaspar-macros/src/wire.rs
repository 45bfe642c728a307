//! `#[derive(Wire)]`: a message's stable wire id, from `#[wire(id = N)]`,
//! and its `Schema` impl (see [`schema`](crate::schema)), for
//! kaspar-remote. Generated code names the runtime only through
//! `::kaspar_remote::__private`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, LitInt};

use crate::errors::Errors;

pub(crate) fn expand(input: DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let id = wire_id(&input, &mut errors);
    if let Data::Union(u) = &input.data {
        errors.spanned(
            u.union_token,
            "a union cannot be a wire message: serde cannot encode it; use a struct or an enum",
        );
    }
    let schema = crate::schema::schema_impl(&input);
    let r = quote!(::kaspar_remote::__private);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned();
    if !input.generics.params.is_empty() {
        // The serde derives bound the parameters; so must this impl.
        where_clause.get_or_insert_with(|| syn::parse_quote!(where)).predicates.push(
            syn::parse_quote!(Self: #r::Schema + #r::serde::Serialize + #r::serde::de::DeserializeOwned + ::core::marker::Send + 'static),
        );
    }
    // Emitted even after an error (with id 0 where there is none), so
    // that the mistake above is the only one reported.
    let id = id.unwrap_or(0);
    let errors = errors.finish().err().map(syn::Error::into_compile_error);
    quote! {
        #[automatically_derived]
        impl #impl_generics #r::Wire for #ident #ty_generics #where_clause {
            const WIRE_ID: u32 = #id;
        }
        #schema
        #errors
    }
}

/// The id from the one `#[wire(id = N)]` attribute.
fn wire_id(input: &DeriveInput, errors: &mut Errors) -> Option<u32> {
    let mut id: Option<(u32, Span)> = None;
    let mut seen = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("wire")) {
        seen = true;
        let parsed = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("id") {
                return Err(meta.error("unknown `#[wire]` option; expected `id = <integer>`"));
            }
            let value: syn::Expr = meta.value()?.parse()?;
            let lit = match &value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.clone(),
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected an integer wire id: `#[wire(id = 7)]`",
                    ))
                }
            };
            let n = parse_u32(&lit)?;
            if let Some((first, _)) = id {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!(
                        "the wire id is already given (`id = {first}`); a message has exactly one"
                    ),
                ));
            }
            id = Some((n, lit.span()));
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    if !seen {
        errors.spanned(
            &input.ident,
            "`#[derive(Wire)]` needs a wire id: add `#[wire(id = N)]`, a `u32` that stays the same across builds and differs from the other messages of each actor that handles this one",
        );
    }
    id.map(|(n, _)| n)
}

fn parse_u32(lit: &LitInt) -> syn::Result<u32> {
    if !matches!(lit.suffix(), "" | "u32") {
        return Err(syn::Error::new(
            lit.span(),
            "a wire id is a `u32`: write it without a suffix",
        ));
    }
    lit.base10_parse::<u32>()
        .map_err(|_| syn::Error::new(lit.span(), "a wire id is a `u32`: between 0 and 4294967295"))
}
