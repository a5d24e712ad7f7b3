//! DS `MCEventLog`, written against [`Memcache`]: a ring of `numChunks` keys, each
//! collecting `timeChunk` seconds of events by `append`.

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

use crate::eventlog::codec::{Event, deserialize};

/// Which event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventLogVariant {
    /// DS as written: slot `when // timeChunk % numChunks`; `append`, on a miss
    /// `add(key, data, timeChunk * (numChunks - 1))`, retry.
    AsWritten,
    /// Keys named by the absolute chunk number (no slot is reused), TTL
    /// `numChunks * timeChunk + 2` so the last event of a chunk outlives the claimed
    /// retention; a full chunk spills into further parts, and a log full or an event too
    /// large is reported to the caller.
    ChunkKeys,
}

impl EventLogVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<EventLogVariant> {
        Some(match name {
            "as-written" => EventLogVariant::AsWritten,
            "chunk-keys" => EventLogVariant::ChunkKeys,
            _ => return None,
        })
    }
}

/// Why a put failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutError {
    /// memcached refused or the call failed.
    Memcache(McError),
    /// Every part of the event's chunk is at the item size limit.
    Full,
}

impl From<McError> for PutError {
    fn from(e: McError) -> PutError {
        PutError::Memcache(e)
    }
}

/// What a fetch returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The window's start after clamping, milliseconds of the reader's clock.
    pub first: u64,
    /// Its end.
    pub last: u64,
    /// The events in `[first, last]`.
    pub events: Vec<Event>,
}

/// An event log of `chunks` keys of `chunk_s` seconds each.
#[derive(Debug, Clone)]
pub struct EventLog {
    name: String,
    chunk_ms: u64,
    chunks: u64,
    parts: u64,
    variant: EventLogVariant,
}

impl EventLog {
    /// The log `name`; `parts` is how many keys a chunk may spill into (`chunk-keys`).
    pub fn new(
        name: &str,
        chunk_s: u32,
        chunks: u32,
        parts: u32,
        variant: EventLogVariant,
    ) -> EventLog {
        EventLog {
            name: name.to_string(),
            chunk_ms: u64::from(chunk_s.max(1)) * 1000,
            chunks: u64::from(chunks.max(2)),
            parts: u64::from(parts.max(1)),
            variant,
        }
    }

    /// DS's claim: the log holds `(numChunks - 1) * timeChunk` of events.
    pub fn capacity_ms(&self) -> u64 {
        (self.chunks - 1) * self.chunk_ms
    }

    /// The key of chunk number `chunk` (absolute), part `part`.
    pub fn key(&self, chunk: u64, part: u64) -> Key {
        let name = match self.variant {
            EventLogVariant::AsWritten => {
                format!("messagelog{}_{}", self.name, chunk % self.chunks)
            }
            EventLogVariant::ChunkKeys => format!("messagelog{}_{chunk}_{part}", self.name),
        };
        Key::new(name).expect("log names are valid keys")
    }

    fn ttl(&self) -> Exptime {
        let secs = match self.variant {
            EventLogVariant::AsWritten => self.capacity_ms() / 1000,
            EventLogVariant::ChunkKeys => self.chunks * self.chunk_ms / 1000 + 2,
        };
        Exptime::secs(secs as u32)
    }

    /// DS `put`: appends the event to its chunk, creating the chunk's key if needed.
    pub async fn put(&self, mc: &impl Memcache, event: &Event) -> Result<(), PutError> {
        let data = event.serialize();
        let chunk = event.when_ms / self.chunk_ms;
        match self.variant {
            EventLogVariant::AsWritten => {
                let key = self.key(chunk, 0);
                loop {
                    match mc.append(&key, &data).await {
                        Ok(()) => return Ok(()),
                        Err(McError::NotStored) => {}
                        Err(e) => return Err(e.into()),
                    }
                    match mc.add(&key, Value::new(data.clone()), self.ttl()).await {
                        Ok(()) => return Ok(()),
                        Err(McError::NotStored) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            EventLogVariant::ChunkKeys => {
                let (mut part, mut refused) = (0, 0);
                while part < self.parts {
                    let key = self.key(chunk, part);
                    match mc.append(&key, &data).await {
                        Ok(()) => return Ok(()),
                        Err(McError::NotStored) => {}
                        Err(e) => return Err(e.into()),
                    }
                    match mc.add(&key, Value::new(data.clone()), self.ttl()).await {
                        Ok(()) => return Ok(()),
                        // The part exists but refused the append twice: it is full.
                        Err(McError::NotStored) if refused == 1 => (part, refused) = (part + 1, 0),
                        // Perhaps another client just created it: append again.
                        Err(McError::NotStored) => refused += 1,
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(PutError::Full)
            }
        }
    }

    /// DS `fetch(first, last)`: the events with `first <= when <= last`, `last` clamped to
    /// now and `first` to the log's capacity before now.
    pub async fn fetch(
        &self,
        mc: &impl Memcache,
        first: Option<u64>,
        last: Option<u64>,
    ) -> Result<Fetched, McError> {
        let now = mc.now().millis();
        let last = match last {
            Some(l) if l <= now => l,
            _ => now,
        };
        let first = match first {
            Some(f) if last.saturating_sub(f) <= self.capacity_ms() => f,
            _ => now.saturating_sub(self.capacity_ms()),
        };
        let (first_chunk, last_chunk) = (first / self.chunk_ms, last / self.chunk_ms);
        let keys: Vec<Key> = match self.variant {
            EventLogVariant::AsWritten => {
                let (a, b) = (first_chunk % self.chunks, last_chunk % self.chunks);
                let slots: Vec<u64> = if a <= b {
                    (a..=b).collect()
                } else {
                    (a..self.chunks).chain(0..=b).collect()
                };
                slots.into_iter().map(|s| self.key(s, 0)).collect()
            }
            EventLogVariant::ChunkKeys => (first_chunk..=last_chunk.max(first_chunk))
                .flat_map(|c| (0..self.parts).map(move |p| (c, p)))
                .map(|(c, p)| self.key(c, p))
                .collect(),
        };
        let got = mc.get_multi(&keys).await?;
        let mut events = Vec::new();
        // In the order of the keys (the arc of the ring), as DS reads them.
        for key in &keys {
            if let Some(v) = got.get(key) {
                let decoded =
                    deserialize(&v.data).map_err(|e| McError::Unexpected(format!("{key}: {e}")))?;
                events.extend(
                    decoded
                        .into_iter()
                        .filter(|e| first <= e.when_ms && e.when_ms <= last),
                );
            }
        }
        Ok(Fetched {
            first,
            last,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_wrap_around_the_ring() {
        let log = EventLog::new("l", 10, 10, 1, EventLogVariant::AsWritten);
        assert_eq!(log.capacity_ms(), 90_000);
        assert_eq!(log.key(123, 0).to_string(), "messagelogl_3");
        let fixed = EventLog::new("l", 10, 10, 2, EventLogVariant::ChunkKeys);
        assert_eq!(fixed.key(123, 1).to_string(), "messagelogl_123_1");
        assert_eq!(log.ttl(), Exptime::secs(90));
        assert_eq!(fixed.ttl(), Exptime::secs(102));
    }
}
