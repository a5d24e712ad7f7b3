//! A set kept with `append` and compacted with `cas` (RECIPES.md §9, SET).
//!
//! One index key holds a log of tokens: `+m ` adds `m`, `-m ` removes it, replayed in
//! order (see [`encoding`] for the format and how members with spaces or a leading sign
//! are escaped).
//!
//! - `modify` is one `append` of the encoded tokens; when the index is missing and the op
//!   is `+`, `add` creates it.
//! - `items` is `gets` and decode; when the value holds more `-` tokens than a threshold
//!   it writes the compact form back with `cas`, fire and forget (a failed `cas` loses
//!   nothing).
//!
//! Variants:
//! - `set/as-written`: the code SET shows: when the `append` fails (no index) and the
//!   `add` fails too (another client created the index in between), nothing retries and
//!   the caller is not told: the modification is lost.
//! - `set/retry`: what SET's text prescribes: when both fail, retry the whole modify.
//! - `set/compact-set` (beyond the article): `retry` with compaction by a plain `set`:
//!   shows why the compaction needs `cas`.
//!
//! Invariants:
//! - `set.compaction_safe`: no compaction overwrites a modification applied between its
//!   `gets` and its write (checked on the index's writes in server order).
//! - `set.linearizable`: the adds, removes and reads of every client, plus a read of the
//!   index at quiescence, are linearizable against a sequential set
//!   ([`mcsim::lin::SetSpec`]).
//!
//! Metrics: `set.modifications`, `set.compactions`, `set.compactions_refused`,
//! `set.erased_by_compaction`, `set.lost` and `set.resurrected` (members whose last
//! completed modification the index disagrees with at quiescence), `set.bytes`,
//! `set.dirtiness`.

pub mod encoding;
mod harness;
mod observe;
mod recipe;

pub use harness::{INDEX, SetParams, setup};
pub use observe::{IndexLog, Observed, UnsafeCompaction};
pub use recipe::{SetIndex, SetVariant};

/// The recipe family's name.
pub const FAMILY: &str = "set";

/// Its variants.
pub const VARIANTS: &[&str] = &["as-written", "retry", "compact-set"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["set.compaction_safe", "set.linearizable"];

/// Builds a set scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = SetParams {
        variant: SetVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        ops: p.count("ops", 4)?,
        read_every: p.count("read_every", 1)?,
        dirtiness_threshold: p.count("dirtiness_threshold", 1)?,
        retries: p.count("retries", 3)?,
        think: p.millis("think_ms", 0)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
