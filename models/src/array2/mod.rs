//! The append-mostly array (RECIPES.md §7, DS `MCArray2`).
//!
//! One key `array_<name>` holds the elements, each serialized as its digits and a space;
//! adding an element is one `append`, with no lock.
//!
//! - `array2/as-written`: DS's `add` has its error handling inverted: when the key does
//!   not exist the failed `append` makes `add` return at once, so the element is dropped
//!   and the key is never created (nobody ever creates it: every element is lost). When
//!   the key exists it appends and then issues an `add` that fails.
//! - `array2/fixed`: `append`; on `NOT_STORED` `add`; on `NOT_STORED` start over. It
//!   spins for ever when the append fails because the value would pass the item size
//!   limit (`NOT_STORED` too, while the key exists).
//!
//! Invariant `array.no_lost_elements`: at quiescence every element whose `add` completed
//! is in the array. Metrics: `array2.completed`, `array2.elements`, `array2.lost`,
//! `array2.duplicated` (an append retried after a lost reply lands twice),
//! `array2.bytes`.

mod harness;
mod recipe;

pub use harness::{Array2Params, element, setup};
pub use recipe::{Array2, Array2Variant, decode_ints, encode_int};

use mcsim::prelude::*;

/// An array2 scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Elements each client adds.
    pub elements: Count,
    /// Retries after a timeout.
    pub retries: Count,
    /// Pause between a client's operations.
    pub think_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            elements: Count(3),
            retries: Count(3),
            think_ms: Millis(0),
        }
    }
}

impl Model for Array2Variant {
    const NAME: &'static str = "array2";
    const VARIANTS: &'static [(&'static str, Array2Variant)] = &[
        ("as-written", Array2Variant::AsWritten),
        ("fixed", Array2Variant::Fixed),
    ];
    const INVARIANTS: &'static [&'static str] = &["array.no_lost_elements"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "as-written",
            source: "DS MCArray2",
            says: "add(element) is one append (add when missing), so every element added is kept.",
            presented_as_correct: true,
            magnitude: &["array.no_lost_elements.lost"],
        },
        Claim {
            variant: "fixed",
            source: "mcsim (the seed with its error handling corrected)",
            says: "append, add on NOT_STORED, retry: every element added is kept.",
            presented_as_correct: true,
            magnitude: &["array.no_lost_elements.lost"],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = Array2Params {
            variant: *self,
            elements: p.elements.get(),
            retries: p.retries.get(),
            think: p.think_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
