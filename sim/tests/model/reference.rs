//! The reference model: memcached as MEMCACHED.md describes it, for a server that never evicts.

#[allow(unused_imports)]
use super::*;

/// One item as the model keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefItem {
    pub(crate) data: Vec<u8>,
    pub(crate) flags: u32,
    /// Expiry as a server tick; 0 never expires.
    pub(crate) exptime_tick: u32,
    pub(crate) cas: u64,
}

/// memcached as MEMCACHED.md describes it, for a server that never evicts.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    /// Linked items. An expired item may stay here: it is simply not visible.
    pub(crate) items: BTreeMap<Vec<u8>, RefItem>,
    /// The last cas unique handed out (the first item gets 1).
    pub(crate) cas: u64,
    /// Offset of the tick edges after the boot at virtual time zero, in µs.
    pub(crate) phase: u64,
}

impl Model {
    pub(crate) fn new(phase: u64) -> Model {
        Model {
            items: BTreeMap::new(),
            cas: 0,
            phase,
        }
    }

    /// `current_time` at `now` µs: 62, advanced at every edge `phase + k s` after the
    /// boot (the process started a second before its first edge, so no tick lasts longer
    /// than a second).
    pub(crate) fn tick(&self, now: u64) -> u32 {
        let edges = if self.phase == 0 {
            now / SEC
        } else if now >= self.phase {
            (now - self.phase) / SEC + 1
        } else {
            0
        };
        FIRST_TICK + edges as u32
    }

    /// memcached's `process_started`: the unix second the process started in, minus 62
    /// (a second before the first edge: the second before zero, unless the phase is 0).
    pub(crate) fn process_started(&self) -> i64 {
        let started_in = if self.phase == 0 { 0 } else { -1 };
        UNIX_AT_ZERO + started_in - i64::from(FIRST_TICK)
    }

    /// The expiry tick of a wire exptime read at `tick` (`realtime()` after the signed
    /// 32-bit parse and the negative-to-past mapping).
    pub(crate) fn expiry(&self, wire: i64, tick: u32) -> u32 {
        // safe_strtol stores the parsed long into an int32_t.
        let e = i64::from(wire as i32);
        // Negative exptimes become "one past the relative range": an absolute time long
        // before the process started.
        let e = if e < 0 { REALTIME_MAXDELTA + 1 } else { e };
        if e == 0 {
            0
        } else if e > REALTIME_MAXDELTA {
            if e <= self.process_started() {
                1
            } else {
                (e - self.process_started()) as u32
            }
        } else {
            (e + i64::from(tick)) as u32
        }
    }

    pub(crate) fn next_cas(&mut self) -> u64 {
        self.cas += 1;
        self.cas
    }

    /// The visible item: present, and `exptime == 0 || exptime > tick`.
    pub(crate) fn live(&mut self, key: &[u8], tick: u32) -> Option<&mut RefItem> {
        self.items
            .get_mut(key)
            .filter(|it| it.exptime_tick == 0 || it.exptime_tick > tick)
    }

    pub(crate) fn link(&mut self, key: &[u8], data: Vec<u8>, flags: u32, exptime_tick: u32) {
        let cas = self.next_cas();
        self.items.insert(
            key.to_vec(),
            RefItem {
                data,
                flags,
                exptime_tick,
                cas,
            },
        );
    }

    /// The reply memcached gives to `request` at `now` µs, and its effect on the state.
    pub(crate) fn apply(&mut self, request: &Request, now: u64) -> Reply {
        let reply = self.execute(request, now);
        let silent = match request {
            Request::Store { noreply, .. }
            | Request::Arith { noreply, .. }
            | Request::Delete { noreply, .. }
            | Request::Touch { noreply, .. }
            | Request::FlushAll { noreply, .. } => *noreply,
            _ => false,
        };
        if silent { Reply::Silent } else { reply }
    }

    pub(crate) fn execute(&mut self, request: &Request, now: u64) -> Reply {
        let tick = self.tick(now);
        match request {
            Request::Get { keys, with_cas } => self.retrieve(keys, *with_cas, None, tick),
            Request::Gat {
                exptime,
                keys,
                with_cas,
            } => {
                let e = self.expiry(exptime.wire(), tick);
                self.retrieve(keys, *with_cas, Some(e), tick)
            }
            Request::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                ..
            } => {
                let e = self.expiry(exptime.wire(), tick);
                self.store(*mode, key.as_bytes(), *flags, e, data, tick)
            }
            Request::Arith { op, key, delta, .. } => {
                let Some(item) = self.live(key.as_bytes(), tick) else {
                    return Reply::NotFound;
                };
                let Some(value) = strtoull(&item.data) else {
                    return Reply::ClientError(NON_NUMERIC.into());
                };
                let value = match op {
                    ArithOp::Incr => value.wrapping_add(*delta),
                    ArithOp::Decr => value.saturating_sub(*delta),
                };
                let mut digits = value.to_string().into_bytes();
                if digits.len() <= item.data.len() {
                    // Rewritten in place, padded with spaces to the old length.
                    digits.resize(item.data.len(), b' ');
                }
                item.data = digits;
                let cas = self.next_cas();
                self.live(key.as_bytes(), tick).expect("still live").cas = cas;
                Reply::Number(value)
            }
            Request::Delete { key, .. } => {
                if self.live(key.as_bytes(), tick).is_some() {
                    self.items.remove(key.as_bytes());
                    Reply::Deleted
                } else {
                    Reply::NotFound
                }
            }
            Request::Touch { key, exptime, .. } => {
                let e = self.expiry(exptime.wire(), tick);
                match self.live(key.as_bytes(), tick) {
                    Some(item) => {
                        item.exptime_tick = e;
                        Reply::Touched
                    }
                    None => Reply::NotFound,
                }
            }
            Request::FlushAll { delay, .. } => {
                assert!(
                    delay.is_none_or(|d| d <= 0),
                    "the model only knows immediate flushes"
                );
                // Everything stored so far becomes invisible; the flush takes a cas unique.
                self.items.clear();
                self.next_cas();
                Reply::Ok
            }
            other => panic!("the model does not cover {other:?}"),
        }
    }

    pub(crate) fn retrieve(
        &mut self,
        keys: &[Key],
        with_cas: bool,
        touch: Option<u32>,
        tick: u32,
    ) -> Reply {
        let mut out = Vec::new();
        // One key at a time: a `gat` with a past exptime hides a repeated key.
        for key in keys {
            if let Some(item) = self.live(key.as_bytes(), tick) {
                if let Some(e) = touch {
                    item.exptime_tick = e;
                }
                out.push(ValueEntry {
                    key: key.clone(),
                    flags: item.flags,
                    data: item.data.clone(),
                    cas: with_cas.then_some(item.cas),
                });
            }
        }
        Reply::Values(out)
    }

    pub(crate) fn store(
        &mut self,
        mode: StoreMode,
        key: &[u8],
        flags: u32,
        exptime_tick: u32,
        data: &[u8],
        tick: u32,
    ) -> Reply {
        let old = self.live(key, tick).cloned();
        match (mode, old) {
            (StoreMode::Set, _) | (StoreMode::Add, None) | (StoreMode::Replace, Some(_)) => {
                self.link(key, data.to_vec(), flags, exptime_tick);
                Reply::Stored
            }
            (StoreMode::Add, Some(_)) => Reply::NotStored,
            (StoreMode::Replace | StoreMode::Append | StoreMode::Prepend, None) => Reply::NotStored,
            (StoreMode::Append | StoreMode::Prepend, Some(old)) => {
                // The item keeps its flags and exptime; the command's are ignored.
                let joined = if mode == StoreMode::Append {
                    [old.data.as_slice(), data].concat()
                } else {
                    [data, old.data.as_slice()].concat()
                };
                self.link(key, joined, old.flags, old.exptime_tick);
                Reply::Stored
            }
            (StoreMode::Cas(_), None) => Reply::NotFound,
            (StoreMode::Cas(want), Some(old)) => {
                if want != 0 && want == old.cas {
                    self.link(key, data.to_vec(), flags, exptime_tick);
                    Reply::Stored
                } else {
                    Reply::Exists
                }
            }
        }
    }
}

/// memcached's `safe_strtoull` on an item's data, which the server keeps followed by
/// `\r\n` and reads as a C string: optional leading whitespace, an optional sign, decimal
/// digits, then whitespace or the end of the string (the data's end or a NUL byte).
/// Overflow and a negative result are rejected; an empty value is not a number.
pub(crate) fn strtoull(data: &[u8]) -> Option<u64> {
    let text = match data.iter().position(|&b| b == 0) {
        Some(nul) => &data[..nul],
        None => data,
    };
    let space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let mut i = text.iter().take_while(|&&b| space(b)).count();
    let negative = text.get(i) == Some(&b'-');
    if matches!(text.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let mut magnitude: u64 = 0;
    for &d in &text[i..i + digits] {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
    }
    // After the digits: the end of the C string (data end → "\r", or a NUL) or a space.
    if let Some(&next) = text.get(i + digits)
        && !space(next)
    {
        return None;
    }
    if negative {
        let v = magnitude.wrapping_neg();
        // Rejected only when the result reads as negative as a signed number.
        return if (v as i64) < 0 { None } else { Some(v) };
    }
    Some(magnitude)
}
