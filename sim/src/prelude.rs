//! Everything a model author needs, in one `use mcsim::prelude::*;`.
//!
//! The [`Model`] trait and the parameter types that check their range, the [`Sim`] a
//! setup registers clients and invariants on, the [`Memcache`] calls recipes make, and
//! [`check`](crate::check()) to run a model from a `#[test]`. The `Serialize` and
//! `Deserialize` derives come from serde (the model's crate depends on `serde` itself).

pub use serde::{Deserialize, Serialize};

pub use crate::clock::{Skew, VirtualTime};
pub use crate::exec::{Client, Holders, Sim};
pub use crate::fault::{FaultKind, FaultPlan};
pub use crate::history::History;
pub use crate::invariant::{EndView, Failure};
pub use crate::memcache::{Cas, Exptime, Key, McError, Memcache, Value};
pub use crate::model::{Claim, Context, Count, Family, FieldError, Millis, Model, Seconds, family};
pub use crate::testing::{Check, Figures, check};
