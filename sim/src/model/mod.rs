//! The public model API: how a recipe family is described to mcsim, once, in one place.
//!
//! A family is a type implementing [`Model`], usually the enum of its variants (the recipe
//! as people first write it, the fixed one, …). The trait carries everything mcsim needs:
//! the family's name in scenario files, its variants, its parameters (a serde struct with
//! defaults: a scenario's `[params]` table is read into it, and a wrong or unknown field is
//! an error naming the file, line and field), its named invariants, and
//! [`Model::setup`], which registers each virtual client's workload, the ghost state the
//! harness keeps and the checks over it on a [`Sim`].
//!
//! Nothing else is registered by hand. [`family`] turns a model into the [`Family`] entry
//! that scenario files, the command line (`mcsim_cli::main`) and the gate look up by
//! name; [`check`](crate::check()) ([`crate::testing`]) runs a model from a plain `#[test]`.
//!
//! Ghost state the explorer must tell apart (who holds the lock, how many increments
//! completed) is fingerprinted with [`Sim::ghost`]: two states with the same servers,
//! clients and ghost fingerprint are the same state.
//!
//! A model never reads the wall clock, never uses a thread RNG and never iterates a std
//! `HashMap`: its executions must replay from their schedule.

mod claim;
mod family;
pub(crate) mod field;
mod knobs;
mod params;

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use claim::Claim;
pub use family::{Family, Setup, family};
pub use knobs::{Count, MAX_COUNT, Millis, Seconds, YEAR_S};
pub use params::ParamSource;
pub(crate) use params::recheck_params;

use crate::clock::Skew;
use crate::exec::Sim;
pub use field::FieldError;

/// A recipe family: its variants, parameters, workload and invariants.
///
/// Implement it on the enum of the family's variants; see the crate's README, "Testing
/// your own recipe", for a whole example.
pub trait Model: Copy + PartialEq + Debug + 'static {
    /// The family's name in scenario files (`recipe = "lock"`).
    const NAME: &'static str;

    /// Every variant with its name in scenario files (`variant = "add"`).
    const VARIANTS: &'static [(&'static str, Self)];

    /// The invariants [`Model::setup`] registers, by name: the verdicts a scenario may
    /// expect besides `pass`, `livelock`, `stuck`, `panic` and `client_error`.
    const INVARIANTS: &'static [&'static str];

    /// What each variant's source claims, for the findings report (`mcsim findings`);
    /// a variant without one is reported by its invariants alone.
    const CLAIMS: &'static [Claim] = &[];

    /// The parameters, read from a scenario's `[params]` table: every field needs a
    /// default (`#[serde(default)]` with a `Default` impl). Fields mcsim's own types
    /// ([`Count`], [`Millis`], [`Seconds`]) check their range as they are read.
    type Params: Serialize + DeserializeOwned + Default + Clone + Debug + 'static;

    /// Checks what the types of [`Model::Params`] cannot: one field against another, or
    /// against the scenario (`cx.servers`). An error names its field as
    /// `params.<name>`; the loader adds the line.
    fn check_params(&self, params: &Self::Params, cx: &Context) -> Result<(), FieldError> {
        let _ = (params, cx);
        Ok(())
    }

    /// Registers one execution: each client's workload ([`Sim::client`]), the ghost state
    /// and its fingerprint ([`Sim::ghost`]), and the invariants ([`Sim::always`] after
    /// every step, [`Sim::at_end`] at quiescence, over the state and the history).
    ///
    /// **Deaths.** Under [`FaultPlan::deaths`](crate::FaultPlan::deaths) a client's
    /// future is dropped where it stands, so ghost state it would have undone after its
    /// pending `.await` stays as it was. Keep who holds a lock or a permit in
    /// [`Sim::holders`] (a dead client leaves it), or undo your own ghost state in
    /// [`Sim::on_death`]; otherwise a dead holder counts as inside forever and an
    /// invariant blames the recipe for it.
    fn setup(&self, params: &Self::Params, cx: &Context, sim: &mut Sim);

    /// This variant's name.
    fn variant_name(&self) -> &'static str {
        Self::VARIANTS
            .iter()
            .find(|(_, v)| v == self)
            .map(|(name, _)| *name)
            .unwrap_or("?")
    }
}

/// What a model's setup needs to know of the scenario besides its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// Number of clients.
    pub clients: usize,
    /// Each client's clock skew (one per client).
    pub skews: Vec<Skew>,
    /// Number of servers.
    pub servers: usize,
    /// The servers' item size limit, in bytes.
    pub item_size_max: u32,
}

impl Context {
    /// `clients` clients without skew, on one server with memcached's default limits.
    pub fn new(clients: usize) -> Context {
        Context {
            clients,
            skews: vec![Skew::default(); clients],
            servers: 1,
            item_size_max: crate::server::ServerConfig::default().item_size_max,
        }
    }

    /// Client `c`'s clock skew.
    pub fn skew(&self, c: usize) -> Skew {
        self.skews.get(c).copied().unwrap_or_default()
    }
}
