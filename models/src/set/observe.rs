//! A [`Memcache`] wrapper that logs, in the order the server executed them, the index
//! writes and reads whose replies came back: the ghost state `set.compaction_safe` is
//! checked against.
//!
//! The executor hands a reply to its client at the instant the server executes the call,
//! before any other call runs, so the order in which wrapped calls return is the server's
//! order. Calls whose reply was lost are not logged (their instant is unknown).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::memcache::{Key, Memcache, Transport};
use mcsim::protocol::{Reply, Request, StoreMode};

/// One compaction that overwrote modifications applied after its read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafeCompaction {
    /// The compacting client.
    pub client: usize,
    /// Modifications it erased, with their clients.
    pub erased: Vec<usize>,
}

/// What the wrapped clients did to the index, in server order.
#[derive(Debug, Default)]
pub struct IndexLog {
    seq: u64,
    /// Where each client's last read and last modification landed.
    instants: Instants,
    /// Per client, the instant of its last `gets` hit.
    last_read: BTreeMap<usize, u64>,
    /// Successful `append`s and `add`s: instant and client.
    modifications: Vec<(u64, usize)>,
    /// Compactions stored.
    pub compactions: u64,
    /// Compactions refused (`EXISTS` / `NOT_FOUND` on the `cas`).
    pub refused: u64,
    /// Compactions that erased modifications.
    pub drops: Vec<UnsafeCompaction>,
    /// `add`s refused because another client created the index after this client's
    /// `append` found it missing (`set/as-written` drops these modifications).
    pub races: u64,
}

impl IndexLog {
    /// Modifications logged.
    pub fn modifications(&self) -> usize {
        self.modifications.len()
    }

    /// Modifications of `client` that reached the index (its `append`s and `add`s stored).
    pub fn writes_by(&self, client: usize) -> usize {
        self.modifications
            .iter()
            .filter(|(_, c)| *c == client)
            .count()
    }

    /// The instant (in server order, counting the calls logged) of `client`'s last read
    /// of the index, if it came after `since`.
    pub fn read_since(&self, client: usize, since: u64) -> Option<u64> {
        self.instants
            .read
            .get(&client)
            .copied()
            .filter(|&t| t > since)
    }

    /// The instant of `client`'s last `append` or `add` to the index, stored or not, if it
    /// came after `since`.
    pub fn modified_since(&self, client: usize, since: u64) -> Option<u64> {
        self.instants
            .modified
            .get(&client)
            .copied()
            .filter(|&t| t > since)
    }

    /// The instant of the last call logged.
    pub fn now(&self) -> u64 {
        self.seq
    }

    fn record(&mut self, client: usize, request: &Request, reply: &Reply) {
        self.seq += 1;
        let now = self.seq;
        match request {
            Request::Get { .. } => self.instants.read.insert(client, now),
            Request::Store {
                mode: StoreMode::Append | StoreMode::Add,
                ..
            } => self.instants.modified.insert(client, now),
            _ => None,
        };
        match (request, reply) {
            (Request::Get { with_cas: true, .. }, Reply::Values(v)) if !v.is_empty() => {
                self.last_read.insert(client, now);
            }
            (
                Request::Store {
                    mode: StoreMode::Append | StoreMode::Add,
                    ..
                },
                Reply::Stored,
            ) => self.modifications.push((now, client)),
            (
                Request::Store {
                    mode: StoreMode::Set | StoreMode::Cas(_),
                    ..
                },
                Reply::Stored,
            ) => {
                self.compactions += 1;
                let read = self.last_read.get(&client).copied().unwrap_or(0);
                let erased: Vec<usize> = self
                    .modifications
                    .iter()
                    .filter(|(at, _)| *at > read)
                    .map(|(_, c)| *c)
                    .collect();
                if !erased.is_empty() {
                    self.drops.push(UnsafeCompaction { client, erased });
                }
            }
            (
                Request::Store {
                    mode: StoreMode::Cas(_),
                    ..
                },
                Reply::Exists | Reply::NotFound,
            ) => self.refused += 1,
            (
                Request::Store {
                    mode: StoreMode::Add,
                    ..
                },
                Reply::NotStored,
            ) => self.races += 1,
            _ => {}
        }
    }
}

/// Where each client's last read and last modification of the index landed in server
/// order: an operation's effect, which the linearizability search tries in that order.
/// Not state the explorer tells apart: its `Debug`, which the state fingerprint hashes,
/// shows nothing (the log's other fields already hold what the clients did).
#[derive(Default)]
struct Instants {
    read: BTreeMap<usize, u64>,
    modified: BTreeMap<usize, u64>,
}

impl fmt::Debug for Instants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

/// A client whose calls on one key are logged into an [`IndexLog`].
#[derive(Debug, Clone)]
pub struct Observed<M> {
    inner: M,
    client: usize,
    key: Key,
    log: Rc<RefCell<IndexLog>>,
}

impl<M: Memcache> Observed<M> {
    /// Wraps `inner` (client number `client`), logging its calls on `key`.
    pub fn new(inner: M, client: usize, key: Key, log: Rc<RefCell<IndexLog>>) -> Self {
        Observed {
            inner,
            client,
            key,
            log,
        }
    }
}

fn touches(request: &Request, key: &Key) -> bool {
    match request {
        Request::Get { keys, .. } => keys.len() == 1 && &keys[0] == key,
        Request::Store { key: k, .. } => k == key,
        _ => false,
    }
}

impl<M: Memcache> Memcache for Observed<M> {
    fn call(&self, request: Request) -> impl Future<Output = Result<Reply, Transport>> {
        let watched = touches(&request, &self.key).then(|| request.clone());
        let reply = self.inner.call(request);
        async move {
            let reply = reply.await;
            if let (Some(request), Ok(r)) = (&watched, &reply) {
                self.log.borrow_mut().record(self.client, request, r);
            }
            reply
        }
    }

    fn now(&self) -> VirtualTime {
        self.inner.now()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        self.inner.sleep(duration)
    }
}

#[cfg(test)]
mod tests {
    use mcsim::memcache::Exptime;

    use super::*;

    fn gets() -> Request {
        Request::Get {
            keys: vec![Key::new("set_index").expect("a key")],
            with_cas: true,
        }
    }

    fn store(mode: StoreMode) -> Request {
        Request::Store {
            mode,
            key: Key::new("set_index").expect("a key"),
            flags: 0,
            exptime: Exptime::NEVER,
            data: b"+m ".to_vec(),
            noreply: false,
        }
    }

    #[test]
    fn the_log_keeps_where_each_clients_last_read_and_modification_landed() {
        let mut log = IndexLog::default();
        log.record(0, &gets(), &Reply::Values(Vec::new()));
        assert_eq!((log.now(), log.read_since(0, 0)), (1, Some(1)));
        log.record(1, &store(StoreMode::Append), &Reply::NotStored);
        log.record(1, &store(StoreMode::Add), &Reply::Stored);
        log.record(0, &store(StoreMode::Cas(1)), &Reply::Exists);
        // A refused append counts (a remove on a missing index takes effect there); a
        // compaction does not.
        assert_eq!(log.modified_since(1, 1), Some(3));
        assert_eq!(
            log.modified_since(1, 3),
            None,
            "not after the instant given"
        );
        assert_eq!(log.modified_since(0, 0), None);
        assert_eq!(log.read_since(0, 1), None, "not after the instant given");
        assert_eq!(log.read_since(1, 0), None, "not another client's");
        assert_eq!(log.now(), 4);
    }
}
