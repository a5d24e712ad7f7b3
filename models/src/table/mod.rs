//! The table (RECIPES.md §8, DS `MCTable`): a set of strings with an O(1) membership test.
//!
//! Each member has a marker key `table_<name>_v_<member>` (`has` is one `get`), and one
//! key `table_<name>_keys` holds the serialized member list (`fetch` is one `get`). `add`
//! and `delete` write both under the DS lock (`add` of `lock_<name>`, 5-second timeout):
//! read the list (a miss is an empty list), change it, write the marker, write the list.
//! As written, `fetch` on a missing list returns nothing at all (`None`), not an empty
//! list.
//!
//! Variant `table/as-written` only: the article gives one recipe, and no rearrangement of
//! the two writes makes two keys change at one instant.
//!
//! Invariants:
//! - `table.no_lost_members`: at quiescence every member whose `add` completed (and that
//!   nobody deleted) is in `fetch()`. Evicting the list key makes the next `add` rebuild
//!   the list from empty and silently drop every other member (or, with no later add,
//!   leaves `fetch()` returning nothing).
//! - `table.consistent`: at quiescence `has(m)` iff `m` is in `fetch()`. Evicting a marker
//!   gives a false negative.
//! - `table.instant_consistent`: the same at every instant, as readers observe it: a
//!   reader that sees `has(m)` true and then a `fetch()` without `m` (no delete of `m`
//!   having started) caught an `add` between its two writes. This holds at quiescence and
//!   fails in between, with no fault at all.
//!
//! Metrics: `table.members`, `table.expected`, `table.lost`, `table.list_missing`,
//! `table.false_negatives`, `table.false_positives`, `table.instant_inconsistent`
//! (observations), `table.fetch_none` (fetches that returned nothing at all),
//! `table.reader_rounds`.

mod harness;
mod recipe;

pub use harness::{TableParams, member, setup};
pub use recipe::{Table, decode_list, encode_list};

/// The recipe family's name.
pub const FAMILY: &str = "table";

/// Its variants.
pub const VARIANTS: &[&str] = &["as-written"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &[
    "table.no_lost_members",
    "table.consistent",
    "table.instant_consistent",
];

/// Builds a table scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    if cx.variant != "as-written" {
        return Err(crate::catalog::unknown_variant(cx));
    }
    let p = cx.params;
    let params = TableParams {
        members: p.count("members", 2)?,
        deletes: p.count("deletes", 0)?,
        readers: p.count("readers", 0)?,
        reads: p.count("reads", 4)?,
        read_gap: p.millis("read_gap_ms", 1)?,
        lock_timeout_s: p.seconds("lock_timeout_s", 5)?,
        backoff: p.millis("backoff_ms", 2)?,
        work: p.millis("work_ms", 0)?,
        slow: p.millis("slow_ms", 0)?,
        retries: p.count("retries", 3)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
