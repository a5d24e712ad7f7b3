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

use mcsim::prelude::*;

/// The one table recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableVariant {
    /// As the article writes it.
    AsWritten,
}

/// A table scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Members each writer adds.
    pub members: Count,
    /// Members each writer deletes again.
    pub deletes: Count,
    /// Clients that only read.
    pub readers: Count,
    /// Reads per reader.
    pub reads: Count,
    /// Pause between a reader's reads.
    pub read_gap_ms: Millis,
    /// The lock's TTL.
    pub lock_timeout_s: Seconds,
    /// Wait between failed lock attempts.
    pub backoff_ms: Millis,
    /// Time a writer works while holding the lock.
    pub work_ms: Millis,
    /// Extra delay of the first writer (to outlive the lock).
    pub slow_ms: Millis,
    /// Retries after a timeout.
    pub retries: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            members: Count(2),
            deletes: Count(0),
            readers: Count(0),
            reads: Count(4),
            read_gap_ms: Millis(1),
            lock_timeout_s: Seconds(5),
            backoff_ms: Millis(2),
            work_ms: Millis(0),
            slow_ms: Millis(0),
            retries: Count(3),
        }
    }
}

impl Model for TableVariant {
    const NAME: &'static str = "table";
    const VARIANTS: &'static [(&'static str, TableVariant)] =
        &[("as-written", TableVariant::AsWritten)];
    const INVARIANTS: &'static [&'static str] = &[
        "table.no_lost_members",
        "table.consistent",
        "table.instant_consistent",
    ];
    const CLAIMS: &'static [Claim] = &[Claim {
        variant: "as-written",
        source: "DS MCTable",
        says: "marker keys for has() and a member list for fetch(), both written under the lock, give a consistent set with O(1) membership.",
        presented_as_correct: true,
        magnitude: &[
            "table.no_lost_members.lost",
            "table.consistent.false_negatives",
        ],
    }];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = TableParams {
            members: p.members.get(),
            deletes: p.deletes.get(),
            readers: p.readers.get(),
            reads: p.reads.get(),
            read_gap: p.read_gap_ms.get(),
            lock_timeout_s: p.lock_timeout_s.get(),
            backoff: p.backoff_ms.get(),
            work: p.work_ms.get(),
            slow: p.slow_ms.get(),
            retries: p.retries.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
