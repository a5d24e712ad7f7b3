//! Memcached recipes modelled for mcsim: one module per recipe family, each holding the
//! recipe as written and its fixed variants, the workload that exercises it, and its named
//! invariants, as a [`mcsim::model::Model`]. [`RECIPES`] lists them for scenario files.

pub mod array;
pub mod array2;
pub mod arrivals;
pub mod cache;
pub mod catalog;
pub mod cluster;
pub mod counter;
#[cfg(test)]
mod draw;
pub mod eventlog;
pub mod ghost;
pub mod gutter;
pub mod herd;
pub mod lock;
pub mod lookaside;
pub mod online;
mod pools;
mod retry;
pub mod row;
pub mod set;
pub mod table;
pub mod tags;
pub mod visitor;
pub mod warmup;

pub use catalog::RECIPES;
