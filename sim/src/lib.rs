//! mcsim: deterministic simulation and model checking of memcached recipes.
//!
//! Recipes (locks, counters, windows, logs, caches built from memcached's atomic commands)
//! are ordinary async Rust written against the [`Memcache`] trait. mcsim runs them against
//! a simulated memcached 1.6 ([`server::Server`]) whose whole-second clock, evictions and
//! crashes it controls, and the same code runs against a real server through
//! a real memcached.
//!
//! The engine never reads the wall clock, never uses a thread RNG and never iterates a
//! std `HashMap`: the same scenario and seed give a byte-identical trace.

pub mod check;
pub mod clock;
pub mod cluster;
pub mod codec;
pub mod exec;
pub mod explore;
pub mod fault;
pub mod history;
pub mod lin;
#[cfg(loom)]
pub mod loom;
pub mod memcache;
pub mod protocol;
pub mod real;
pub mod report;
pub mod run;
pub mod scenario;

pub mod server;
pub mod shrink;
pub mod trace;

pub use check::{EndView, Failure, Verdict, Violation};
pub use clock::{ServerClock, Skew, VirtualTime};
pub use exec::{Client, ExecConfig, Execution, Sim, execute};
pub use explore::{Choice, Pct, Random, Replay, Schedule, Strategy};
pub use fault::{Fault, FaultKind, FaultPlan};
pub use memcache::{Cas, Exptime, Key, KeyError, McError, Memcache, Transport, Value};
pub use protocol::{MetaFlag, MetaReply, Reply, Request};
pub use real::TcpClient;
pub use server::{Server, ServerConfig};
