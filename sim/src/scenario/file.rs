//! The scenario file format, as serde reads it. `scenarios/README.md` documents it.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioFile {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    pub recipe: Spanned<String>,
    pub variant: Spanned<String>,
    pub clients: Spanned<usize>,
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    pub timing: TimingFile,
    #[serde(default)]
    pub servers: ServersFile,
    #[serde(default)]
    pub faults: FaultsFile,
    #[serde(default)]
    pub explore: ExploreFile,
    pub expect: ExpectFile,
    /// Read by [`super::sweep`]; ignored here.
    #[serde(default)]
    #[allow(dead_code)]
    pub sweep: Option<toml::Table>,
}

impl ScenarioFile {
    /// What the file sets around its recipe.
    pub fn world(&self) -> WorldFile<'_> {
        WorldFile {
            timing: &self.timing,
            servers: &self.servers,
            faults: &self.faults,
            explore: &self.explore,
        }
    }
}

/// A scenario file read for what it sets around its recipe (`mcsim test --scenario`):
/// every field a scenario has is allowed, and none of the recipe's is needed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SurroundingsFile {
    pub name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub description: String,
    pub recipe: Option<String>,
    pub variant: Option<String>,
    pub clients: Option<Spanned<usize>>,
    #[serde(default)]
    pub params: toml::Table,
    #[serde(default)]
    pub timing: TimingFile,
    #[serde(default)]
    pub servers: ServersFile,
    #[serde(default)]
    pub faults: FaultsFile,
    #[serde(default)]
    pub explore: ExploreFile,
    pub expect: Option<ExpectFile>,
    pub sweep: Option<toml::Table>,
}

impl SurroundingsFile {
    /// What the file sets around its recipe.
    pub fn world(&self) -> WorldFile<'_> {
        WorldFile {
            timing: &self.timing,
            servers: &self.servers,
            faults: &self.faults,
            explore: &self.explore,
        }
    }
}

/// The tables of a scenario file that set the world around its recipe.
pub(crate) struct WorldFile<'a> {
    pub timing: &'a TimingFile,
    pub servers: &'a ServersFile,
    pub faults: &'a FaultsFile,
    pub explore: &'a ExploreFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TimingFile {
    pub latency_us: Spanned<[u64; 2]>,
    pub skew_ms: Option<Spanned<[i64; 2]>>,
    pub skews_ms: Option<Spanned<Vec<i64>>>,
    pub max_steps: u64,
    pub max_time_s: u64,
}

impl Default for TimingFile {
    fn default() -> TimingFile {
        TimingFile {
            latency_us: Spanned::new(0..0, [100, 500]),
            skew_ms: None,
            skews_ms: None,
            max_steps: 100_000,
            max_time_s: 3600,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ServersFile {
    pub count: Spanned<usize>,
    pub memory_mb: u64,
    pub item_size_max: u32,
    /// memcached's `-o slab_chunk_max`, in bytes.
    pub slab_chunk_max: u32,
    pub no_evict: bool,
    /// Pins the tick phase; absent, every strategy varies it.
    pub phase_ms: Option<u64>,
    pub distribution: Spanned<String>,
}

impl ServersFile {
    /// Each server's settings.
    pub fn config(&self) -> crate::server::ServerConfig {
        crate::server::ServerConfig::default()
            .memory_mb(self.memory_mb)
            .item_size_max(self.item_size_max)
            .slab_chunk_max(self.slab_chunk_max)
            .no_evict(self.no_evict)
            .phase(std::time::Duration::from_millis(self.phase_ms.unwrap_or(0)))
    }
}

impl Default for ServersFile {
    fn default() -> ServersFile {
        ServersFile {
            count: Spanned::new(0..0, 1),
            memory_mb: 64,
            item_size_max: 1024 * 1024,
            slab_chunk_max: crate::server::SLAB_CHUNK_MAX_DEFAULT,
            no_evict: false,
            phase_ms: None,
            distribution: Spanned::new(0..0, "modulo".into()),
        }
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFile {
    pub max: u32,
    pub probability: Spanned<f64>,
    #[serde(default)]
    pub keys: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct FaultsFile {
    pub timeout_ms: u64,
    pub restart_after_ms: u64,
    pub warm_restart: bool,
    pub evict: Option<RuleFile>,
    pub reply_lost: Option<RuleFile>,
    pub request_lost: Option<RuleFile>,
    pub crash: Option<RuleFile>,
    pub skip_second: Option<RuleFile>,
    pub leave: Option<RuleFile>,
    pub pause: Option<RuleFile>,
    pub die: Option<RuleFile>,
    pub too_large: Option<RuleFile>,
    pub rejoin_after_ms: u64,
    pub pause_ms: u64,
}

impl Default for FaultsFile {
    fn default() -> FaultsFile {
        FaultsFile {
            timeout_ms: 100,
            restart_after_ms: 1000,
            warm_restart: false,
            evict: None,
            reply_lost: None,
            request_lost: None,
            crash: None,
            skip_second: None,
            leave: None,
            pause: None,
            die: None,
            too_large: None,
            rejoin_after_ms: 1000,
            pause_ms: 5000,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ExploreFile {
    pub strategy: Spanned<String>,
    pub depth: usize,
    pub steps_estimate: u64,
    pub executions: u64,
    pub seed: u64,
    /// Exhaustive bounds: clients (default: the scenario's, at most 3).
    pub clients: Option<Spanned<u64>>,
    /// Preemptions per execution: a number or `"all"`.
    pub preemptions: Spanned<toml::Value>,
    /// Faults per execution: a number or `"all"` (only the plan's budgets).
    pub faults: Spanned<toml::Value>,
    /// Draws of the workload an exhaustive search covers.
    pub draws: u64,
    /// Tick-phase classes searched at most (absent: every class within the budget).
    pub phases: Option<u64>,
}

impl Default for ExploreFile {
    fn default() -> ExploreFile {
        ExploreFile {
            strategy: Spanned::new(0..0, "swarm".into()),
            depth: 3,
            steps_estimate: super::StrategyKind::DEFAULT_STEPS,
            executions: 1000,
            seed: 0,
            clients: None,
            preemptions: Spanned::new(
                0..0,
                toml::Value::Integer(i64::from(super::ExhaustiveBounds::DEFAULT_PREEMPTIONS)),
            ),
            faults: Spanned::new(
                0..0,
                toml::Value::Integer(i64::from(super::ExhaustiveBounds::DEFAULT_FAULTS)),
            ),
            draws: 1,
            phases: None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectFile {
    pub verdict: Spanned<String>,
    /// Further invariants that must be found too.
    #[serde(default)]
    pub also: Option<Spanned<Vec<String>>>,
    /// Invariants that may also appear.
    #[serde(default)]
    pub may: Option<Spanned<Vec<String>>>,
    /// What some execution must show for a pass to mean something.
    #[serde(default)]
    pub sometimes: Option<Spanned<Vec<String>>>,
}
