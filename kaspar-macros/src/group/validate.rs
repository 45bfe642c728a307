//! Judge a parsed `#[group]`: no option but `msg = Name`, no generics,
//! and at least one named field, each a member's address and none under
//! `cfg`. Every mistake is reported.

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

/// A group that passed every check.
pub(super) struct Valid<'a> {
    /// In field order.
    pub(super) members: Vec<Member<'a>>,
    /// `msg = Name`: the message enum's name, `<Group>Msg` without it.
    pub(super) msg: Option<Ident>,
}

impl<'a> Group<'a> {
    /// The members, in field order, and the options, when the group
    /// passes every check.
    pub(super) fn validate(&self) -> syn::Result<Valid<'a>> {
        let mut errors = Errors::default();
        let msg = self.options(&mut errors);
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
        Ok(Valid { members, msg })
    }

    /// The one option, `msg = Name`: the group's message enum's name,
    /// for when a type called `<Group>Msg` is already there. Anything
    /// else is reported: the other settings are the spawn's.
    fn options(&self, errors: &mut Errors) -> Option<Ident> {
        use syn::parse::Parser;
        if self.args.is_empty() {
            return None;
        }
        let mut msg = None;
        let parsed = syn::meta::parser(|meta| {
            if !meta.path.is_ident("msg") {
                return Err(meta.error(
                    "`#[group]` takes one option, `msg = Name`; set the others when spawning: `system.spawn_group::<G>(..).mailbox(..)`",
                ));
            }
            crate::names::msg_option(
                &meta,
                &mut msg,
                "`msg` names the group's message enum with an identifier: `#[group(msg = DeskMessages)]`",
            )
        })
        .parse2(self.args.clone());
        if let Err(e) = parsed {
            errors.push(e);
        }
        msg
    }
}
