//! `#[derive(Schema)]`, and the `Schema` impl `#[derive(Wire)]` adds: a
//! `const HASH` that folds in the type's kind, each variant's name, each
//! field's name in order and its type's own `Schema::HASH`, and the text of
//! every `#[serde(..)]` attribute. The hash is computed by the compiler
//! from those constants, so it covers nested types, and names nothing that
//! differs between builds. Generated code names the runtime only through
//! `::kaspar_remote::__private`.

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Ident};

/// `#[derive(Schema)]`.
pub(crate) fn derive(input: DeriveInput) -> TokenStream {
    let mut out = schema_impl(&input);
    if let Data::Union(u) = &input.data {
        out.extend(
            syn::Error::new_spanned(
                u.union_token,
                "a union has no schema: serde cannot encode it; use a struct or an enum",
            )
            .into_compile_error(),
        );
    }
    out
}

/// The `Schema` impl for `input` (a union gets a hash of its kind only;
/// the caller reports it).
pub(crate) fn schema_impl(input: &DeriveInput) -> TokenStream {
    let r = quote!(::kaspar_remote::__private);
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#r::Schema));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let hash = hash_expr(input);
    quote! {
        #[automatically_derived]
        impl #impl_generics #r::Schema for #ident #ty_generics #where_clause {
            const HASH: u64 = #hash;
        }
    }
}

/// The expression folding the definition into a hash, in the order the
/// module header gives.
fn hash_expr(input: &DeriveInput) -> TokenStream {
    let r = quote!(::kaspar_remote::__private);
    let me = &input.ident;
    let mut h = match &input.data {
        Data::Struct(s) => {
            let kind = match &s.fields {
                Fields::Named(_) => "struct",
                Fields::Unnamed(_) => "tuple struct",
                Fields::Unit => "unit struct",
            };
            let h = quote!(#r::tag(#kind));
            fields(h, &s.fields, me)
        }
        Data::Enum(e) => {
            let n = e.variants.len() as u64;
            let mut h = quote!(#r::num(#r::tag("enum"), #n));
            for v in &e.variants {
                let name = v.ident.to_string();
                let kind = match &v.fields {
                    Fields::Named(_) => "struct",
                    Fields::Unnamed(_) => "tuple",
                    Fields::Unit => "unit",
                };
                h = quote!(#r::name(#r::name(#h, #name), #kind));
                h = serde_attrs(h, &v.attrs);
                h = fields(h, &v.fields, me);
            }
            h
        }
        Data::Union(_) => quote!(#r::tag("union")),
    };
    h = serde_attrs(h, &input.attrs);
    h
}

/// Folds in the number of fields, then each field: its name (empty for a
/// tuple field), its serde attributes and its type's hash.
fn fields(mut h: TokenStream, fields: &Fields, me: &Ident) -> TokenStream {
    let r = quote!(::kaspar_remote::__private);
    let n = fields.len() as u64;
    h = quote!(#r::num(#h, #n));
    for f in fields {
        let name = f.ident.as_ref().map(Ident::to_string).unwrap_or_default();
        h = serde_attrs(h, &f.attrs);
        let ty = &f.ty;
        let ty_hash = if names_itself(ty.to_token_stream(), me) {
            // The type's own hash is what is being computed: the field is
            // hashed by its text instead (`Box<Self>` in a list, say).
            let text = ty.to_token_stream().to_string();
            quote!(#r::tag(#text))
        } else {
            // Spanned at the field's type: a type that is not `Schema` is
            // reported there.
            let r = quote_spanned!(ty.span()=> ::kaspar_remote::__private);
            quote_spanned!(ty.span()=> <#ty as #r::Schema>::HASH)
        };
        h = quote!(#r::field(#h, #name, #ty_hash));
    }
    h
}

/// Folds in the text of each `#[serde(..)]` attribute (a rename, a skip, a
/// `with` module: each changes what goes on the wire).
fn serde_attrs(mut h: TokenStream, attrs: &[Attribute]) -> TokenStream {
    let r = quote!(::kaspar_remote::__private);
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let text = a.meta.to_token_stream().to_string();
        h = quote!(#r::name(#h, #text));
    }
    h
}

/// Whether `tokens` name the type being derived, as `Self` or by its name.
fn names_itself(tokens: TokenStream, me: &Ident) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "Self" || i == *me,
        TokenTree::Group(g) => names_itself(g.stream(), me),
        _ => false,
    })
}
