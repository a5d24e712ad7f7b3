//! A database row behind a cache, for the families whose recipes read one on a miss
//! (`lookaside`, `gutter`, `herd`, `warmup`): its version as ghost state, a query with latency on
//! the virtual clock, a database of limited capacity that fails the queries it has no
//! room for, and the cached value that holds a version.
//!
//! The row is the source of truth a recipe's readers are judged against: a writer
//! bumps its version ([`Row::update`]); a reader's query ([`Query`]) gives the version the
//! row held when the query started, after the query's latency, as a database read in
//! a transaction that began then would. A query of a database limited to `capacity`
//! queries at once ([`Query::limited`], through [`FallibleDatabase`]) that begins while
//! it is full gets no answer: it fails when the client's timeout ends, as an overloaded
//! database's clients see it. Everything is the engine's state: deterministic.

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

/// What a recipe queries when the database may fail: the row's version, or an error.
#[allow(async_fn_in_trait)]
pub trait FallibleDatabase {
    /// Reads the row: its version, or [`Overloaded`].
    async fn try_read(&self) -> Result<u64, Overloaded>;
}

/// A query the database had no room for: it failed at the client's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overloaded;

/// The row, as ghost state: the version it holds and the queries made of it.
#[derive(Debug, Default)]
pub struct Row {
    version: Cell<u64>,
    reads: Cell<u64>,
    /// Queries running now (of a limited database).
    running: Cell<u32>,
    /// Queries that failed, the database being full.
    errors: Cell<u64>,
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

    /// Queries made of the row (answered or failed).
    pub fn reads(&self) -> u64 {
        self.reads.get()
    }

    /// Queries that failed, the database being full.
    pub fn errors(&self) -> u64 {
        self.errors.get()
    }

    /// Queries running now, for a ghost fingerprint.
    pub fn running(&self) -> u32 {
        self.running.get()
    }
}

/// A database's room: `capacity` queries at once, and how long a client waits for one
/// it has no room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Queries it runs at once.
    pub queries: u32,
    /// How long a query it has no room for takes to fail.
    pub timeout: Duration,
}

/// One client's queries of the row, each taking `latency`.
pub struct Query {
    row: Rc<Row>,
    latency: Duration,
    mc: Client,
    capacity: Option<Capacity>,
}

impl Query {
    /// Client `mc`'s queries of `row`, with room for every query.
    pub fn new(row: Rc<Row>, latency: Duration, mc: Client) -> Query {
        Query {
            row,
            latency,
            mc,
            capacity: None,
        }
    }

    /// The same queries of a database with room for `capacity` (shared by every client
    /// that queries `row`): read them with [`FallibleDatabase::try_read`].
    pub fn limited(self, capacity: Capacity) -> Query {
        Query {
            capacity: Some(capacity),
            ..self
        }
    }
}

impl Database for Query {
    /// A query that always gets its answer, room or not.
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

impl FallibleDatabase for Query {
    async fn try_read(&self) -> Result<u64, Overloaded> {
        let Some(capacity) = self.capacity else {
            return Ok(self.read().await);
        };
        let row = &self.row;
        if row.running.get() >= capacity.queries {
            row.reads.set(row.reads.get() + 1);
            row.errors.set(row.errors.get() + 1);
            self.mc.note(format!(
                "queries the database: full ({} running), no answer",
                row.running.get()
            ));
            self.mc.sleep(capacity.timeout).await;
            self.mc.note("database query timed out");
            return Err(Overloaded);
        }
        let _slot = Slot::take(row);
        Ok(self.read().await)
    }
}

/// A running query's room in the database, given back when the query ends, or when
/// its client dies in the middle of it (its future dropped).
struct Slot<'r>(&'r Row);

impl Slot<'_> {
    fn take(row: &Row) -> Slot<'_> {
        row.running.set(row.running.get() + 1);
        Slot(row)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.running.set(self.0.running.get() - 1);
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
