//! Names the expansions derive from the user's identifiers.

use syn::ext::IdentExt;
use syn::Ident;

/// `on_new_order` -> `OnNewOrder`: a method or field name as an enum
/// variant, spanned at the original. Leading underscores are dropped and a
/// raw identifier loses its `r#`; `fallback` covers a name made of
/// underscores only.
pub(crate) fn variant(ident: &Ident, fallback: &str) -> Ident {
    let mut out = String::new();
    let mut upper = true;
    for c in ident.unraw().to_string().trim_start_matches('_').chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str(fallback);
    }
    Ident::new(&out, ident.span())
}

/// Makes variant names distinct (`on_x` and `on__x` both camel-case to
/// `OnX`): a repeated name gets its position appended.
pub(crate) fn distinct(mut names: Vec<Ident>) -> Vec<Ident> {
    for i in 1..names.len() {
        if names[..i].iter().any(|n| *n == names[i]) {
            let renamed = format!("{}{}", names[i], i);
            names[i] = Ident::new(&renamed, names[i].span());
        }
    }
    names
}

/// Reads the value of a `msg = Name` option (on `#[actor]`'s impl block or
/// on `#[group]`) into `slot`: the name the message enum takes. `not_a_name`
/// is the error for a value that is not an identifier (which enum, and an
/// example). A second `msg` is an error at its value.
pub(crate) fn msg_option(
    meta: &syn::meta::ParseNestedMeta<'_>,
    slot: &mut Option<Ident>,
    not_a_name: &str,
) -> syn::Result<()> {
    let name: Ident = meta
        .value()?
        .parse()
        .map_err(|e| syn::Error::new(e.span(), not_a_name))?;
    if slot.is_some() {
        return Err(syn::Error::new_spanned(&name, "`msg` is given twice"));
    }
    *slot = Some(name);
    Ok(())
}
