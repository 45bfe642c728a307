//! `#[group]` on a struct of member addresses, by stage: `parse` reads
//! each field as a member's address, `validate` judges what was written
//! and yields the members, `expand` generates the group's message enum
//! (one variant per member) and its `GroupSpec` impl.
//!
//! ```text
//! #[group]
//! pub struct Strategy {
//!     pub md: Addr<MarketData>,
//!     pub orders: Addr<Orders>,
//! }
//! ```

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemStruct;

use self::parse::Group;
use crate::errors::with_item;

pub(crate) fn expand(args: TokenStream, item: ItemStruct) -> TokenStream {
    let group = Group::parse(args, &item);
    match group.validate() {
        Ok(valid) => {
            let generated = expand::group_spec(&item, &valid.members, valid.msg.as_ref());
            quote!(#item #generated)
        }
        Err(err) => with_item(&item, err),
    }
}
