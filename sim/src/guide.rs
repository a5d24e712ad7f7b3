//! # Writing your own model
//!
//! This page takes a recipe from nothing to a checked, proved and replayable model, in a
//! crate of your own. The whole example at the end is compiled and run as a test of
//! mcsim's documentation.
//!
//! ## 1. Depend on mcsim
//!
//! ```toml
//! [dependencies]
//! mcsim = { path = "../mcsim/sim" }   # a checkout of mcsim (or { git = "<its URL>" })
//! serde = { version = "1.0", features = ["derive"] }
//!
//! # Tests run in the dev profile. Build the dependencies optimized, or a check that takes
//! # 0.6 s so takes about 45 s. (In a workspace, this goes in the root Cargo.toml.)
//! [profile.dev.package."*"]
//! opt-level = 2
//! ```
//!
//! Then `use mcsim::prelude::*;` is the only import a model needs.
//!
//! ## 2. Write the recipe against [`Memcache`](crate::Memcache)
//!
//! A recipe is ordinary async Rust over the [`Memcache`](crate::Memcache) trait: `get`,
//! `set`, `add`, `incr`, `cas`, the meta commands, `sleep` and `now`. mcsim's clients
//! implement it, and so do `mcsim_real::TcpClient` (a real memcached, in the `mcsim-real`
//! crate) and the loom backend, so the code you test is the code you ship.
//!
//! ## 3. Describe the family: [`Model`](crate::Model)
//!
//! A family is a type, usually the enum of its variants: the recipe as people first write
//! it and the fixed one. [`Model`](crate::Model) names the family, its variants, its
//! invariants and its parameters (a serde struct with defaults; [`Count`](crate::model::Count),
//! [`Millis`](crate::model::Millis) and [`Seconds`](crate::model::Seconds) check their
//! range, in a scenario file and in code alike). Its `setup` registers, for one execution:
//!
//! - each client's workload ([`Sim::client`](crate::Sim::client));
//! - the ghost state the harness keeps of what clients *observed* through the recipe's
//!   own calls (who believes it holds the lock, which increments returned), with its
//!   fingerprint ([`Sim::ghost`](crate::Sim::ghost)) so an exhaustive search tells states
//!   apart;
//! - the invariants over that state: [`Sim::always`](crate::Sim::always) after every
//!   step, [`Sim::at_end`](crate::Sim::at_end) once all clients are done.
//!
//! **Notes in the timeline.** `mc.note(format_args!("holds permit {slot}"))` writes a
//! line under the client's name in the timeline of a failure and of `mcsim replay`. Only a
//! traced execution keeps notes, and `format_args!` is written out only then, so the
//! executions a search or a sampling run makes pay nothing for them.
//!
//! **Pools of their own.** A recipe that addresses servers itself (a primary and a
//! gutter pool, a replica) holds one handle per server:
//! [`Client::on_server`](crate::Client::on_server) gives the same client with every call
//! sent to that server, whatever the key distribution picks; a server out of the clients'
//! list refuses it. The `gutter` family writes its failover route against two such
//! handles, as `Memcache`s, and checks in `Model::check_params` that the scenario has the
//! servers it addresses.
//!
//! **Clients die.** Under [`FaultPlan::deaths`](crate::FaultPlan::deaths) a client's
//! future is dropped where it stands, and the code after its pending `.await` never runs.
//! Ghost state it would have undone stays, and an invariant would blame the recipe for a
//! holder that no longer exists. Keep who is inside in [`Sim::holders`](crate::Sim::holders),
//! which forgets a dead client, or undo your own state in
//! [`Sim::on_death`](crate::Sim::on_death).
//!
//! **Identical clients.** When every client runs the same code and nothing it does or
//! stores depends on its number, say so with [`Sim::symmetric`](crate::Sim::symmetric)
//! and hash each client's own ghost state there (whether it is inside, say) instead of a
//! set of client numbers in [`Sim::ghost`](crate::Sim::ghost). The exhaustive search then
//! counts states that differ only by which client is which once: eight clients of a lock
//! cost about what their multiset costs, not every ordering of it. Check the claim the way
//! the lock family does: the same verdicts with and without it on broken variants.
//!
//! **What a client remembers.** mcsim cannot look inside a client's future, so the search
//! tells two states of a client apart by everything the client observed: a reader that
//! saw a hit, then a miss, and one that saw them the other way round differ for ever
//! after. A workload loop whose operations start afresh says so at its top,
//! `mc.remember_only((page, …))` with the loop index and any value read from ghost state
//! for this operation ([`Client::remember_only`](crate::Client::remember_only)); a
//! value read from ghost state and kept across an `.await` is added with
//! [`Client::remember`](crate::Client::remember). Leave what only measures (hit counts,
//! the longest wait, a failure's details) out of the ghost fingerprint. The tagged and
//! dog-pile caches do all three; check the claim with `mcsim explore --whole-memory
//! --no-symmetry` (`models/tests/summaries.rs` compares every verdict).
//!
//! ## 4. Check it from a `#[test]`
//!
//! [`check`](crate::check()) runs a variant in one expression: `.clients(n)`, parameters
//! with `.with(|p| …)`, faults with `.faults(plan)` (one constructor per kind, aimed at
//! keys with [`FaultPlan::on_keys`](crate::FaultPlan::on_keys), combined with
//! [`FaultPlan::and`](crate::FaultPlan::and)), and an end:
//!
//! - `.random(n)`, `.swarm(n)`, `.pct(depth, n)` or `.pos(n)`: sampled executions, each
//!   from its own seed; `.swarm(n)` boosts and aims the plan's faults to find a fault's
//!   bug sooner, `.random(n)` keeps the plan's probabilities (for rates), `.pos(n)` finds
//!   an interleaving bug amid calls on unrelated keys sooner;
//! - `.measure(n)`: `n` random executions under the plan's probabilities, each to its
//!   end and none judged: `figures.rate("invariant")` is how often it broke;
//! - `.dfs(max_preemptions)`: every schedule within the bounds, with
//!   `.max_faults(n)`, `.max_phases(n)` and `.draws(n)`; without a counterexample it
//!   returns a [`Proof`](crate::testing::Proof) that prints as one sentence.
//!
//! A variant that must break says so with `.expect("invariant")`; `.only(&[…])` checks
//! some invariants only. The search for an expected verdict ends at the first violation
//! of any other: `.expect("stuck").only(&[])` seeks a stuck run past every invariant,
//! and a check that met another verdict first says which selection to make. A check that does not get the verdict it expects panics with
//! every invariant violated, the shrunk timeline, and a line that reruns exactly that
//! execution in that test:
//!
//! ```text
//! MCSIM_REPLAY='lease/get-set:2:mc1:…#5c2e…' cargo test -p my-crate --test lease -- --exact my_test --include-ignored --nocapture
//! ```
//!
//! ## 5. The whole example
//!
//! A lease: one client at a time may act as the leader for a while. `get` then `set` is
//! the version people write first; `add` with a TTL is the fix, and it holds while a
//! leader's term stays inside the TTL, even when leaders die.
//!
//! ```
//! use std::time::Duration;
//!
//! use mcsim::prelude::*;
//!
//! #[derive(Debug, Clone, Copy, PartialEq)]
//! enum Lease {
//!     GetSet,
//!     Add,
//! }
//!
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
//! #[serde(default, deny_unknown_fields)]
//! struct Params {
//!     /// Terms each client tries to serve.
//!     terms: Count,
//!     /// How long a leader acts.
//!     term_ms: Millis,
//!     /// The lease's TTL.
//!     ttl_s: Seconds,
//! }
//!
//! impl Default for Params {
//!     fn default() -> Params {
//!         Params { terms: Count(2), term_ms: Millis(200), ttl_s: Seconds(2) }
//!     }
//! }
//!
//! /// The recipe: try to become the leader, and step down.
//! async fn elect(mc: &impl Memcache, how: Lease, me: usize, ttl: Exptime) -> Result<bool, McError> {
//!     let key = Key::new("leader").expect("a valid key");
//!     match how {
//!         Lease::GetSet => {
//!             if mc.get(&key).await?.is_some() {
//!                 return Ok(false);
//!             }
//!             mc.set(&key, me.to_string().into(), ttl).await?;
//!             Ok(true)
//!         }
//!         Lease::Add => match mc.add(&key, me.to_string().into(), ttl).await {
//!             Ok(()) => Ok(true),
//!             Err(McError::NotStored) => Ok(false),
//!             Err(e) => Err(e),
//!         },
//!     }
//! }
//!
//! async fn step_down(mc: &impl Memcache) -> Result<(), McError> {
//!     match mc.delete(&Key::new("leader").expect("a valid key")).await {
//!         Ok(()) | Err(McError::NotFound) => Ok(()),
//!         Err(e) => Err(e),
//!     }
//! }
//!
//! impl Model for Lease {
//!     const NAME: &'static str = "lease";
//!     const VARIANTS: &'static [(&'static str, Lease)] =
//!         &[("get-set", Lease::GetSet), ("add", Lease::Add)];
//!     const INVARIANTS: &'static [&'static str] = &["lease.one_leader"];
//!     type Params = Params;
//!
//!     fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
//!         // Who believes it leads: what the clients observed, not what the server holds.
//!         // A leader that dies leaves it.
//!         let leaders = sim.holders();
//!         for c in 0..cx.clients {
//!             let (leaders, p, how) = (leaders.clone(), p.clone(), *self);
//!             sim.client(cx.skew(c), move |mc| async move {
//!                 let ttl = Exptime::secs(p.ttl_s.get());
//!                 for _ in 0..p.terms.get() {
//!                     while !elect(&mc, how, c, ttl).await? {
//!                         mc.sleep(Duration::from_millis(50)).await;
//!                     }
//!                     leaders.enter(c);
//!                     mc.sleep(p.term_ms.get()).await; // acting as the leader
//!                     leaders.leave(c);
//!                     step_down(&mc).await?;
//!                 }
//!                 Ok(())
//!             });
//!         }
//!         sim.always("lease.one_leader", move || match leaders.clients() {
//!             l if l.len() > 1 => Err(Failure::new(format!("leaders at once: {l:?}"))),
//!             _ => Ok(()),
//!         });
//!     }
//! }
//!
//! // `get` + `set`: two clients see no leader and both lead.
//! let found = check(Lease::GetSet).clients(2).expect("lease.one_leader").random(500);
//! assert_eq!(found.failure.expect("two leaders").clients, 2);
//!
//! // `add`: one leader, even when leaders die (their lease expires) and pause briefly.
//! let held = check(Lease::Add)
//!     .clients(3)
//!     .faults(FaultPlan::deaths().and(FaultPlan::pauses(Duration::from_millis(300))))
//!     .random(500);
//! assert_eq!(held.verdicts["pass"], 500);
//! assert!(held.faults["die"].injected > 0);
//!
//! // A pause past the TTL, aimed at a leader: its lease expires under it.
//! check(Lease::Add)
//!     .clients(2)
//!     .faults(FaultPlan::pauses(Duration::from_secs(3)).on_keys(&["leader"]))
//!     .expect("lease.one_leader")
//!     .random(500);
//!
//! // Every schedule of two clients, within two preemptions and one death.
//! let proved = check(Lease::Add)
//!     .clients(2)
//!     .with(|p| p.terms = Count(1))
//!     .faults(FaultPlan::deaths())
//!     .max_phases(2)
//!     .dfs(Some(2));
//! let proof = proved.proof.expect("no schedule breaks it");
//! assert!(proof.to_string().starts_with("every schedule with"), "{proof}");
//! println!("{proof}");
//! ```
//!
//! ## 6. Scenario files and the command line
//!
//! The command line lives in a crate of its own, `mcsim-cli`, so that a crate with
//! models alone does not build it. A binary that depends on it and on your model crate
//! (`mcsim-cli = { path = "../mcsim" }` beside `mcsim`, or the `git` source you cloned
//! mcsim from) and has a `main` that is one call,
//! `fn main() -> std::process::ExitCode { mcsim_cli::main(&[family::<Lease>()]) }`, gets
//! the whole command line for
//! its families: scenario files (`recipe = "lease"`, a `[params]`
//! table read into `Params`, errors at their file, line and field), `run`, `replay`,
//! `explore` and the `check` gate with its JSON, JUnit and HTML reports. mcsim's own
//! sixteen families are written this way, one folder each.
