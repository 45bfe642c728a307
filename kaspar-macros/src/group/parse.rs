//! Read a `#[group]` struct as written: its options, and each named field
//! with the actor of its `Addr<A>`, where it is one.

use proc_macro2::TokenStream;
use syn::{Attribute, Fields, GenericArgument, Ident, ItemStruct, PathArguments, Type};

pub(super) struct Group<'a> {
    /// What was written between the attribute's parentheses.
    pub(super) args: TokenStream,
    pub(super) item: &'a ItemStruct,
    /// The named fields in order; `None` for a tuple or unit struct.
    pub(super) fields: Option<Vec<Field<'a>>>,
}

pub(super) struct Field<'a> {
    pub(super) ident: &'a Ident,
    pub(super) ty: &'a Type,
    /// `A` where the field's type is `Addr<A>`.
    pub(super) member: Option<&'a Type>,
    /// A `#[cfg(..)]` on the field, if any. (A `cfg_attr` is let be: it
    /// usually adds a doc or a lint level, and one that adds a `cfg` is
    /// rustc's to judge.)
    pub(super) cfg: Option<&'a Attribute>,
}

impl<'a> Group<'a> {
    pub(super) fn parse(args: TokenStream, item: &'a ItemStruct) -> Self {
        let fields = match &item.fields {
            Fields::Named(named) => Some(
                named
                    .named
                    .iter()
                    .map(|f| Field {
                        ident: f.ident.as_ref().expect("named"),
                        ty: &f.ty,
                        member: member_type(&f.ty),
                        cfg: f.attrs.iter().find(|a| a.path().is_ident("cfg")),
                    })
                    .collect(),
            ),
            Fields::Unnamed(_) | Fields::Unit => None,
        };
        Group { args, item, fields }
    }
}

/// `A` of `Addr<A>`, by the last path segment: the compiler checks that
/// the name resolves to kaspar's `Addr`.
fn member_type(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Addr" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(t)) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}
