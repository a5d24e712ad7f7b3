//! What a scenario file sets around its recipe, read on its own: the servers, how long a
//! call takes and the faults. `mcsim test --scenario FILE` runs a program, whose code is
//! the recipe, in the surroundings of a scenario written for a model (or of a file that
//! gives only these tables).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::SurroundingsFile;
use super::limits::{check_clients, check_world, locate};
use super::source::read_source;
use super::{FieldError, ScenarioError, fault_plan, located, serde_error};
use crate::fault::FaultPlan;
use crate::server::ServerConfig;

/// What a scenario file sets around its recipe.
#[derive(Debug, Clone)]
pub struct Surroundings {
    /// The file.
    pub path: PathBuf,
    /// How many servers, each with these settings (`[servers]`).
    pub servers: usize,
    /// Each server's settings; its tick phase is pinned if `phase_free` is false.
    pub server: ServerConfig,
    /// True if the file leaves the servers' tick phase free (no `phase_ms`).
    pub phase_free: bool,
    /// How long a call takes, at least and at most (`timing.latency_us`).
    pub latency: (Duration, Duration),
    /// The faults (`[faults]`).
    pub faults: FaultPlan,
    /// The fields the file sets that concern its recipe and its in-process clients, not
    /// what surrounds them, in the file's order of tables: `recipe`, `params`,
    /// `timing.skew_ms`, `servers.distribution`, `faults.timeout_ms`, `[expect]`, ….
    pub recipe_fields: Vec<String>,
    source: String,
}

impl Surroundings {
    /// Reads what `path` sets around its recipe, with every check `check` makes of those
    /// tables; the recipe's own fields may be there or not.
    pub fn load(path: &Path) -> Result<Surroundings, ScenarioError> {
        let source = read_source(path)?;
        let f: SurroundingsFile =
            toml::from_str(&source).map_err(|e| serde_error(path, &source, e))?;
        let at = |e: FieldError| located(path, &source, e);
        if let Some(clients) = &f.clients {
            check_clients(clients).map_err(at)?;
        }
        check_world(&f.world(), &source).map_err(at)?;
        if f.sweep.is_some() {
            return Err(at(FieldError::new(
                "sweep",
                locate_table(&source, "sweep"),
                "a sweep runs many points; give one point's file (each swept field set to one value)",
            )));
        }
        let faults = fault_plan(&f.faults).map_err(at)?;
        let [least, most] = *f.timing.latency_us.get_ref();
        let mut recipe_fields = Vec::new();
        let mut note = |set: bool, field: &str| {
            if set {
                recipe_fields.push(field.to_string());
            }
        };
        note(f.name.is_some(), "name");
        note(f.recipe.is_some(), "recipe");
        note(f.variant.is_some(), "variant");
        note(f.clients.is_some(), "clients");
        note(!f.params.is_empty(), "params");
        let has = |table: &str, key: &str| locate(&source, table, key).is_some();
        for key in ["skew_ms", "skews_ms", "max_steps", "max_time_s"] {
            note(has("timing", key), &format!("timing.{key}"));
        }
        note(has("servers", "distribution"), "servers.distribution");
        note(has("faults", "timeout_ms"), "faults.timeout_ms");
        note(locate_table(&source, "explore").is_some(), "explore");
        note(f.expect.is_some(), "expect");
        Ok(Surroundings {
            path: path.to_path_buf(),
            servers: *f.servers.count.get_ref(),
            server: f.servers.config(),
            phase_free: f.servers.phase_ms.is_none(),
            latency: (Duration::from_micros(least), Duration::from_micros(most)),
            faults,
            recipe_fields,
            source,
        })
    }

    /// An error about `field` (a dotted path, `faults.die`), at its line in the file.
    pub fn error(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        let (table, key) = field.rsplit_once('.').unwrap_or(("", field));
        let span = locate(&self.source, table, key).or_else(|| locate_table(&self.source, field));
        located(
            &self.path,
            &self.source,
            FieldError::new(field, span, message),
        )
    }
}

/// Where the header `[table]` is.
fn locate_table(source: &str, table: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        if t.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .is_some_and(|h| h.trim() == table)
        {
            let start = offset + line.find('[').unwrap_or(0);
            return Some(start..start + t.len());
        }
        offset += line.len();
    }
    None
}
