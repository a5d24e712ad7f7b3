//! The schedule: the recorded choices of one execution, and its compact text form.
//!
//! `mc1:` then one token per choice, separated by `.`:
//! `3` runs client 3 at the earliest time of its window, `3+1k` runs it that many
//! microseconds later; `E0:lock_x` evicts a key
//! from server 0 (`%`-escaped), `R3` loses the reply to client 3, `Q3` loses its request,
//! `C0` crashes server 0, `S0` skips a second on server 0's clock, `L1` makes server 1
//! leave the clients' list. A token followed by
//! `*n` repeats n times. Numbers are base 36. A first token `@p` runs the servers at tick
//! phase `p` µs (a strategy that searches phases chose it); without it, the scenario's.

use std::fmt;

use crate::fault::Fault;

/// One step of an execution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Choice {
    /// The client's pending call executes `delay` µs after the earliest time it could.
    Run {
        /// Whose call.
        client: usize,
        /// Microseconds after the earliest time of its window.
        delay: u64,
    },
    /// A fault fires.
    Fault(Fault),
}

impl Choice {
    /// The same choice with its client renamed by `rename` (a fault that happens to no
    /// client unchanged): how a choice reads in a state whose clients were renamed.
    pub fn relabeled(&self, rename: impl Fn(usize) -> usize) -> Choice {
        match self {
            Choice::Run { client, delay } => Choice::Run {
                client: rename(*client),
                delay: *delay,
            },
            Choice::Fault(f) => Choice::Fault(f.relabeled(rename)),
        }
    }
}

/// The choices of one execution.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Schedule {
    /// The servers' tick phase in µs, when the strategy chose one.
    pub phase: Option<u32>,
    /// In order.
    pub choices: Vec<Choice>,
}

/// A schedule string that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// Not starting with a known version tag.
    #[error("schedule must start with `mc1:` (got {0:?})")]
    Version(String),
    /// A token that is not a choice.
    #[error("bad schedule token {token:?} at position {position}")]
    Token {
        /// The token.
        token: String,
        /// Its index.
        position: usize,
    },
    /// More choices than any execution can take.
    #[error("schedule of more than {MAX_CHOICES} choices")]
    TooLong,
}

/// The most choices a schedule may hold (the longest step budget a scenario may give is
/// far beyond what a replay needs; this bounds what a pasted string can allocate).
pub const MAX_CHOICES: u64 = 10_000_000;

const VERSION: &str = "mc1:";

fn b36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn parse_b36(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    u64::from_str_radix(s, 36).ok()
}

fn escape(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        match c {
            '%' | '.' | '*' | ':' => out.push_str(&format!("%{:02x}", c as u32)),
            c if c.is_ascii_graphic() => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02x}"));
                }
            }
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn token(choice: &Choice) -> String {
    match choice {
        Choice::Run { client, delay: 0 } => b36(*client as u64),
        Choice::Run { client, delay } => format!("{}+{}", b36(*client as u64), b36(*delay)),
        Choice::Fault(Fault::Evict { server, key }) => {
            format!("E{}:{}", b36(*server as u64), escape(key))
        }
        Choice::Fault(Fault::ReplyLost { client }) => format!("R{}", b36(*client as u64)),
        Choice::Fault(Fault::RequestLost { client }) => format!("Q{}", b36(*client as u64)),
        Choice::Fault(Fault::Crash { server }) => format!("C{}", b36(*server as u64)),
        Choice::Fault(Fault::SkipSecond { server }) => format!("S{}", b36(*server as u64)),
        Choice::Fault(Fault::Leave { server }) => format!("L{}", b36(*server as u64)),
        Choice::Fault(Fault::Pause { client }) => format!("P{}", b36(*client as u64)),
        Choice::Fault(Fault::Die { client }) => format!("D{}", b36(*client as u64)),
        Choice::Fault(Fault::TooLarge { client }) => format!("T{}", b36(*client as u64)),
    }
}

fn parse_token(t: &str) -> Option<Choice> {
    let head_len = t.chars().next()?.len_utf8();
    let (head, rest) = t.split_at(head_len);
    let n = |s: &str| parse_b36(s).map(|v| v as usize);
    Some(match head {
        "E" => {
            let (server, key) = rest.split_once(':')?;
            Choice::Fault(Fault::Evict {
                server: n(server)?,
                key: unescape(key)?,
            })
        }
        "R" => Choice::Fault(Fault::ReplyLost { client: n(rest)? }),
        "Q" => Choice::Fault(Fault::RequestLost { client: n(rest)? }),
        "C" => Choice::Fault(Fault::Crash { server: n(rest)? }),
        "S" => Choice::Fault(Fault::SkipSecond { server: n(rest)? }),
        "L" => Choice::Fault(Fault::Leave { server: n(rest)? }),
        "P" => Choice::Fault(Fault::Pause { client: n(rest)? }),
        "D" => Choice::Fault(Fault::Die { client: n(rest)? }),
        "T" => Choice::Fault(Fault::TooLarge { client: n(rest)? }),
        _ => match t.split_once('+') {
            Some((c, d)) => Choice::Run {
                client: n(c)?,
                delay: parse_b36(d)?,
            },
            None => Choice::Run {
                client: n(t)?,
                delay: 0,
            },
        },
    })
}

impl Schedule {
    /// Parses the text form.
    pub fn parse(s: &str) -> Result<Schedule, ScheduleError> {
        let s = s.trim();
        let Some(body) = s.strip_prefix(VERSION) else {
            return Err(ScheduleError::Version(s.chars().take(8).collect()));
        };
        let mut choices = Vec::new();
        let mut phase = None;
        if body.is_empty() {
            return Ok(Schedule { phase, choices });
        }
        for (position, raw) in body.split('.').enumerate() {
            if position == 0
                && let Some(p) = raw.strip_prefix('@')
            {
                match parse_b36(p).filter(|&p| p < 1_000_000) {
                    Some(p) => phase = Some(p as u32),
                    None => {
                        return Err(ScheduleError::Token {
                            token: raw.to_string(),
                            position,
                        });
                    }
                }
                continue;
            }
            let bad = || ScheduleError::Token {
                token: raw.to_string(),
                position,
            };
            let (t, count) = match raw.split_once('*') {
                Some((t, c)) => (t, parse_b36(c).ok_or_else(bad)?),
                None => (raw, 1),
            };
            if t.is_empty() || count == 0 {
                return Err(bad());
            }
            let choice = parse_token(t).ok_or_else(bad)?;
            if choices.len() as u64 + count > MAX_CHOICES {
                return Err(ScheduleError::TooLong);
            }
            for _ in 0..count {
                choices.push(choice.clone());
            }
        }
        Ok(Schedule { phase, choices })
    }

    /// Number of choices.
    pub fn len(&self) -> usize {
        self.choices.len()
    }

    /// True if there are no choices.
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
    }

    /// The same schedule for the clients numbered below `clients` only: the others'
    /// turns left out, the faults kept.
    pub fn of_clients_below(&self, clients: usize) -> Schedule {
        let kept = |c: &&Choice| !matches!(c, Choice::Run { client, .. } if *client >= clients);
        Schedule {
            phase: self.phase,
            choices: self.choices.iter().filter(kept).cloned().collect(),
        }
    }

    /// Number of faults among the choices.
    pub fn faults(&self) -> usize {
        self.choices
            .iter()
            .filter(|c| matches!(c, Choice::Fault(_)))
            .count()
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(VERSION)?;
        let mut i = 0;
        let mut first = true;
        if let Some(phase) = self.phase {
            write!(f, "@{}", b36(u64::from(phase)))?;
            first = false;
        }
        while i < self.choices.len() {
            let mut j = i + 1;
            while j < self.choices.len() && self.choices[j] == self.choices[i] {
                j += 1;
            }
            if !first {
                f.write_str(".")?;
            }
            first = false;
            f.write_str(&token(&self.choices[i]))?;
            if j - i > 1 {
                write!(f, "*{}", b36((j - i) as u64))?;
            }
            i = j;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = Schedule {
            phase: None,
            choices: vec![
                Choice::Run {
                    client: 0,
                    delay: 0,
                },
                Choice::Run {
                    client: 0,
                    delay: 0,
                },
                Choice::Run {
                    client: 37,
                    delay: 1234,
                },
                Choice::Fault(Fault::Evict {
                    server: 0,
                    key: "lock.x:1%".into(),
                }),
                Choice::Fault(Fault::ReplyLost { client: 2 }),
                Choice::Fault(Fault::Crash { server: 1 }),
                Choice::Fault(Fault::SkipSecond { server: 0 }),
                Choice::Fault(Fault::RequestLost { client: 5 }),
            ],
        };
        let text = s.to_string();
        assert_eq!(text, "mc1:0*2.11+ya.E0:lock%2ex%3a1%25.R2.C1.S0.Q5");
        assert_eq!(Schedule::parse(&text), Ok(s.clone()));
        let phased = Schedule {
            phase: Some(250_000),
            ..s
        };
        let text = phased.to_string();
        assert_eq!(text, "mc1:@5cwg.0*2.11+ya.E0:lock%2ex%3a1%25.R2.C1.S0.Q5");
        assert_eq!(Schedule::parse(&text), Ok(phased));
        let only = Schedule {
            phase: Some(0),
            choices: vec![],
        };
        assert_eq!(Schedule::parse(&only.to_string()), Ok(only));
        assert!(
            Schedule::parse("mc1:@lfls.0").is_err(),
            "a phase of a second or more"
        );
    }

    #[test]
    fn errors() {
        assert!(matches!(
            Schedule::parse("xx:1"),
            Err(ScheduleError::Version(_))
        ));
        assert!(matches!(
            Schedule::parse("mc1:1.?"),
            Err(ScheduleError::Token { position: 1, .. })
        ));
        assert_eq!(Schedule::parse("mc1:"), Ok(Schedule::default()));
    }
}
