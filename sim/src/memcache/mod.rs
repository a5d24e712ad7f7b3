//! The client interface recipes are written against.
//!
//! A backend implements three things: [`Memcache::call`] (send one [`Request`], get its
//! [`Reply`] or a transport fault), [`Memcache::now`] (the client's own clock) and
//! [`Memcache::sleep`]. Every typed command (`get`, `add`, `incr`, `mg`, …) is a provided
//! method that builds a request and interprets the reply, so all backends (the simulated
//! server under the executor, a real memcached over TCP, loom) agree on what a reply means.

mod error;
mod exptime;
mod key;
mod value;
mod value_map;

use std::future::Future;
use std::time::Duration;

pub(crate) use crate::decimal::decimal;
pub use error::{McError, Transport};
pub use exptime::{Exptime, MAX_RELATIVE_EXPTIME};
pub use key::{Key, KeyError, MAX_KEY_LEN};
pub use value::{Cas, Value};
pub use value_map::ValueMap;

use crate::clock::VirtualTime;
use crate::protocol::{
    ArithOp, MetaCommand, MetaFlag, MetaReply, Reply, Request, StoreMode, ValueEntry,
};

/// A memcached client, as recipe code sees it.
///
/// Every method that talks to the server is an await point: under the executor, the only
/// places where another client may run.
#[allow(async_fn_in_trait)]
pub trait Memcache {
    /// Sends one request and waits for its reply.
    fn call(&self, request: Request) -> impl Future<Output = Result<Reply, Transport>>;

    /// This client's clock (global virtual time plus the client's skew).
    fn now(&self) -> VirtualTime;

    /// Waits `duration` of virtual time.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()>;

    /// `get`: the value, or `None` on a miss.
    async fn get(&self, key: &Key) -> Result<Option<Value>, McError> {
        let reply = self
            .call(Request::Get {
                keys: vec![key.clone()],
                with_cas: false,
            })
            .await?;
        Ok(single(values(reply)?).map(|e| keyed_value(e).1))
    }

    /// `gets`: the value and its cas unique, or `None` on a miss.
    async fn gets(&self, key: &Key) -> Result<Option<(Value, Cas)>, McError> {
        let reply = self
            .call(Request::Get {
                keys: vec![key.clone()],
                with_cas: true,
            })
            .await?;
        Ok(single(values(reply)?).map(cas_entry))
    }

    /// Multi-get: the hits among `keys`, by key ([`ValueMap`]).
    async fn get_multi(&self, keys: &[Key]) -> Result<ValueMap, McError> {
        if keys.is_empty() {
            return Ok(ValueMap::default());
        }
        let reply = self
            .call(Request::Get {
                keys: keys.to_vec(),
                with_cas: false,
            })
            .await?;
        let hits = values(reply)?.into_iter().map(keyed_value).collect();
        Ok(ValueMap::from_hits(hits))
    }

    /// `set`: store unconditionally.
    async fn set(&self, key: &Key, value: Value, exptime: Exptime) -> Result<(), McError> {
        self.store(StoreMode::Set, key, value, exptime).await
    }

    /// `add`: store only if absent; `Err(NotStored)` otherwise.
    async fn add(&self, key: &Key, value: Value, exptime: Exptime) -> Result<(), McError> {
        self.store(StoreMode::Add, key, value, exptime).await
    }

    /// `replace`: store only if present; `Err(NotStored)` otherwise.
    async fn replace(&self, key: &Key, value: Value, exptime: Exptime) -> Result<(), McError> {
        self.store(StoreMode::Replace, key, value, exptime).await
    }

    /// `append`: add bytes after the value; `Err(NotStored)` if missing.
    async fn append(&self, key: &Key, data: &[u8]) -> Result<(), McError> {
        self.store(StoreMode::Append, key, Value::new(data), Exptime::NEVER)
            .await
    }

    /// `prepend`: add bytes before the value; `Err(NotStored)` if missing.
    async fn prepend(&self, key: &Key, data: &[u8]) -> Result<(), McError> {
        self.store(StoreMode::Prepend, key, Value::new(data), Exptime::NEVER)
            .await
    }

    /// `cas`: store if the item still has this cas unique; `Err(Exists)` if it changed,
    /// `Err(NotFound)` if it is gone.
    async fn cas(
        &self,
        key: &Key,
        value: Value,
        exptime: Exptime,
        cas: Cas,
    ) -> Result<(), McError> {
        self.store(StoreMode::Cas(cas.0), key, value, exptime).await
    }

    /// Any storage command.
    async fn store(
        &self,
        mode: StoreMode,
        key: &Key,
        value: Value,
        exptime: Exptime,
    ) -> Result<(), McError> {
        let request = Request::Store {
            mode,
            key: key.clone(),
            flags: value.flags,
            exptime,
            data: value.data,
            noreply: false,
        };
        match self.call(request).await? {
            Reply::Stored => Ok(()),
            other => Err(error(other)),
        }
    }

    /// `incr`: the new value; `Err(NotFound)` if missing.
    async fn incr(&self, key: &Key, delta: u64) -> Result<u64, McError> {
        self.arith(ArithOp::Incr, key, delta).await
    }

    /// `decr`: the new value (floored at 0); `Err(NotFound)` if missing.
    async fn decr(&self, key: &Key, delta: u64) -> Result<u64, McError> {
        self.arith(ArithOp::Decr, key, delta).await
    }

    /// `incr` or `decr`.
    async fn arith(&self, op: ArithOp, key: &Key, delta: u64) -> Result<u64, McError> {
        let request = Request::Arith {
            op,
            key: key.clone(),
            delta,
            noreply: false,
        };
        match self.call(request).await? {
            Reply::Number(n) => Ok(n),
            other => Err(error(other)),
        }
    }

    /// `delete`; `Err(NotFound)` if missing.
    async fn delete(&self, key: &Key) -> Result<(), McError> {
        match self
            .call(Request::Delete {
                key: key.clone(),
                noreply: false,
            })
            .await?
        {
            Reply::Deleted => Ok(()),
            other => Err(error(other)),
        }
    }

    /// `touch`: set a new exptime; `Err(NotFound)` if missing.
    async fn touch(&self, key: &Key, exptime: Exptime) -> Result<(), McError> {
        match self
            .call(Request::Touch {
                key: key.clone(),
                exptime,
                noreply: false,
            })
            .await?
        {
            Reply::Touched => Ok(()),
            other => Err(error(other)),
        }
    }

    /// `gat`: get and touch.
    async fn gat(&self, key: &Key, exptime: Exptime) -> Result<Option<Value>, McError> {
        let request = Request::Gat {
            exptime,
            keys: vec![key.clone()],
            with_cas: false,
        };
        let reply = self.call(request).await?;
        Ok(single(values(reply)?).map(|e| keyed_value(e).1))
    }

    /// `flush_all [delay]`.
    async fn flush_all(&self, delay: Option<i64>) -> Result<(), McError> {
        match self
            .call(Request::FlushAll {
                delay,
                noreply: false,
            })
            .await?
        {
            Reply::Ok => Ok(()),
            other => Err(error(other)),
        }
    }

    /// `mg key flags…`: the meta reply (`VA`, `HD` or `EN`).
    async fn mg(&self, key: &Key, flags: &[MetaFlag]) -> Result<MetaReply, McError> {
        self.meta(MetaCommand::Get, key, flags, None).await
    }

    /// `ms key len flags…` with the data: `HD`, `NS`, `EX` or `NF`.
    async fn ms(&self, key: &Key, data: &[u8], flags: &[MetaFlag]) -> Result<MetaReply, McError> {
        self.meta(MetaCommand::Set, key, flags, Some(data.to_vec()))
            .await
    }

    /// `md key flags…`: `HD`, `NF` or `EX`.
    async fn md(&self, key: &Key, flags: &[MetaFlag]) -> Result<MetaReply, McError> {
        self.meta(MetaCommand::Delete, key, flags, None).await
    }

    /// `ma key flags…`: `HD`/`VA`, `NF`, `NS` or `EX`.
    async fn ma(&self, key: &Key, flags: &[MetaFlag]) -> Result<MetaReply, McError> {
        self.meta(MetaCommand::Arithmetic, key, flags, None).await
    }

    /// Any meta command with a key.
    async fn meta(
        &self,
        command: MetaCommand,
        key: &Key,
        flags: &[MetaFlag],
        data: Option<Vec<u8>>,
    ) -> Result<MetaReply, McError> {
        let request = Request::Meta {
            command,
            key: Some(key.clone()),
            flags: flags.to_vec(),
            data,
        };
        match self.call(request).await? {
            Reply::Meta(m) => Ok(m),
            other => Err(error(other)),
        }
    }
}

/// The entries of a retrieval reply, or the error it carries.
fn values(reply: Reply) -> Result<Vec<ValueEntry>, McError> {
    match reply {
        Reply::Values(v) => Ok(v),
        other => Err(error(other)),
    }
}

fn single(entries: Vec<ValueEntry>) -> Option<ValueEntry> {
    entries.into_iter().next()
}

/// A hit's key and value, its cas unique left.
fn keyed_value(e: ValueEntry) -> (Key, Value) {
    let value = Value {
        data: e.data,
        flags: e.flags,
    };
    (e.key, value)
}

fn cas_entry(e: ValueEntry) -> (Value, Cas) {
    let cas = Cas(e.cas.unwrap_or(0));
    (keyed_value(e).1, cas)
}

/// The error a reply stands for, when it is not the success the caller expected.
pub fn error(reply: Reply) -> McError {
    match reply {
        Reply::NotFound => McError::NotFound,
        Reply::NotStored => McError::NotStored,
        Reply::Exists => McError::Exists,
        Reply::ClientError(m) => McError::Client(m),
        Reply::ServerError(m) => McError::Server(m),
        Reply::Error => McError::UnknownCommand,
        other => McError::Unexpected(format!("{other:?}")),
    }
}
