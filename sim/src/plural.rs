//! Counts in report text: "1 fault", "2 faults".

/// The plural ending of a count of `n`: none for one, "s" otherwise.
pub(crate) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
