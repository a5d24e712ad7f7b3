//! A scenario another thread can build again: its setup closures are the model's own
//! and stay on the thread that made them, so a search shared over threads gives each
//! thread the file's text to read again.

use std::path::PathBuf;

use crate::exec::ExecConfig;
use crate::model::Family;

use super::{Origin, Scenario, ScenarioError};

/// The text a scenario was read from (after every change made to it), the families it
/// was read with and the settings it runs with (its `config`, which a caller may have
/// changed after reading it): enough to build the same scenario on another thread.
#[derive(Clone)]
pub(crate) struct Portable {
    path: PathBuf,
    text: String,
    families: Vec<&'static dyn Family>,
    config: ExecConfig,
}

impl Scenario {
    /// What another thread needs to build this scenario again; `None` for a scenario
    /// built in code ([`crate::check()`]), which only its own thread can run.
    pub(crate) fn portable(&self) -> Option<Portable> {
        match &self.origin {
            Origin::File(origin) => Some(Portable {
                path: self.path.clone(),
                text: origin.0.clone(),
                families: origin.1.to_vec(),
                config: self.config.clone(),
            }),
            Origin::Code { .. } => None,
        }
    }
}

impl Portable {
    /// The scenario, read again, with the settings it ran with.
    pub(crate) fn build(&self) -> Result<Scenario, ScenarioError> {
        let mut scenario = Scenario::parse(&self.path, &self.text, &self.families)?;
        scenario.config = self.config.clone();
        Ok(scenario)
    }
}
