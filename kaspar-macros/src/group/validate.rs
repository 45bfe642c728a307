//! Judge a parsed `#[group]`: no options, no generics, and at least one
//! named field, each a member's address and none under `cfg`. Every
//! mistake is reported.

use syn::{Ident, Type};

use super::parse::Group;
use crate::errors::Errors;
use crate::generics;

/// A member of a valid group: the field holding its address, and its
/// actor type.
pub(super) struct Member<'a> {
    pub(super) field: &'a Ident,
    pub(super) actor: &'a Type,
}

impl<'a> Group<'a> {
    /// The members, in field order, when the group passes every check.
    pub(super) fn validate(&self) -> syn::Result<Vec<Member<'a>>> {
        let mut errors = Errors::default();
        if !self.args.is_empty() {
            errors.spanned(
                &self.args,
                "`#[group]` takes no options; set them when spawning: `system.spawn_group::<G>(..).mailbox(..)`",
            );
        }
        errors.extend(generics::reject_group(&self.item.generics));
        let mut members = Vec::new();
        match &self.fields {
            Some(fields) if !fields.is_empty() => {
                for f in fields {
                    // The members' states are one tuple, whose elements
                    // cannot be configured out one by one.
                    if let Some(cfg) = f.cfg {
                        errors.spanned(
                            cfg,
                            "a group's members cannot be configured out one by one (their states are one tuple at spawn); put the `cfg` on the whole `#[group]` struct, one definition per configuration",
                        );
                    }
                    match f.member {
                        Some(actor) => members.push(Member {
                            field: f.ident,
                            actor,
                        }),
                        None => errors.spanned(
                            f.ty,
                            "every field of a `#[group]` struct is a member's address: `name: Addr<MemberActor>`",
                        ),
                    }
                }
            }
            _ => errors.spanned(
                &self.item.fields,
                "a `#[group]` struct lists its members as named fields: `name: Addr<MemberActor>`",
            ),
        }
        errors.finish()?;
        Ok(members)
    }
}
