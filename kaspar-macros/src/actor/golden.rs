//! The expansion of actors that do not opt into `remote`, pinned: options
//! the macro grows (`remote`, `local` handlers) must leave every other
//! actor's code exactly as it was. `golden/*.txt` hold the expansions,
//! token for token; `KASPAR_BLESS=1 cargo test -p kaspar-macros golden`
//! rewrites them after an intended change.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

fn expansion(attr: TokenStream, item: TokenStream) -> String {
    let item: Item = syn::parse2(item).expect("sample parses");
    super::expand(attr, item).to_string()
}

fn check(name: &str, got: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/actor/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("KASPAR_BLESS").is_some() {
        std::fs::write(&path, &got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("golden file exists");
    assert!(
        want == got,
        "the expansion of `{name}` changed; if that is intended, rerun with KASPAR_BLESS=1\n--- want\n{want}\n--- got\n{got}"
    );
}

#[test]
fn golden_struct_with_every_option() {
    check(
        "struct_options",
        expansion(
            quote!(
                name = "desk",
                thread_bound,
                reentrant,
                policy = permissive,
                mailbox = MailboxKind::bqueue(64)
            ),
            quote!(
                pub struct Desk {
                    seen: u64,
                }
            ),
        ),
    );
}

#[test]
fn golden_impl_with_handlers_and_hooks() {
    check(
        "impl_handlers",
        expansion(
            quote!(),
            quote! {
                impl Desk {
                    #[handler(Order)]
                    fn on_order(&mut self, o: Order, _ctx: &mut Ctx<Self>) -> Fill { self.fill(o) }
                    #[handler(Snapshot)]
                    fn on_snapshot(&self, _s: &Snapshot, _ctx: &mut Ctx<Self>) {}
                    #[started]
                    fn up(&mut self, _ctx: &mut Ctx<Self>) {}
                    #[stopped]
                    fn down(&mut self, _ctx: &mut Ctx<Self>) {}
                    fn helper(&self) {}
                }
            },
        ),
    );
}

#[test]
fn golden_impl_with_one_handler() {
    check(
        "impl_one_handler",
        expansion(
            quote!(),
            quote! {
                impl Ponger {
                    #[handler(Ping)]
                    fn on_ping(&mut self, p: Ping, _ctx: &mut Ctx<Self>) -> u64 { p.0 }
                }
            },
        ),
    );
}

#[test]
fn golden_generic_impl() {
    check(
        "impl_generic",
        expansion(
            quote!(),
            quote! {
                impl<P: Pricer> Strategy<P> {
                    #[handler(Quote)]
                    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 { 0 }
                    #[handler(P::Input)]
                    fn on_input(&mut self, _i: P::Input, _ctx: &mut Ctx<Self>) {}
                }
            },
        ),
    );
}
