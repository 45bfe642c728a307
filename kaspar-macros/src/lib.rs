//! Procedural macros for [kaspar](https://docs.rs/kaspar): `#[actor]`,
//! `#[handler]` and `#[group]`. Use them through kaspar, which re-exports
//! them; each macro's documentation lists its options.
//!
//! Each attribute's module works by stage: parse into a typed model that
//! keeps the user's spans (so errors point at the user's code), validate,
//! expand. Every mistake found is reported at once; on error the user's
//! item is still emitted so IDEs keep working. Generated code names the
//! runtime only through `::kaspar::__private`.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use syn::{parse_macro_input, Item};

mod actor;
mod errors;
mod generics;
mod group;
mod names;
mod schema;
mod wire;

/// Declares an actor (on its struct or enum) and collects its handlers (on
/// its impl block). An actor needs both.
///
/// ```ignore
/// use kaspar::prelude::*;
///
/// pub struct Ping(pub u64);
///
/// #[actor(name = "ponger", mailbox = MailboxKind::bqueue(64))]
/// pub struct Ponger {
///     seen: u64,
/// }
///
/// #[actor]
/// impl Ponger {
///     #[handler(Ping)]
///     fn on_ping(&mut self, msg: Ping, _ctx: &mut Ctx<Self>) -> u64 {
///         self.seen += 1;
///         msg.0 + 1
///     }
/// }
/// ```
///
/// # On the struct or enum: options
///
/// ```text
/// #[actor]
/// #[actor(option, ...)]
///
/// option := reentrant
///         | thread_bound
///         | policy = conservative | policy = permissive
///         | mailbox = <MailboxKind expression>
///         | name = "<string>"
/// ```
///
/// Each option is optional and may appear in any order; `#[actor]` alone
/// declares an actor with the defaults. It implements `ActorConfig`.
///
/// * `reentrant`: handlers and hooks take `&self` and keep their mutable
///   state in `Cell`s, `RefCell`s or atomics; a `&mut self` handler is then
///   a compile error. Such an actor may be entered again on a thread that
///   is already inside one of its handlers, as far as its cycle policy
///   allows. Without it, handlers take `&mut self` (or `&self`), and the
///   actor is never entered twice on one thread.
/// * `thread_bound`: the state lives on the actor's own thread and need not
///   be `Send` (an `Rc`, a `RefCell` shared with a thread-local, a C
///   handle). Build it there with `System::spawn_with(|| ..)` (or
///   `spawn_group_with` for group members). Messages reach it from any
///   thread through `send`, `ask` and `request`; `fast_send` and its
///   family run only on that thread (from its own handlers, or its
///   group's) and are refused elsewhere with `FastSendError::ThreadBound`.
/// * `policy = conservative | permissive`: this actor's cycle policy
///   (`CyclePolicy`): `conservative` refuses any re-entry, `permissive`
///   only re-entry into a handler already running on that thread. It
///   matters only for a `reentrant` actor, as no other is ever
///   re-entered, and `permissive` without `reentrant` is a compile error.
///   `spawn(..).policy(..)` overrides it; without either, the system's
///   default applies (`SystemConfig::policy`).
/// * `mailbox = <expr>`: the actor's mailbox when it is spawned on its own,
///   a constant `MailboxKind` expression; `MailboxKind` and `WhenFull` are
///   in scope. `spawn(..).mailbox(..)` overrides it; without either, the
///   system's default applies (`SystemConfig::mailbox`). Members of a
///   `#[group]` share the group's queue instead.
/// * `name = "..."`: the actor's name in errors, metrics and thread names;
///   the type's name by default.
///
/// ```ignore
/// #[actor(reentrant, policy = permissive)]
/// pub struct Ticker {
///     ticks: Cell<u64>,
/// }
///
/// #[actor(mailbox = MailboxKind::LockFree { capacity: 1024, when_full: WhenFull::Wait })]
/// pub struct Feed;
/// ```
///
/// # On the impl block: handlers and hooks
///
/// `#[actor]` on the actor's inherent impl block collects the methods
/// marked `#[handler(M)]` (see `handler`), `#[started]` and `#[stopped]`,
/// and generates the message enum `<Actor>Msg` (one variant per handler),
/// the `Actor` impl, whose dispatch is a `match`, and one `Handler<M>`
/// impl per handler. Other methods are left alone. It takes two options,
/// in either order:
///
/// * `msg = Name`: the message enum is `Name` instead of `<Actor>Msg`,
///   for when a type of that name is already there;
/// * `remote`: with kaspar-remote, the handlers form the actor's remote
///   table too.
///
/// ```text
/// #[started] fn name(&mut self, ctx: &mut Ctx<Self>)
/// #[stopped] fn name(&mut self, ctx: &mut Ctx<Self>)
/// ```
///
/// * `#[started]` runs once on the actor's thread, before its first
///   message;
/// * `#[stopped]` runs once after its last message, during stop or
///   shutdown.
///
/// Each hook is optional and appears at most once. The attributes take no
/// arguments; the hooks return nothing and take `&self` on a `reentrant`
/// actor.
///
/// ```ignore
/// #[actor]
/// impl Ponger {
///     #[started]
///     fn on_start(&mut self, _ctx: &mut Ctx<Self>) {
///         self.seen = 0;
///     }
///
///     #[stopped]
///     fn on_stop(&mut self, _ctx: &mut Ctx<Self>) {}
/// }
/// ```
///
/// # Generic actors
///
/// The struct and the impl block may declare type and const parameters,
/// with bounds and a `where` clause, but no lifetimes: an actor's state
/// moves to its own thread and lives until it stops, so it is
/// `Send + 'static`, and so are its parameters as far as it holds them.
/// Every generated impl carries the generics. The message enum takes the
/// impl block's generics only if a message or reply type names one of its
/// parameters; otherwise all instances share one plain enum. `NAME` is the
/// type's name without its arguments.
///
/// ```ignore
/// #[actor]
/// pub struct Strategy<P: Pricer> {
///     pricer: P,
/// }
///
/// #[actor]
/// impl<P: Pricer> Strategy<P> {
///     #[handler(Quote)]
///     fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
///         self.pricer.price(q.bid, q.ask)
///     }
/// }
///
/// let linear = system.spawn(Strategy { pricer: Linear }).start();
/// ```
#[proc_macro_attribute]
pub fn actor(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = parse_macro_input!(item as Item);
    actor::expand(TokenStream2::from(args), item).into()
}

/// Declares an actor group: a struct whose fields are the members'
/// addresses. The members run on one thread behind one shared queue, so a
/// `fast_send` from one member to another on that thread takes no second
/// lock.
///
/// ```text
/// #[group]
/// struct Name {
///     field: Addr<MemberActor>,
///     ...
/// }
/// ```
///
/// `#[group]` takes one option, `msg = Name`, below; the group's mailbox
/// and cycle policy are set when it is spawned,
/// `system.spawn_group::<G>(..).mailbox(..)` and `.policy(..)` (the policy
/// of the members that do not declare one). It needs at least one member;
/// every field is an `Addr<A>` of an `#[actor]` type (an instance of a
/// generic actor too: `Addr<Strategy<Linear>>`), and the group itself is
/// not generic. It generates the message enum `<Group>Msg` (one variant
/// per member, holding that member's own message enum; `#[group(msg =
/// Name)]` names it `Name` instead, for when a type of that name is
/// already there) and the `GroupSpec` impl.
///
/// ```ignore
/// #[group]
/// pub struct Pipeline {
///     pub feed: Addr<Feed>,
///     pub book: Addr<Book>,
/// }
///
/// // The members' states, in field order.
/// let p: Pipeline = system.spawn_group::<Pipeline>((Feed { seen: 0 }, Book { n: 0 })).start();
/// p.feed.send(Tick(1)).unwrap();
/// ```
#[proc_macro_attribute]
pub fn group(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = parse_macro_input!(item as syn::ItemStruct);
    group::expand(TokenStream2::from(args), item).into()
}

/// Derives `kaspar_remote::Wire` for a message that may cross a process
/// boundary. Use it through kaspar-remote, which re-exports it, beside
/// serde's derives:
///
/// ```text
/// #[derive(Serialize, Deserialize, kaspar_remote::Wire)]
/// #[wire(id = N)]
/// ```
///
/// `N` is a `u32` literal: the message's name on the wire, stable across
/// builds (never a `TypeId`) and different from the ids of the other
/// messages each remote actor that handles it handles (a clash is a
/// compile error at the actor). The derive also implements
/// `kaspar_remote::Schema` for the message, as [`macro@Schema`] does, so
/// that two builds whose messages differ, in any type inside them, refuse
/// to connect. A missing, repeated or non-integer id is a compile error at
/// the attribute.
#[proc_macro_derive(Wire, attributes(wire))]
pub fn derive_wire(item: TokenStream) -> TokenStream {
    wire::expand(parse_macro_input!(item as syn::DeriveInput)).into()
}

/// Derives `kaspar_remote::Schema` for a type used inside a wire message
/// (a field's type, or a handler's reply). Use it through kaspar-remote,
/// which re-exports it, beside serde's derives:
///
/// ```text
/// #[derive(Serialize, Deserialize, kaspar_remote::Schema)]
/// ```
///
/// `Schema::HASH` is computed at compile time from the definition: the
/// kind of type, each variant's name, each field's name in order and its
/// type's own `Schema::HASH`, and the text of `#[serde(..)]` attributes;
/// not the type's name or docs. Every field's type must be `Schema` (a
/// compile error at the field otherwise), except one that names the type
/// itself, which is hashed by its text. Each type parameter is bound by
/// `Schema`.
#[proc_macro_derive(Schema)]
pub fn derive_schema(item: TokenStream) -> TokenStream {
    schema::derive(parse_macro_input!(item as syn::DeriveInput)).into()
}

/// Marks a method of an `#[actor]` impl block as the handler of one message
/// type.
///
/// ```text
/// #[handler(M)]
/// fn name(&mut self, msg: M, ctx: &mut Ctx<Self>) -> Reply
/// ```
///
/// * The attribute names exactly one message type, and each message type
///   has at most one handler in an actor.
/// * The receiver is `&mut self`, or `&self` (required on an
///   `#[actor(reentrant)]` actor).
/// * The message comes first, by value (`msg: M`) or by shared reference
///   (`msg: &M`), then the context, `ctx: &mut Ctx<Self>`; nothing else.
/// * The reply is any concrete type (not `impl Trait`), or nothing for
///   `()`. `fast_send` returns it, `ask` hands it to the waiting handle,
///   `request` queues it for the `reply_to` actor; after a `send` nobody
///   receives it.
/// * The handler is neither `async` nor generic: it runs to completion
///   under the actor's lock, on the caller's thread or on the actor's own.
///
/// ```ignore
/// #[actor]
/// impl Book {
///     #[handler(Order)]
///     fn on_order(&mut self, order: Order, _ctx: &mut Ctx<Self>) -> Fill {
///         self.match_order(order)
///     }
///
///     #[handler(Snapshot)]
///     fn on_snapshot(&mut self, _req: &Snapshot, _ctx: &mut Ctx<Self>) -> Levels {
///         self.levels()
///     }
/// }
/// ```
///
/// Used anywhere else, it is a compile error: only the enclosing `#[actor]`
/// sees all the handlers and can generate the dispatch.
#[proc_macro_attribute]
pub fn handler(_args: TokenStream, item: TokenStream) -> TokenStream {
    let err = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[handler]` must be on a method inside an `#[actor]` impl block; add `#[actor]` to the enclosing `impl`",
    );
    errors::with_item(TokenStream2::from(item), err).into()
}
