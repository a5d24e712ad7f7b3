//! Stateful property test of the simulated memcached against a small reference model.
//!
//! The model below is written from the text of MEMCACHED.md (and memcached 1.6.18's
//! `proto_text.c`, `memcached.c` and `items.c` where the text is silent), not from the
//! simulator: a map from key to item, a global cas counter and the whole-second server
//! clock. Proptest generates sequences of commands and time advances over a small key pool
//! so that commands collide; every reply of the server must equal the model's prediction,
//! and a failure shrinks to a minimal sequence.
//!
//! `PROPTEST_CASES` sets the number of sequences (default 256); sequences have up to
//! [`MAX_STEPS`] steps.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::memcache::{Exptime, Key};
use mcsim::protocol::{ArithOp, Reply, Request, StoreMode, ValueEntry};
use mcsim::server::{Server, ServerConfig};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Longest generated sequence.
pub(crate) const MAX_STEPS: usize = 60;
/// The tick memcached's clock shows at start.
pub(crate) const FIRST_TICK: u32 = 62;
/// Relative exptimes go up to 30 days; above, an exptime is a unix time.
pub(crate) const REALTIME_MAXDELTA: i64 = 2_592_000;
/// The unix time at virtual time zero (the server boots then).
pub(crate) const UNIX_AT_ZERO: i64 = 1_700_000_000;
/// Microseconds per second.
pub(crate) const SEC: u64 = 1_000_000;
/// The key pool: few keys, so commands collide. One holds a tab, which memcached accepts.
pub(crate) const KEYS: [&str; 4] = ["a", "b", "key:c", "d\td"];
/// `CLIENT_ERROR` text for a value that is not a number.
pub(crate) const NON_NUMERIC: &str = "cannot increment or decrement non-numeric value";

mod cases;
mod harness;
mod reference;
mod steps;

#[allow(unused_imports)]
use cases::*;
#[allow(unused_imports)]
use harness::*;
#[allow(unused_imports)]
use reference::*;
#[allow(unused_imports)]
use steps::*;
