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

/// The recipe family's name.
pub const FAMILY: &str = "array2";

/// Its variants.
pub const VARIANTS: &[&str] = &["as-written", "fixed"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["array.no_lost_elements"];

/// Builds an append-mostly array scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let params = Array2Params {
        variant: Array2Variant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        elements: p.count("elements", 3)?,
        retries: p.count("retries", 3)?,
        think: p.millis("think_ms", 0)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
