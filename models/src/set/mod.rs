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
//! completed modification the index disagrees with at quiescence), `set.dropped` (adds
//! the recipe returned as done while none of the client's writes reached the index),
//! `set.phantoms` (members a reader was shown that no client ever added), `set.bytes`,
//! `set.dirtiness`.

pub mod encoding;
mod harness;
mod observe;
mod order;
mod recipe;

pub use harness::{INDEX, Members, SetParams, setup};
pub use observe::{IndexLog, Observed, UnsafeCompaction};
pub use recipe::{SetIndex, SetVariant};

use mcsim::prelude::*;

/// A set scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Adds and removes per client.
    pub ops: Count,
    /// A read after every this many operations.
    pub read_every: Count,
    /// Dirt (removed entries) that triggers a compaction.
    pub dirtiness_threshold: Count,
    /// Retries after a timeout.
    pub retries: Count,
    /// Pause between a client's operations.
    pub think_ms: Millis,
    /// Which members: `plain`, or `encoding` (spaces, leading signs, the empty member,
    /// long ones).
    pub members: String,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            ops: Count(4),
            read_every: Count(1),
            dirtiness_threshold: Count(1),
            retries: Count(3),
            think_ms: Millis(0),
            members: "plain".into(),
        }
    }
}

impl Model for SetVariant {
    const NAME: &'static str = "set";
    const VARIANTS: &'static [(&'static str, SetVariant)] = &[
        ("as-written", SetVariant::AsWritten),
        ("retry", SetVariant::Retry),
        ("compact-set", SetVariant::CompactSet),
    ];
    const INVARIANTS: &'static [&'static str] = &["set.compaction_safe", "set.linearizable"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "SET",
            says: "append +m / -m tokens, add the index when missing, compact with cas: the set loses no modification (as the code is shown, with no retry).",
            presented_as_correct: true,
            magnitude: &["set.dropped", "set.phantoms", "set.lost"],
        },
        Claim {
            variant: "retry",
            source: "SET",
            says: "the same with the retry the text prescribes when both append and add fail: no modification is lost.",
            presented_as_correct: true,
            magnitude: &["set.dropped", "set.lost"],
        },
        Claim {
            variant: "compact-set",
            source: "mcsim (beyond the seeds)",
            says: "compaction by a plain set instead of cas: shows why the compaction needs cas.",
            presented_as_correct: false,
            magnitude: &["set.lost", "set.erased_by_compaction"],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        match Members::parse(&p.members) {
            Some(_) => Ok(()),
            None => Err(FieldError::new(
                "params.members",
                None,
                format!("unknown members {:?}; known: plain, encoding", p.members),
            )),
        }
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        // Checked when the file is read (`check`), so a wrong name never gets here.
        let members = Members::parse(&p.members).unwrap_or_default();
        let params = SetParams {
            members,
            variant: *self,
            ops: p.ops.get(),
            read_every: p.read_every.get(),
            dirtiness_threshold: p.dirtiness_threshold.get(),
            retries: p.retries.get(),
            think: p.think_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
