//! `#[derive(Wire)]`: a message's stable wire id, from `#[wire(id = N)]`,
//! and a hash of its definition (its shape), for kaspar-remote. Generated
//! code names the runtime only through `::kaspar_remote::__private`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitInt};

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
    let shape = fnv1a(shape(&input.data).as_bytes());
    let r = quote!(::kaspar_remote::__private);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned();
    if !input.generics.params.is_empty() {
        // The serde derives bound the parameters; so must this impl.
        where_clause.get_or_insert_with(|| syn::parse_quote!(where)).predicates.push(
            syn::parse_quote!(Self: #r::serde::Serialize + #r::serde::de::DeserializeOwned + ::core::marker::Send + 'static),
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
            const SHAPE: u64 = #shape;
        }
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

/// The type's definition as text, without attributes or documentation:
/// field names and types, variant names. Renaming the type keeps it.
fn shape(data: &Data) -> String {
    fn fields(f: &Fields) -> String {
        let each = |fs: &mut dyn Iterator<Item = &syn::Field>| -> String {
            fs.map(|f| {
                let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                format!("{name}:{};", f.ty.to_token_stream())
            })
            .collect()
        };
        match f {
            Fields::Named(n) => format!("{{{}}}", each(&mut n.named.iter())),
            Fields::Unnamed(u) => format!("({})", each(&mut u.unnamed.iter())),
            Fields::Unit => String::new(),
        }
    }
    match data {
        Data::Struct(s) => format!("struct{}", fields(&s.fields)),
        Data::Enum(e) => {
            let variants: String = e
                .variants
                .iter()
                .map(|v| format!("{}{}|", v.ident, fields(&v.fields)))
                .collect();
            format!("enum{{{variants}}}")
        }
        Data::Union(_) => String::from("union"),
    }
}

/// FNV-1a (64-bit), as kaspar-remote computes the schema hash.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
