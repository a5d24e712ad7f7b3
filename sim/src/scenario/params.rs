//! Typed access to a scenario's `[params]` table for recipe builders, with errors that name
//! the field, and a final check that no unknown parameter was given.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use toml::Spanned;

use crate::scenario::error::FieldError;

/// The largest count a parameter may give ([`Params::count`]): enough for any workload
/// mcsim can run in reasonable time, small enough that no setup allocates without bound.
pub const MAX_COUNT: u32 = 100_000;

/// Seconds in a year: the longest duration a parameter may give.
pub const YEAR_S: u64 = 365 * 24 * 3600;

/// A recipe's parameters as written in the scenario file.
#[derive(Debug, Default)]
pub struct Params {
    values: BTreeMap<String, Spanned<toml::Value>>,
    used: RefCell<BTreeSet<String>>,
}

impl Params {
    /// Parameters from a parsed table.
    pub fn new(values: BTreeMap<String, Spanned<toml::Value>>) -> Params {
        Params {
            values,
            used: RefCell::default(),
        }
    }

    /// Parameters from plain values (no positions), for code that builds scenarios.
    pub fn from_pairs(pairs: &[(&str, toml::Value)]) -> Params {
        let values = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Spanned::new(0..0, v.clone())))
            .collect();
        Params::new(values)
    }

    fn get(&self, name: &str) -> Option<&Spanned<toml::Value>> {
        self.used.borrow_mut().insert(name.to_string());
        self.values.get(name)
    }

    fn err(&self, name: &str, v: &Spanned<toml::Value>, msg: String) -> FieldError {
        let span = v.span();
        FieldError::new(
            format!("params.{name}"),
            (span.end > 0).then_some(span),
            msg,
        )
    }

    /// A non-negative integer.
    pub fn u64(&self, name: &str, default: u64) -> Result<u64, FieldError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.get_ref() {
                toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
                other => Err(self.err(
                    name,
                    v,
                    format!("expected a non-negative integer, found {other}"),
                )),
            },
        }
    }

    /// A non-negative integer that fits in 32 bits.
    pub fn u32(&self, name: &str, default: u32) -> Result<u32, FieldError> {
        let n = self.u64(name, u64::from(default))?;
        u32::try_from(n).map_err(|_| {
            let v = self.values.get(name).expect("present when out of range");
            self.err(name, v, format!("{n} is too large"))
        })
    }

    /// A signed integer.
    pub fn i64(&self, name: &str, default: i64) -> Result<i64, FieldError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.get_ref() {
                toml::Value::Integer(i) => Ok(*i),
                other => Err(self.err(name, v, format!("expected an integer, found {other}"))),
            },
        }
    }

    /// A number.
    pub fn f64(&self, name: &str, default: f64) -> Result<f64, FieldError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.get_ref() {
                toml::Value::Integer(i) => Ok(*i as f64),
                toml::Value::Float(f) if f.is_finite() => Ok(*f),
                other => Err(self.err(name, v, format!("expected a finite number, found {other}"))),
            },
        }
    }

    /// A non-negative integer within `range` (a count, a size, a limit).
    pub fn u64_in(
        &self,
        name: &str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<u64, FieldError> {
        let n = self.u64(name, default)?;
        self.within(name, n, &range)
    }

    /// Like [`Params::u64_in`], as a `u32`.
    pub fn u32_in(
        &self,
        name: &str,
        default: u32,
        range: std::ops::RangeInclusive<u32>,
    ) -> Result<u32, FieldError> {
        let n = self.u32(name, default)?;
        self.within(name, n, &range)
    }

    /// A number within `range` (a rate, a fraction).
    pub fn f64_in(
        &self,
        name: &str,
        default: f64,
        range: std::ops::RangeInclusive<f64>,
    ) -> Result<f64, FieldError> {
        let n = self.f64(name, default)?;
        self.within(name, n, &range)
    }

    /// The index of one of `servers` servers (`0` to `servers - 1`).
    pub fn server(&self, name: &str, default: usize, servers: usize) -> Result<usize, FieldError> {
        let n = self.u64(name, default as u64)?;
        if n >= servers as u64 {
            let v = self.values.get(name).expect("present when out of range");
            return Err(self.err(
                name,
                v,
                format!(
                    "{n} is not a server: the scenario has {servers} (0 to {})",
                    servers - 1
                ),
            ));
        }
        Ok(n as usize)
    }

    /// A duration in milliseconds within `range` (the parameter's name should end in `_ms`).
    pub fn millis_in(
        &self,
        name: &str,
        default_ms: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<Duration, FieldError> {
        Ok(Duration::from_millis(self.u64_in(name, default_ms, range)?))
    }

    fn within<T: PartialOrd + std::fmt::Display>(
        &self,
        name: &str,
        n: T,
        range: &std::ops::RangeInclusive<T>,
    ) -> Result<T, FieldError> {
        if range.contains(&n) {
            return Ok(n);
        }
        let v = self.values.get(name).expect("present when out of range");
        Err(self.err(
            name,
            v,
            format!(
                "{n} is out of range: must be {} to {}",
                range.start(),
                range.end()
            ),
        ))
    }

    /// A boolean.
    pub fn bool(&self, name: &str, default: bool) -> Result<bool, FieldError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.get_ref() {
                toml::Value::Boolean(b) => Ok(*b),
                other => Err(self.err(name, v, format!("expected true or false, found {other}"))),
            },
        }
    }

    /// A string.
    pub fn string(&self, name: &str, default: &str) -> Result<String, FieldError> {
        match self.get(name) {
            None => Ok(default.to_string()),
            Some(v) => match v.get_ref() {
                toml::Value::String(s) => Ok(s.clone()),
                other => Err(self.err(name, v, format!("expected a string, found {other}"))),
            },
        }
    }

    /// A duration given in milliseconds, at most a year (the parameter's name should end
    /// in `_ms`).
    pub fn millis(&self, name: &str, default_ms: u64) -> Result<Duration, FieldError> {
        self.millis_in(name, default_ms, 0..=YEAR_S * 1000)
    }

    /// A count (of keys, rounds, requests, …): 0 to [`MAX_COUNT`].
    pub fn count(&self, name: &str, default: u32) -> Result<u32, FieldError> {
        self.u32_in(name, default, 0..=MAX_COUNT)
    }

    /// A whole number of seconds (a TTL, a period), at most a year (the parameter's name
    /// should end in `_s`).
    pub fn seconds(&self, name: &str, default: u32) -> Result<u32, FieldError> {
        self.u32_in(name, default, 0..=YEAR_S as u32)
    }

    /// Fails on the first parameter no getter asked for: a typo or a parameter the recipe
    /// does not have.
    pub fn finish(&self, known: &str) -> Result<(), FieldError> {
        let used = self.used.borrow();
        for (name, v) in &self.values {
            if !used.contains(name) {
                let mut names: Vec<&String> = used.iter().collect();
                names.sort();
                let list = names
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                let hint = crate::scenario::did_you_mean(name, used.iter().map(String::as_str));
                return Err(self.err(
                    name,
                    v,
                    format!("unknown parameter for {known}{hint}; known parameters: {list}"),
                ));
            }
        }
        Ok(())
    }
}
