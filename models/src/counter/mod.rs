//! Atomic counters on memcached (RECIPES.md §2).
//!
//! - `counter/incr-add`: `incr`; on a miss `add` the delta; if that add loses a race,
//!   start over.
//! - `counter/get-set`: read, add, write back: loses increments under interleaving.
//! - `counter/incr-set`: `incr`; on a miss read the durable count from the backing store,
//!   add one, `set`: two clients that miss together lose a view.
//! - `counter/incr-add-db`: the same with `add`; when the add loses, `incr` again.
//!
//! Invariants: `counter.no_lost_increments` and `counter.no_extra_increments` (at
//! quiescence the value equals the sum of completed increments; the report says by how
//! much it is off), and `counter.linearizable` (every read agrees with some linearization
//! of the increments).

mod harness;
mod recipe;

pub use harness::{CounterParams, setup};
pub use recipe::{Counter, CounterVariant};

/// The recipe family's name.
pub const FAMILY: &str = "counter";

/// Its variants.
pub const VARIANTS: &[&str] = &["incr-add", "get-set", "incr-set", "incr-add-db"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &[
    "counter.no_lost_increments",
    "counter.no_extra_increments",
    "counter.linearizable",
];

/// Builds a counter scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = CounterParams {
        variant: CounterVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        increments: p.count("increments", 1)?,
        reads: p.count("reads", 0)?,
        think: p.millis("think_ms", 0)?,
        retries: p.count("retries", 3)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
