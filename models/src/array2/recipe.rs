//! The append-mostly array (DS `MCArray2`), written against [`Memcache`].

use mcsim::memcache::{Exptime, Key, McError, Memcache, Value};

/// Which `add` recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Array2Variant {
    /// DS as written: the error handling is inverted. A failed `append` (the key does not
    /// exist) returns at once, so the first element is dropped and the key is never
    /// created; a successful one is followed by an `add` that fails and returns.
    AsWritten,
    /// `append`; on `NOT_STORED` `add`; on `NOT_STORED` start over.
    Fixed,
}

impl Array2Variant {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Option<Array2Variant> {
        Some(match name {
            "as-written" => Array2Variant::AsWritten,
            "fixed" => Array2Variant::Fixed,
            _ => return None,
        })
    }
}

/// Serializes one element: its decimal digits and a space.
pub fn encode_int(n: u64) -> String {
    format!("{n} ")
}

/// Reads the array back (tokens that are not numbers are skipped).
pub fn decode_ints(data: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(data)
        .split(' ')
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// An array of integers under the key `array_<name>`.
#[derive(Debug, Clone)]
pub struct Array2 {
    key: Key,
    variant: Array2Variant,
}

impl Array2 {
    /// The array `name`.
    pub fn new(name: &str, variant: Array2Variant) -> Array2 {
        let key =
            Key::from_parts(&[b"array_", name.as_bytes()]).expect("array names are valid keys");
        Array2 { key, variant }
    }

    /// The key holding the array.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The whole array (`get`; a miss is the empty array).
    pub async fn fetch(&self, mc: &impl Memcache) -> Result<Vec<u64>, McError> {
        Ok(mc
            .get(&self.key)
            .await?
            .map(|v| decode_ints(&v.data))
            .unwrap_or_default())
    }

    /// Appends `element`.
    pub async fn add(&self, mc: &impl Memcache, element: u64) -> Result<(), McError> {
        let element = encode_int(element);
        match self.variant {
            Array2Variant::AsWritten => loop {
                match mc.append(&self.key, element.as_bytes()).await {
                    Ok(()) => {}
                    Err(McError::NotStored) => return Ok(()),
                    Err(e) => return Err(e),
                }
                match mc
                    .add(&self.key, Value::from(element.as_str()), Exptime::NEVER)
                    .await
                {
                    Ok(()) => {}
                    Err(McError::NotStored) => return Ok(()),
                    Err(e) => return Err(e),
                }
            },
            Array2Variant::Fixed => loop {
                match mc.append(&self.key, element.as_bytes()).await {
                    Ok(()) => return Ok(()),
                    Err(McError::NotStored) => {}
                    Err(e) => return Err(e),
                }
                match mc
                    .add(&self.key, Value::from(element.as_str()), Exptime::NEVER)
                    .await
                {
                    Ok(()) => return Ok(()),
                    Err(McError::NotStored) => continue,
                    Err(e) => return Err(e),
                }
            },
        }
    }
}
