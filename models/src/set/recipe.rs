//! The set recipe (SET), written against [`Memcache`].
//!
//! The index key holds a log of `+m ` / `-m ` tokens. A modification is one `append`
//! (creating the index with `add` when it is missing); reading replays the log and, when
//! it holds too many removals, writes the compact form back with `cas`, fire and forget.

use std::collections::BTreeSet;

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

use crate::set::encoding::{
    Decoded, Sign, compact, decode, decode_as_written, encode, encode_as_written,
};

/// Which set recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetVariant {
    /// SET's code as shown: `append`; if not stored and the op is `+`, `add`. When the
    /// `add` fails too (another client created the index in between) nothing retries:
    /// the modification is lost, and the caller is not told.
    AsWritten,
    /// What SET's text says to do: when both fail, retry the whole modification.
    Retry,
    /// Beyond the article, for research: `retry`, but compaction writes with a plain
    /// `set` instead of `cas`, so it can overwrite modifications appended after its read.
    CompactSet,
}

impl SetVariant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<SetVariant> {
        Some(match name {
            "as-written" => SetVariant::AsWritten,
            "retry" => SetVariant::Retry,
            "compact-set" => SetVariant::CompactSet,
            _ => return None,
        })
    }
}

/// A set kept in one index key.
#[derive(Debug, Clone)]
pub struct SetIndex {
    key: Key,
    variant: SetVariant,
    threshold: usize,
}

fn codec_error(e: impl std::fmt::Display) -> McError {
    McError::Client(format!("set index: {e}"))
}

impl SetIndex {
    /// The set stored under `index`; `items` compacts it when its dirtiness exceeds
    /// `dirtiness_threshold`.
    pub fn new(index: &str, variant: SetVariant, dirtiness_threshold: usize) -> SetIndex {
        SetIndex {
            key: Key::new(index).expect("index names are valid keys"),
            variant,
            threshold: dirtiness_threshold,
        }
    }

    /// The index key.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Encodes a modification: as SET shows it for `as-written` (nothing escaped), else
    /// escaped ([`encode`]; the empty member refused).
    fn encode<S: AsRef<str>>(&self, sign: Sign, members: &[S]) -> Result<String, McError> {
        match self.variant {
            SetVariant::AsWritten => Ok(encode_as_written(sign, members)),
            _ => encode(sign, members).map_err(codec_error),
        }
    }

    /// Decodes the index as this variant's readers do (what its users observe).
    pub fn decode(&self, data: &[u8]) -> Result<Decoded, McError> {
        match self.variant {
            SetVariant::AsWritten => Ok(decode_as_written(data)),
            _ => decode(data).map_err(codec_error),
        }
    }

    /// True if this variant accepts `member` (the escaped codecs refuse the empty one).
    pub fn accepts(&self, member: &str) -> bool {
        self.variant == SetVariant::AsWritten || !member.is_empty()
    }

    /// Adds `members`.
    pub async fn add<S: AsRef<str>>(
        &self,
        mc: &impl Memcache,
        members: &[S],
    ) -> Result<(), McError> {
        self.modify(mc, Sign::Add, members).await
    }

    /// Removes `members`.
    pub async fn remove<S: AsRef<str>>(
        &self,
        mc: &impl Memcache,
        members: &[S],
    ) -> Result<(), McError> {
        self.modify(mc, Sign::Remove, members).await
    }

    /// SET's `modify`: `append` the encoded tokens; when the index is missing and the op
    /// is `+`, create it with `add`. (A `-` on a missing index has nothing to remove.)
    pub async fn modify<S: AsRef<str>>(
        &self,
        mc: &impl Memcache,
        sign: Sign,
        members: &[S],
    ) -> Result<(), McError> {
        let encoded = self.encode(sign, members)?;
        loop {
            match mc.append(&self.key, encoded.as_bytes()).await {
                Ok(()) => return Ok(()),
                Err(McError::NotStored) => {}
                Err(e) => return Err(e),
            }
            if sign == Sign::Remove {
                return Ok(());
            }
            match mc
                .add(&self.key, Value::from(encoded.as_str()), Exptime::NEVER)
                .await
            {
                Ok(()) => return Ok(()),
                // Both failed: the index appeared between the append and the add.
                Err(McError::NotStored) if self.variant == SetVariant::AsWritten => {
                    return Ok(());
                }
                Err(McError::NotStored) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// SET's `items`: `gets` and decode; when the dirtiness passes the threshold, write
    /// the compact form back (`cas` with the unique just read), fire and forget: a failed
    /// compaction loses nothing and is not retried.
    pub async fn items(&self, mc: &impl Memcache) -> Result<BTreeSet<String>, McError> {
        let Some((value, cas)) = mc.gets(&self.key).await? else {
            return Ok(BTreeSet::new());
        };
        let decoded = self.decode(&value.data)?;
        if decoded.dirtiness > self.threshold {
            let compacted = match self.variant {
                SetVariant::AsWritten => {
                    let members: Vec<&String> = decoded.members.iter().collect();
                    encode_as_written(Sign::Add, &members)
                }
                _ => compact(&decoded.members),
            };
            let compacted = Value::from(compacted.as_str());
            let written = match self.variant {
                SetVariant::CompactSet => mc.set(&self.key, compacted, Exptime::NEVER).await,
                _ => mc.cas(&self.key, compacted, Exptime::NEVER, cas).await,
            };
            match written {
                Ok(()) | Err(McError::Exists | McError::NotFound | McError::Transport(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(decoded.members)
    }
}
