//! Memcached recipes modelled for mcsim: one module per recipe family, each holding the
//! recipe as written and its fixed variants, the workload that exercises it, and its named
//! invariants. [`Recipes`] is the catalog scenario files name recipes from.

pub mod catalog;
pub mod counter;
pub mod lock;

pub use catalog::Recipes;
