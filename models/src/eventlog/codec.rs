//! How events are serialized into a chunk: each event is `e<when_ms>,<client>,<seq>,<len>:`
//! followed by `len` payload bytes, so events can be appended one after another and read
//! back in order, whatever their payload holds.

use std::fmt;

/// One event of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// When it happened, milliseconds of its writer's clock.
    pub when_ms: u64,
    /// The client that put it.
    pub client: u32,
    /// Its number among that client's events.
    pub seq: u32,
    /// Application data.
    pub payload: Vec<u8>,
}

impl Event {
    /// An event with `len` bytes of filler payload.
    pub fn new(when_ms: u64, client: u32, seq: u32, len: usize) -> Event {
        let fill = b'a' + (seq % 26) as u8;
        Event {
            when_ms,
            client,
            seq,
            payload: vec![fill; len],
        }
    }

    /// Its identity: (client, seq).
    pub fn id(&self) -> (u32, u32) {
        (self.client, self.seq)
    }

    /// DS `serialize()`.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = format!(
            "e{},{},{},{}:",
            self.when_ms,
            self.client,
            self.seq,
            self.payload.len()
        )
        .into_bytes();
        out.extend_from_slice(&self.payload);
        out
    }
}

/// A chunk that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset of the problem.
    pub offset: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "undecodable event at byte {}", self.offset)
    }
}

/// DS `deserialize()`: every event in a chunk, in the order they were appended.
pub fn deserialize(data: &[u8]) -> Result<Vec<Event>, DecodeError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let err = DecodeError { offset: at };
        if data[at] != b'e' {
            return Err(err);
        }
        let colon = data[at..]
            .iter()
            .position(|b| *b == b':')
            .ok_or(err.clone())?;
        let header = std::str::from_utf8(&data[at + 1..at + colon]).map_err(|_| err.clone())?;
        // Four numbers, read where they stand (a fetch decodes every event of every
        // chunk, each time it reads).
        let mut nums = [0u64; 4];
        let mut count = 0;
        for field in header.split(',') {
            let n = field.parse::<u64>().map_err(|_| err.clone())?;
            *nums.get_mut(count).ok_or(err.clone())? = n;
            count += 1;
        }
        let [when_ms, client, seq, len] = nums;
        if count != 4 {
            return Err(err);
        }
        let start = at + colon + 1;
        let end = start.checked_add(len as usize).ok_or(err.clone())?;
        if end > data.len() {
            return Err(err);
        }
        out.push(Event {
            when_ms,
            client: u32::try_from(client).map_err(|_| err.clone())?,
            seq: u32::try_from(seq).map_err(|_| err.clone())?,
            payload: data[start..end].to_vec(),
        });
        at = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_events_decode_in_order() {
        let a = Event::new(1_500, 0, 1, 3);
        let b = Event::new(1_499, 2, 7, 0);
        let c = Event {
            when_ms: 9,
            client: 1,
            seq: 2,
            payload: b"e1,2,3,4:x:".to_vec(),
        };
        let mut data = a.serialize();
        data.extend(b.serialize());
        data.extend(c.serialize());
        assert_eq!(deserialize(&data).unwrap(), vec![a, b, c]);
        assert_eq!(deserialize(b"").unwrap(), vec![]);
    }

    #[test]
    fn truncated_or_foreign_data_is_an_error() {
        let data = Event::new(5, 0, 0, 10).serialize();
        assert_eq!(
            deserialize(&data[..data.len() - 1]),
            Err(DecodeError { offset: 0 })
        );
        assert!(deserialize(b"1").is_err());
        assert!(deserialize(b"e1,2,3:").is_err());
        assert!(deserialize(b"e1,2,3,x:").is_err());
        assert!(deserialize(b"e1,2,3,4,5:").is_err());
        assert!(deserialize(b"e1,,3,4:").is_err());
        let mut two = Event::new(5, 0, 0, 1).serialize();
        let first = two.len();
        two.extend_from_slice(b"junk");
        assert_eq!(deserialize(&two), Err(DecodeError { offset: first }));
    }
}
