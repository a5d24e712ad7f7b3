//! Several simulated servers and the client-side key distribution that picks one per key.
//!
//! - `modulo`: `crc32(key) % n` over the servers in the client's list (the classic
//!   memcache client): when a server leaves, most keys move.
//! - `ketama`: libketama-compatible consistent hashing: each server gets 160 points on a
//!   ring of 2^32 (40 MD5 digests of `"<host>-<k>"`, four points per digest, equal
//!   weights); a key goes to the first point at or after the first four bytes of its MD5;
//!   when a server leaves, about `1/n` of the keys move.
//!
//! A multi-key read (`get`/`gets`/`gat`/`gats` with several keys) is split the way client
//! libraries split it: each server gets the keys that map to it, and the hits are merged
//! back in the order the keys were asked. Keys on a server that is down read as misses;
//! only when every server the read needs is down does the call fail.
//!
//! A server can leave the client's list (it keeps running and keeps its items) and come
//! back later: its old values resurface. A crashed server stays in the list: its keys fail
//! until it restarts.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use md5::{Digest, Md5};

use crate::clock::VirtualTime;
use crate::memcache::{Key, Transport, Value};
use crate::protocol::{Reply, Request, ValueEntry};
use crate::server::{Server, ServerConfig};

/// How keys map to servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Distribution {
    /// `crc32(key) % n` over the servers in the list.
    #[default]
    Modulo,
    /// libketama consistent hashing.
    Ketama,
}

impl Distribution {
    /// Parses a name used in scenario files.
    pub fn parse(name: &str) -> Option<Distribution> {
        match name {
            "modulo" => Some(Distribution::Modulo),
            "ketama" => Some(Distribution::Ketama),
            _ => None,
        }
    }
}

/// The name a server has on the ketama ring.
pub fn server_name(index: usize) -> String {
    format!("10.0.0.{}:11211", index + 1)
}

/// A key → server map over a list of servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    distribution: Distribution,
    members: Vec<usize>,
    points: Vec<(u32, usize)>,
}

fn md5(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&Md5::digest(bytes));
    out
}

fn ketama_point(digest: &[u8; 16], h: usize) -> u32 {
    u32::from(digest[3 + h * 4]) << 24
        | u32::from(digest[2 + h * 4]) << 16
        | u32::from(digest[1 + h * 4]) << 8
        | u32::from(digest[h * 4])
}

impl Ring {
    /// The map for these member servers (indices into the cluster).
    pub fn new(distribution: Distribution, members: Vec<usize>) -> Ring {
        let mut points = Vec::new();
        if distribution == Distribution::Ketama {
            for &m in &members {
                for k in 0..40 {
                    let d = md5(format!("{}-{k}", server_name(m)).as_bytes());
                    for h in 0..4 {
                        points.push((ketama_point(&d, h), m));
                    }
                }
            }
            points.sort_unstable();
        }
        Ring {
            distribution,
            members,
            points,
        }
    }

    /// The server a key maps to (`None` if the list is empty).
    pub fn server_for(&self, key: &[u8]) -> Option<usize> {
        if self.members.len() <= 1 {
            return self.members.first().copied();
        }
        match self.distribution {
            Distribution::Modulo => {
                let i = crc32fast::hash(key) as usize % self.members.len();
                Some(self.members[i])
            }
            Distribution::Ketama => {
                let h = ketama_point(&md5(key), 0);
                let i = self.points.partition_point(|p| p.0 < h);
                Some(self.points.get(i).unwrap_or(&self.points[0]).1)
            }
        }
    }
}

/// The rings a cluster has built, by their member list, so that a server leaving or
/// rejoining the list (and the reset after it) looks its ring up instead of building it
/// again: a ketama ring of `n` servers takes `40 n` MD5 digests and a sort, far more than
/// the execution it serves. A ring depends on nothing but its distribution, fixed here,
/// and its members, so a ring from the cache is the ring `Ring::new` would build.
#[derive(Debug, Clone)]
struct Rings {
    /// The cluster's distribution, the same for every ring.
    distribution: Distribution,
    built: BTreeMap<Vec<usize>, Arc<Ring>>,
}

impl Rings {
    /// Most rings kept: a plan that takes many servers out in many combinations starts
    /// the cache again rather than grow it without bound.
    const MAX: usize = 64;

    /// No rings built yet, for a cluster distributing keys by `distribution`.
    fn new(distribution: Distribution) -> Rings {
        Rings {
            distribution,
            built: BTreeMap::new(),
        }
    }

    /// The ring over `members`, built once.
    fn get(&mut self, members: Vec<usize>) -> Arc<Ring> {
        if let Some(ring) = self.built.get(&members) {
            return Arc::clone(ring);
        }
        if self.built.len() >= Self::MAX {
            self.built.clear();
        }
        let ring = Arc::new(Ring::new(self.distribution, members.clone()));
        self.built.insert(members, Arc::clone(&ring));
        ring
    }
}

/// The servers of one execution and the client's list of them.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The servers, by index.
    pub servers: Vec<Server>,
    listed: Vec<bool>,
    ring: Arc<Ring>,
    rings: Rings,
}

impl Cluster {
    /// Servers booted at time zero, all in the list.
    pub fn new(configs: &[ServerConfig], distribution: Distribution) -> Cluster {
        let servers: Vec<Server> = configs
            .iter()
            .map(|c| Server::new(c.clone(), VirtualTime::ZERO))
            .collect();
        let listed = vec![true; servers.len()];
        let mut rings = Rings::new(distribution);
        let ring = rings.get((0..servers.len()).collect());
        Cluster {
            servers,
            listed,
            ring,
            rings,
        }
    }

    /// True if this cluster was built from these settings (so [`Cluster::reset`] gives
    /// what [`Cluster::new`] would).
    pub fn built_from(&self, configs: &[ServerConfig], distribution: Distribution) -> bool {
        self.rings.distribution == distribution
            && self.servers.len() == configs.len()
            && self
                .servers
                .iter()
                .zip(configs)
                .all(|(s, c)| s.config() == c)
    }

    /// Back to the state of [`Cluster::new`]: every server reset and booted at time
    /// zero, all in the list, then run at tick phase `phase` if one is given (as
    /// [`Cluster::set_phase`]) and told it has `connections` clients. Reuses the servers'
    /// memory.
    pub fn reset(&mut self, phase: Option<std::time::Duration>, connections: u64) {
        for s in &mut self.servers {
            s.reset_at_phase(VirtualTime::ZERO, phase);
            s.set_connections(connections);
        }
        if self.listed.iter().any(|&l| !l) {
            self.listed.fill(true);
            let all = (0..self.servers.len()).collect();
            self.ring = self.rings.get(all);
        }
    }

    /// Every server runs at tick phase `phase` (see [`Server::set_phase`]).
    pub fn set_phase(&mut self, phase: std::time::Duration) {
        for s in &mut self.servers {
            s.set_phase(phase);
        }
    }

    /// The server a key maps to now. A cluster of one server answers without its ring:
    /// an end check's look at a key is then a compare, not a call.
    #[inline]
    pub fn server_for(&self, key: &Key) -> usize {
        if self.servers.len() == 1 {
            return 0;
        }
        self.ring.server_for(key.as_bytes()).unwrap_or(0)
    }

    /// The server a request goes to (its first key's; the first listed server for
    /// keyless requests).
    pub fn route(&self, request: &Request) -> usize {
        if self.servers.len() == 1 {
            return 0;
        }
        match request.keys().first() {
            Some(k) => self.server_for(k),
            None => self.listed.iter().position(|&l| l).unwrap_or(0),
        }
    }

    /// The server a call goes to: the one it is addressed to
    /// ([`crate::Client::on_server`]), otherwise [`Cluster::route`]'s.
    pub fn route_to(&self, request: &Request, server: Option<usize>) -> usize {
        server.unwrap_or_else(|| self.route(request))
    }

    /// The servers a call needs: [`Cluster::servers_for`], or the one it is addressed to.
    pub fn servers_to(&self, request: &Request, server: Option<usize>) -> Vec<usize> {
        match server {
            Some(server) => vec![server],
            None => self.servers_for(request),
        }
    }

    /// The servers a request needs, in the order of its keys' first appearance: one for
    /// every request but a multi-key read whose keys live on several servers.
    pub fn servers_for(&self, request: &Request) -> Vec<usize> {
        let mut out = vec![self.route(request)];
        if let Request::Get { keys, .. } | Request::Gat { keys, .. } = request {
            for k in keys.iter().skip(1) {
                let s = self.server_for(k);
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    /// Sends a request as a client library would: to the server of its key, or, for a
    /// multi-key read spread over several servers, each server its own keys, with the
    /// hits merged back in request order.
    pub fn call(&mut self, mut request: Request, at: VirtualTime) -> Result<Reply, Transport> {
        self.call_in_place(&mut request, at)
    }

    /// [`Cluster::call`] on a request the caller keeps (the engine, in its client's
    /// mailbox): a storage command's bytes may be taken out of it.
    pub(crate) fn call_in_place(
        &mut self,
        request: &mut Request,
        at: VirtualTime,
    ) -> Result<Reply, Transport> {
        // One server: nothing to route (the common case, kept apart from the routing).
        let server = match self.servers.as_mut_slice() {
            [server] => server,
            _ => return self.call_routed(request, at),
        };
        call_on(server, request, at)
    }

    /// [`Cluster::call_in_place`], or the whole request to the server it is addressed to
    /// ([`crate::Client::on_server`]): one that left the clients' list refuses it, one
    /// that is down fails it ([`Transport::ServerDown`] both).
    pub(crate) fn call_to(
        &mut self,
        request: &mut Request,
        server: Option<usize>,
        at: VirtualTime,
    ) -> Result<Reply, Transport> {
        match server {
            None => self.call_in_place(request, at),
            Some(s) if !self.listed[s] => Err(Transport::ServerDown),
            Some(s) => call_on(&mut self.servers[s], request, at),
        }
    }

    /// [`Cluster::call_in_place`] on a cluster of several servers.
    fn call_routed(&mut self, request: &mut Request, at: VirtualTime) -> Result<Reply, Transport> {
        let first = self.route(request);
        if let Some(spread) = self.spread(request) {
            return self.call_spread(&spread, at);
        }
        call_on(&mut self.servers[first], request, at)
    }

    /// A multi-key read whose keys live on more than one server, split as a client
    /// library splits it (`None` for every other request, and on a cluster of one
    /// server).
    pub fn spread<'r>(&self, request: &'r Request) -> Option<Spread<'r>> {
        let (Request::Get { keys, .. } | Request::Gat { keys, .. }) = request else {
            return None;
        };
        if keys.len() < 2 || self.servers.len() < 2 {
            return None;
        }
        let owners: Vec<usize> = keys.iter().map(|k| self.server_for(k)).collect();
        Spread::new(request, owners)
    }

    /// A read spread over several servers: each server asked for its own keys, the hits
    /// merged back in request order ([`Spread::gather`]).
    fn call_spread(&mut self, spread: &Spread<'_>, at: VirtualTime) -> Result<Reply, Transport> {
        spread.gather(|s, share| {
            let server = &mut self.servers[s];
            if server.is_up() {
                Ok(server.apply(share, at))
            } else {
                Err(Transport::ServerDown)
            }
        })
    }

    /// True if the server is in the client's list.
    pub fn is_listed(&self, server: usize) -> bool {
        self.listed[server]
    }

    /// Number of servers in the list.
    pub fn listed_count(&self) -> usize {
        self.listed.iter().filter(|&&l| l).count()
    }

    /// The server leaves (or rejoins) the client's list; keys are redistributed.
    pub fn set_listed(&mut self, server: usize, listed: bool) {
        self.listed[server] = listed;
        let members = (0..self.servers.len())
            .filter(|&i| self.listed[i])
            .collect();
        self.ring = self.rings.get(members);
    }

    /// The live value under `key`, without side effects.
    pub fn peek(&self, key: &Key, now: VirtualTime) -> Option<Value> {
        let server = &self.servers[self.server_for(key)];
        if !server.is_up() {
            return None;
        }
        server.peek(key, now).map(|i| Value {
            data: i.data.clone(),
            flags: i.flags,
        })
    }

    /// The earliest expiry ahead of `now` among the live items of the running servers:
    /// the key and the virtual time it disappears.
    pub fn next_expiry(&self, now: VirtualTime) -> Option<(Key, VirtualTime)> {
        let mut best: Option<(Key, VirtualTime)> = None;
        for server in self.servers.iter().filter(|s| s.is_up()) {
            for (key, item) in server.live_items(now) {
                if item.exptime == 0 {
                    continue;
                }
                let at = server.clock().time_of_tick(item.exptime);
                if best.as_ref().is_none_or(|(_, b)| at < *b) {
                    best = Some((key.clone(), at));
                }
            }
        }
        best
    }

    /// Feeds every server's whole state ([`Server::fingerprint`]) and which servers are
    /// in the clients' list to `h`.
    pub fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        self.listed.hash(h);
        for server in &self.servers {
            server.fingerprint(h);
        }
    }

    /// A hash of every server's live items (key, value, flags) at `now`: equal for equal
    /// final states.
    pub fn state_hash(&self, now: VirtualTime) -> u64 {
        // The bytes hashed: per server `server {i} up={up}\n`, then per live item
        // `{key} {data} {flags}\n`, written without the formatting machinery.
        let mut h = crate::trace::Fnv1a::new();
        for (i, server) in self.servers.iter().enumerate() {
            h.write(b"server ");
            h.write_decimal(i as u64);
            h.write(if server.is_up() {
                b" up=true\n"
            } else {
                b" up=false\n"
            });
            for (key, item) in server.live_items(now) {
                h.write(key.as_bytes());
                h.write(b" ");
                h.write(&item.data);
                h.write(b" ");
                h.write_decimal(u64::from(item.flags));
                h.write(b"\n");
            }
        }
        h.finish()
    }
}

/// A multi-key read whose keys live on several servers: which server each key is on,
/// each server's share of the keys, and the hits merged back in the order the keys were
/// asked. The simulation calls the servers with it, and `mcsim confirm` the real ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread<'r> {
    request: &'r Request,
    owners: Vec<usize>,
}

impl<'r> Spread<'r> {
    /// `request` with `owners`, each key's server in key order; `None` unless it is a
    /// multi-key read whose keys live on more than one server.
    pub fn new(request: &'r Request, owners: Vec<usize>) -> Option<Spread<'r>> {
        let (Request::Get { keys, .. } | Request::Gat { keys, .. }) = request else {
            return None;
        };
        let spread = owners.len() == keys.len() && owners.iter().any(|&s| s != owners[0]);
        spread.then_some(Spread { request, owners })
    }

    /// Each key's server, in key order.
    pub fn owners(&self) -> &[usize] {
        &self.owners
    }

    /// Each server's share of the read, by server in the order of its first key.
    pub fn shares(&self) -> Vec<(usize, Request)> {
        let keys = self.request.keys();
        let mut out: Vec<(usize, Request)> = Vec::new();
        for &s in &self.owners {
            if out.iter().any(|(o, _)| *o == s) {
                continue;
            }
            let share: Vec<Key> = keys
                .iter()
                .zip(&self.owners)
                .filter(|(_, o)| **o == s)
                .map(|(k, _)| k.clone())
                .collect();
            out.push((s, with_keys(self.request, share)));
        }
        out
    }

    /// Asks each server its share with `ask` (server, share) and merges the hits back in
    /// request order, as a client library does: a share whose server fails reads as
    /// misses, and only when every one fails does the call (with the last failure); a
    /// server's error reply answers the whole call.
    pub fn gather<E>(
        &self,
        mut ask: impl FnMut(usize, Request) -> Result<Reply, E>,
    ) -> Result<Reply, E> {
        let (mut hits, mut failed) = (BTreeMap::new(), None);
        for (s, share) in self.shares() {
            match ask(s, share) {
                Ok(Reply::Values(v)) => _ = hits.insert(s, v),
                Ok(other) => return Ok(other),
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) if hits.is_empty() => Err(e),
            _ => Ok(self.merge(hits)),
        }
    }

    /// The hits each server gave for its share, merged back in request order.
    fn merge(&self, hits: BTreeMap<usize, Vec<ValueEntry>>) -> Reply {
        let mut queues: BTreeMap<usize, VecDeque<ValueEntry>> =
            hits.into_iter().map(|(s, v)| (s, v.into())).collect();
        let mut merged = Vec::new();
        for (k, s) in self.request.keys().iter().zip(&self.owners) {
            if let Some(queue) = queues.get_mut(s)
                && queue.front().is_some_and(|e| e.key == *k)
            {
                merged.extend(queue.pop_front());
            }
        }
        Reply::Values(merged)
    }
}

/// The same multi-key read with other keys.
fn with_keys(request: &Request, keys: Vec<Key>) -> Request {
    match request {
        Request::Get { with_cas, .. } => Request::Get {
            keys,
            with_cas: *with_cas,
        },
        Request::Gat {
            exptime, with_cas, ..
        } => Request::Gat {
            exptime: *exptime,
            keys,
            with_cas: *with_cas,
        },
        other => other.clone(),
    }
}

/// `request` executed on `server` at `at`, or refused if the server is down.
fn call_on(
    server: &mut Server,
    request: &mut Request,
    at: VirtualTime,
) -> Result<Reply, Transport> {
    if !server.is_up() {
        return Err(Transport::ServerDown);
    }
    Ok(server.apply_in_place(request, at))
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};

    use super::*;
    use crate::explore::random::SeededRng;

    fn moved(d: Distribution, n: usize) -> f64 {
        let all = Ring::new(d, (0..n).collect());
        let fewer = Ring::new(d, (1..n).collect());
        let keys: Vec<String> = (0..20_000).map(|i| format!("key:{i}")).collect();
        let m = keys
            .iter()
            .filter(|k| all.server_for(k.as_bytes()) != fewer.server_for(k.as_bytes()))
            .count();
        m as f64 / keys.len() as f64
    }

    #[test]
    fn modulo_moves_most_keys_ketama_about_one_nth() {
        for n in [3, 4, 5, 8] {
            let m = moved(Distribution::Modulo, n);
            let k = moved(Distribution::Ketama, n);
            assert!(m > 0.5, "modulo n={n} moved {m}");
            assert!((k - 1.0 / n as f64).abs() < 0.08, "ketama n={n} moved {k}");
        }
    }

    #[test]
    fn ketama_only_moves_the_keys_of_the_server_that_left() {
        let all = Ring::new(Distribution::Ketama, vec![0, 1, 2, 3]);
        let fewer = Ring::new(Distribution::Ketama, vec![0, 1, 3]);
        for i in 0..5000 {
            let k = format!("k{i}");
            let before = all.server_for(k.as_bytes());
            if before != Some(2) {
                assert_eq!(before, fewer.server_for(k.as_bytes()));
            }
        }
    }

    #[test]
    fn servers_leaving_and_rejoining_route_as_a_ring_built_afresh() {
        let keys: Vec<Key> = (0..40)
            .map(|i| Key::new(format!("k{i}")).unwrap())
            .collect();
        for (n, distribution) in [(4, Distribution::Ketama), (8, Distribution::Ketama)] {
            let mut c = Cluster::new(&vec![ServerConfig::default(); n], distribution);
            let mut rng = SeededRng::seed_from_u64(7);
            for round in 0..400 {
                let server = rng.random_range(0..n);
                if round % 50 == 49 {
                    c.reset(None, 0);
                } else {
                    c.set_listed(server, !c.is_listed(server));
                }
                let members: Vec<usize> = (0..n).filter(|&i| c.is_listed(i)).collect();
                let fresh = Ring::new(distribution, members);
                for k in &keys {
                    let want = fresh.server_for(k.as_bytes()).unwrap_or(0);
                    assert_eq!(c.server_for(k), want, "n={n} round {round} {k}");
                }
                assert!(c.rings.built.len() <= Rings::MAX);
            }
        }
    }

    #[test]
    fn a_call_addressed_to_a_server_goes_there_and_a_server_out_of_the_list_refuses_it() {
        let configs = vec![ServerConfig::default(); 2];
        let mut c = Cluster::new(&configs, Distribution::Modulo);
        let t = VirtualTime::ZERO;
        let key = Key::new("k").unwrap();
        let other = 1 - c.server_for(&key);
        let set = Request::Store {
            mode: crate::protocol::StoreMode::Set,
            key: key.clone(),
            flags: 0,
            exptime: crate::memcache::Exptime::NEVER,
            data: b"there".to_vec(),
            noreply: false,
        };
        assert_eq!(
            c.call_to(&mut set.clone(), Some(other), t),
            Ok(Reply::Stored)
        );
        assert_eq!(c.route_to(&set, Some(other)), other);
        assert_eq!(c.servers_to(&set, Some(other)), vec![other]);
        // The key's own server never saw it.
        assert_eq!(c.peek(&key, t), None);
        assert!(c.servers[other].peek(&key, t).is_some());
        // Out of the clients' list: refused, though the server keeps its items; back in
        // it, they answer again.
        c.set_listed(other, false);
        let get = Request::Get {
            keys: vec![key.clone()],
            with_cas: false,
        };
        assert_eq!(
            c.call_to(&mut get.clone(), Some(other), t),
            Err(Transport::ServerDown)
        );
        c.set_listed(other, true);
        let Ok(Reply::Values(v)) = c.call_to(&mut get.clone(), Some(other), t) else {
            panic!("no values")
        };
        assert_eq!(v.len(), 1);
        // Down: failed.
        c.servers[other].crash();
        assert_eq!(
            c.call_to(&mut get.clone(), Some(other), t),
            Err(Transport::ServerDown)
        );
    }

    #[test]
    fn a_multi_key_read_is_split_by_server_and_merged_in_request_order() {
        let configs = vec![ServerConfig::default(); 3];
        let mut c = Cluster::new(&configs, Distribution::Ketama);
        let keys: Vec<Key> = (0..12)
            .map(|i| Key::new(format!("k{i}")).unwrap())
            .collect();
        let t = VirtualTime::ZERO;
        for k in &keys {
            let set = Request::Store {
                mode: crate::protocol::StoreMode::Set,
                key: k.clone(),
                flags: 0,
                exptime: crate::memcache::Exptime::NEVER,
                data: k.as_bytes().to_vec(),
                noreply: false,
            };
            assert_eq!(c.call(set, t), Ok(Reply::Stored));
        }
        let mut asked = keys.clone();
        asked.reverse();
        asked.push(keys[0].clone());
        let get = Request::Get {
            keys: asked.clone(),
            with_cas: false,
        };
        let servers = c.servers_for(&get);
        assert_eq!(servers.len(), 3, "12 keys should land on every server");
        let Ok(Reply::Values(v)) = c.call(get.clone(), t) else {
            panic!("no values")
        };
        let got: Vec<&[u8]> = v.iter().map(|e| e.key.as_bytes()).collect();
        let want: Vec<&[u8]> = asked.iter().map(|k| k.as_bytes()).collect();
        assert_eq!(got, want);
        // A server that is down: its keys read as misses, the others still answer.
        c.servers[servers[1]].crash();
        let Ok(Reply::Values(v)) = c.call(get.clone(), t) else {
            panic!("no values")
        };
        assert!(!v.is_empty() && v.len() < asked.len());
        for s in &servers {
            c.servers[*s].crash();
        }
        assert_eq!(c.call(get, t), Err(Transport::ServerDown));
    }
}
