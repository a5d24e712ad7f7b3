//! mcsim: deterministic simulation and model checking of memcached recipes.
//!
//! Recipes (locks, counters, windows, logs, caches built from memcached's atomic commands)
//! are ordinary async Rust written against the [`Memcache`] trait. mcsim runs many virtual
//! clients of a recipe against a simulated memcached 1.6 ([`server::Server`]) whose
//! whole-second clock, evictions, key loss and crashes it controls ([`exec`], [`fault`]),
//! checks named invariants ([`invariant`], [`lin`]), and turns every failure into a
//! replayable, shrunk counterexample ([`explore::Schedule`], [`shrink`]); within bounds it
//! proves a recipe by searching every schedule ([`exhaustive`]). The same recipe
//! code runs under loom, and against a real memcached through `mcsim_real::TcpClient`
//! (the `mcsim-real` crate, which also replays a counterexample on a real memcached:
//! `mcsim confirm`); the simulated server is served on TCP, with faults and a lockstep
//! scheduler, for clients in any language by the `mcsim-serve` crate (`mcsim serve`).
//! This crate is what a model author depends on: the engine, the simulated server, the
//! model API, the checks from tests and the prelude, without the command line's
//! dependencies.
//!
//! A broken lock (`get`, then `set` if missing), the run that catches it, and its replay:
//!
//! ```
//! use std::cell::RefCell;
//! use std::rc::Rc;
//! use mcsim::{Exptime, ExecConfig, Failure, Key, Memcache, Random, Replay, Skew, execute};
//!
//! let setup = |sim: &mut mcsim::Sim| {
//!     let inside = Rc::new(RefCell::new(0));
//!     for _ in 0..2 {
//!         let inside = inside.clone();
//!         sim.client(Skew::default(), move |mc| async move {
//!             let key = Key::new("lock").unwrap();
//!             if mc.get(&key).await?.is_none() {
//!                 mc.set(&key, "1".into(), Exptime::secs(10)).await?;
//!                 *inside.borrow_mut() += 1; // in the critical section
//!                 mc.sleep(std::time::Duration::from_millis(5)).await;
//!                 *inside.borrow_mut() -= 1;
//!             }
//!             Ok(())
//!         });
//!     }
//!     sim.always("lock.exclusion", move || match *inside.borrow() {
//!         n if n > 1 => Err(Failure::new(format!("{n} clients inside"))),
//!         _ => Ok(()),
//!     });
//! };
//! let config = ExecConfig::default();
//! let failing = (0..100)
//!     .map(|seed| execute(&config, &setup, &mut Random::new(seed), 0))
//!     .find(|e| !e.verdict.is_pass())
//!     .expect("two clients both see the lock free");
//! assert_eq!(failing.verdict.label(), "lock.exclusion");
//! let replayed = execute(&config, &setup, &mut Replay::new(failing.schedule.clone()), 0);
//! assert_eq!(replayed.trace.hash(), failing.trace.hash());
//! println!("{}\nreplay with --schedule {}", failing.trace.render(), failing.schedule);
//! ```
//!
//! The engine never reads the wall clock, never uses a thread RNG and never iterates a
//! std `HashMap`: the same scenario and seed give a byte-identical trace.
//!
//! A loop that runs many executions of one configuration and keeps one result at a time
//! runs them through one [`Runs`] into one [`Execution`], as `mcsim check` and
//! `mcsim explore` do: the configuration's settings are applied to the engine once, and
//! the result's buffers (the schedule, the checks, the timeline) are reused by every
//! execution.
//!
//! **Your own recipes.** A recipe family is a type implementing [`Model`] (its variants,
//! serde parameters, invariants and the setup above); [`check()`] runs it from a `#[test]`
//! in one expression and panics with the shrunk timeline and an `MCSIM_REPLAY` line on a
//! failure; `mcsim_cli::main` (the `mcsim-cli` crate) gives a crate with its own
//! families the whole command line (`run`, `replay`, `explore`, the `check` gate). One `use mcsim::prelude::*;` brings
//! what a model needs. [`guide`] writes one from the start: the dependency lines, the
//! model, deaths, faults, proofs and replaying a failure.
//!
//! **Reports.** [`report`] turns runs into what people read: the failure report with its
//! replay lines, the suite table (at most 100 columns), JSON and JUnit, shard results
//! merged ([`report::merge`]) and each counterexample as a swimlane timeline
//! ([`report::timeline`]); the `mcsim-cli` crate draws them as one self-contained HTML
//! page (sweeps as plots, metrics as histograms: [`histogram`]) and measures every
//! recipe's claim: rates with their intervals, magnitudes, sweeps and counterexamples
//! confirmed on a real memcached (`mcsim findings`).

pub mod clock;
pub mod cluster;
pub mod codec;
mod decimal;
pub mod exec;
pub mod exhaustive;
pub mod explore;
pub mod fault;
pub mod guide;
pub mod histogram;
pub mod history;
pub mod invariant;
pub mod lin;
#[cfg(loom)]
pub mod loom;
pub mod memcache;
pub mod model;
mod plural;
pub mod prelude;
pub mod protocol;
pub mod report;
pub mod run;
pub mod scenario;

pub mod server;
pub mod shrink;
pub mod testing;
pub mod trace;

pub use clock::{ServerClock, Skew, VirtualTime};
pub use exec::{Client, ExecConfig, Execution, Holders, Runs, Sim, execute};
pub use explore::{Choice, Decided, Needs, Pct, Pos, Random, Replay, Schedule, Strategy, Swarm};
pub use fault::{Fault, FaultKind, FaultPlan};
pub use invariant::{EndView, Failure, Verdict, Violation};
pub use memcache::{Cas, Exptime, Key, KeyError, McError, Memcache, Transport, Value};
pub use model::Model;
pub use protocol::{MetaFlag, MetaReply, Reply, Request};
pub use server::{Server, ServerConfig};
pub use testing::check;
