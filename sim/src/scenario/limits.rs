//! The ranges a scenario file's numbers must lie in, checked when the file is read, so no
//! value reaches the engine that would make it panic, allocate without bound or spin:
//! every error names the field and points at its line.

use std::ops::{Range, RangeInclusive};

use crate::model::FieldError;
use crate::model::YEAR_S;
use crate::scenario::file::{ScenarioFile, WorldFile};

/// The most virtual clients a scenario may run.
pub const MAX_CLIENTS: usize = 1024;
/// The most simulated servers.
pub const MAX_SERVERS: usize = 64;
/// The most memory one simulated server may have, in megabytes (memcached's `-m`).
pub const MAX_MEMORY_MB: u64 = 64 * 1024;
/// memcached's bounds on `-I`: at least 1 KiB, at most 1 GiB.
pub const ITEM_SIZE_MAX: RangeInclusive<u64> = 1024..=1024 * 1024 * 1024;
/// The most steps or executions a scenario may ask for.
pub const MAX_COUNT: u64 = 1_000_000_000;
/// The longest virtual duration a field may give, in milliseconds (a year).
pub const MAX_MILLIS: u64 = YEAR_S * 1000;

/// Where `key = …` is written inside `[table]` (or at the top when `table` is empty).
pub fn locate(source: &str, table: &str, key: &str) -> Option<Range<usize>> {
    let mut current = String::new();
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = h.trim().to_string();
        } else if let Some((k, _)) = t.split_once('=') {
            let k = k.trim();
            let hit = (current == table && k == key)
                || (current.is_empty() && !table.is_empty() && k == format!("{table}.{key}"));
            if hit {
                let start = offset + line.find(k).unwrap_or(0);
                return Some(start..start + line.trim_end().len());
            }
        }
        offset += line.len();
    }
    None
}

struct Checker<'a> {
    source: &'a str,
}

impl Checker<'_> {
    fn range(
        &self,
        table: &str,
        key: &str,
        value: u64,
        ok: RangeInclusive<u64>,
    ) -> Result<(), FieldError> {
        if ok.contains(&value) {
            return Ok(());
        }
        Err(self.error(
            table,
            key,
            format!(
                "{value} is out of range: must be {} to {}",
                ok.start(),
                ok.end()
            ),
        ))
    }

    fn error(&self, table: &str, key: &str, message: String) -> FieldError {
        let field = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        FieldError::new(field, locate(self.source, table, key), message)
    }
}

/// Checks every number of the file against its range.
pub(crate) fn check(f: &ScenarioFile, source: &str) -> Result<(), FieldError> {
    check_clients(&f.clients)?;
    check_world(&f.world(), source)
}

/// Checks a file's number of clients.
pub(crate) fn check_clients(clients: &toml::Spanned<usize>) -> Result<(), FieldError> {
    let n = *clients.get_ref();
    if !(1..=MAX_CLIENTS).contains(&n) {
        return Err(FieldError::new(
            "clients",
            Some(clients.span()),
            format!("{n} clients: must be 1 to {MAX_CLIENTS}"),
        ));
    }
    Ok(())
}

/// Checks every number of a file's timing, servers, faults and exploration.
pub(crate) fn check_world(w: &WorldFile<'_>, source: &str) -> Result<(), FieldError> {
    let c = Checker { source };
    let count = *w.servers.count.get_ref();
    if !(1..=MAX_SERVERS).contains(&count) {
        return Err(FieldError::new(
            "servers.count",
            Some(w.servers.count.span()),
            format!("{count} servers: must be 1 to {MAX_SERVERS}"),
        ));
    }
    let t = w.timing;
    let [lat_min, lat_max] = *t.latency_us.get_ref();
    if lat_max > MAX_MILLIS * 1000 {
        return Err(FieldError::new(
            "timing.latency_us",
            Some(t.latency_us.span()),
            format!("{lat_max} µs is more than a year"),
        ));
    }
    if lat_min > lat_max {
        return Err(FieldError::new(
            "timing.latency_us",
            Some(t.latency_us.span()),
            format!("minimum {lat_min} is above maximum {lat_max}"),
        ));
    }
    let skews = [
        (
            "skew_ms",
            t.skew_ms.as_ref().map(|s| (s.span(), s.get_ref().to_vec())),
        ),
        (
            "skews_ms",
            t.skews_ms.as_ref().map(|s| (s.span(), s.get_ref().clone())),
        ),
    ];
    for (name, skew) in skews {
        if let Some((span, values)) = skew
            && values.iter().any(|v| v.unsigned_abs() > MAX_MILLIS)
        {
            return Err(FieldError::new(
                format!("timing.{name}"),
                Some(span),
                "a clock skew of more than a year",
            ));
        }
    }
    c.range("timing", "max_steps", t.max_steps, 1..=MAX_COUNT)?;
    c.range("timing", "max_time_s", t.max_time_s, 1..=MAX_MILLIS / 1000)?;
    let s = w.servers;
    c.range("servers", "memory_mb", s.memory_mb, 1..=MAX_MEMORY_MB)?;
    let item = u64::from(s.item_size_max);
    c.range("servers", "item_size_max", item, ITEM_SIZE_MAX)?;
    let server = crate::server::ServerConfig::default()
        .memory_mb(s.memory_mb)
        .item_size_max(s.item_size_max)
        .slab_chunk_max(s.slab_chunk_max);
    if let Some(refusal) = server.refusal() {
        // memcached's own words, on the field the file set.
        let key = if refusal.contains("slab_chunk_max")
            && s.slab_chunk_max != crate::server::SLAB_CHUNK_MAX_DEFAULT
        {
            "slab_chunk_max"
        } else {
            "item_size_max"
        };
        let hint = if s.slab_chunk_max > s.item_size_max {
            format!(
                "; memcached needs -o slab_chunk_max={} for this item_size_max: set slab_chunk_max = {}",
                s.item_size_max, s.item_size_max
            )
        } else {
            String::new()
        };
        return Err(c.error(
            "servers",
            key,
            format!("memcached 1.6.18 refuses to start: \"{refusal}\"{hint}"),
        ));
    }
    if let Some(phase_ms) = s.phase_ms {
        c.range("servers", "phase_ms", phase_ms, 0..=999)?;
    }
    let fl = w.faults;
    c.range("faults", "timeout_ms", fl.timeout_ms, 1..=MAX_MILLIS)?;
    c.range(
        "faults",
        "restart_after_ms",
        fl.restart_after_ms,
        1..=MAX_MILLIS,
    )?;
    c.range(
        "faults",
        "rejoin_after_ms",
        fl.rejoin_after_ms,
        1..=MAX_MILLIS,
    )?;
    c.range("faults", "pause_ms", fl.pause_ms, 1..=MAX_MILLIS)?;
    let e = w.explore;
    c.range("explore", "executions", e.executions, 1..=MAX_COUNT)?;
    c.range("explore", "depth", e.depth as u64, 1..=64)?;
    c.range("explore", "steps_estimate", e.steps_estimate, 1..=MAX_COUNT)?;
    c.range("explore", "draws", e.draws, 1..=1000)?;
    if let Some(phases) = e.phases {
        c.range("explore", "phases", phases, 1..=1000)?;
    }
    Ok(())
}
