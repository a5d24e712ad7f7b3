//! A database row behind a cache, for the families whose recipes read one on a miss
//! (`lookaside`, `gutter`): its version as ghost state, a query with latency on the
//! virtual clock, and the cached value that holds a version.
//!
//! The row is the source of truth a recipe's readers are judged against: a writer
//! bumps its version ([`Row::update`]); a reader's query ([`Query`]) gives the version the
//! row held when the query started, after the query's latency, as a database read in
//! a transaction that began then would.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::Client;
use mcsim::memcache::{Memcache, Value};

/// What a recipe reads on a miss: the row's version.
#[allow(async_fn_in_trait)]
pub trait Database {
    /// Reads the row: its version.
    async fn read(&self) -> u64;
}

/// The row, as ghost state: the version it holds and the queries made of it.
#[derive(Debug, Default)]
pub struct Row {
    version: Cell<u64>,
    reads: Cell<u64>,
}

impl Row {
    /// The version the row holds (0 before the first write).
    pub fn version(&self) -> u64 {
        self.version.get()
    }

    /// A write: the row's next version, which it now holds.
    pub fn update(&self) -> u64 {
        let n = self.version.get() + 1;
        self.version.set(n);
        n
    }

    /// Queries made of the row.
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }
}

/// One client's queries of the row, each taking `latency`.
pub struct Query {
    row: Rc<Row>,
    latency: Duration,
    mc: Client,
}

impl Query {
    /// Client `mc`'s queries of `row`.
    pub fn new(row: Rc<Row>, latency: Duration, mc: Client) -> Query {
        Query { row, latency, mc }
    }
}

impl Database for Query {
    async fn read(&self) -> u64 {
        let n = self.row.version.get();
        self.row.reads.set(self.row.reads.get() + 1);
        self.mc.note(format!("reads the database: v{n}"));
        // Kept across the query's sleep: part of the client's state.
        self.mc.remember(n);
        self.mc.sleep(self.latency).await;
        n
    }
}

/// The cached value that holds version `n`: `v7`.
pub fn cached(n: u64) -> Value {
    Value::new(format!("v{n}").into_bytes())
}

/// The version a cached value holds; `None` for anything else (an empty placeholder).
pub fn version_of(data: &[u8]) -> Option<u64> {
    std::str::from_utf8(data.strip_prefix(b"v")?)
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_value_is_its_version_and_anything_else_none() {
        assert_eq!(version_of(&cached(7).data), Some(7));
        assert_eq!(version_of(b""), None);
        assert_eq!(version_of(b"v"), None);
        assert_eq!(version_of(b"x1"), None);
    }

    #[test]
    fn an_update_is_the_next_version() {
        let row = Row::default();
        assert_eq!(row.version(), 0);
        assert_eq!(row.update(), 1);
        assert_eq!(row.update(), 2);
        assert_eq!(row.version(), 2);
    }
}
