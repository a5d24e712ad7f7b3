//! The control channel: `mcsim …` command lines, sent on any connection to a server,
//! that inject a fault or move the clock now. Each is answered `OK` (with details after
//! it on the same line) or `CLIENT_ERROR …`; they are not memcached commands, so a
//! client library never sends one by accident.
//!
//! | command                     | effect                                                 |
//! |-----------------------------|--------------------------------------------------------|
//! | `mcsim evict KEY`           | evicts KEY from this server, as memory pressure would |
//! | `mcsim evict-fraction F`    | evicts each live key of this server with chance F      |
//! | `mcsim evict-random`        | evicts one live key of this server                    |
//! | `mcsim flush`               | loses every key of this server (the process stays)     |
//! | `mcsim crash`               | restarts this server empty and closes its connections |
//! | `mcsim down [N]`            | this server (or server N) leaves: its connections close at their next command, new ones are refused (reset as soon as made) |
//! | `mcsim up [N]`              | it returns, empty (server N: sent on any server's port, since a server that is down takes no new connection) |
//! | `mcsim lose-reply [N]`      | the next N replies of this server are dropped, their commands applied |
//! | `mcsim pause WHO MS`        | participant WHO pauses MS ms before its next command (its command waits in virtual time; the others go on) |
//! | `mcsim done WHO`            | participant WHO takes no more part: its connection's commands run at once, and it is not awaited after a fault broke its connection |
//! | `mcsim close-next [N]`      | the next N connections to send a command are closed before it runs |
//! | `mcsim advance SECONDS`     | moves every server's clock ahead (fractions allowed)   |
//! | `mcsim skip-second`         | this server's clock jumps one second ahead             |
//! | `mcsim name NAME`           | names this connection in the trace (and in lockstep)   |
//! | `mcsim fail MESSAGE`        | the run fails with MESSAGE (what `mcsim test` judges) |
//! | `mcsim enter SECTION [WHO]` | WHO (default: this connection's name) enters SECTION; someone else inside fails the run (under lockstep, in WHO's turn) |
//! | `mcsim leave SECTION [WHO]` | WHO leaves SECTION (under lockstep, in WHO's turn)    |
//! | `mcsim metric NAME VALUE`   | a figure of the run (`mcsim test` sums them up)       |
//! | `mcsim sometimes NAME`      | the danger NAME happened in this run                  |
//! | `mcsim trace`               | the trace's last lines (`--trace-window`), then `END` |
//! | `mcsim time`                | the virtual time, in seconds                           |
//! | `mcsim sleep MS [WHO]`      | WHO (default: this connection) waits MS ms of virtual time: under lockstep, until the clock gets there (see `lockstep`); otherwise the clock moves ahead (real time passes, with `--clock real`) |
//! | `mcsim next`                | under `mcsim test`: waits for the next execution, `OK run N seed S clients C`, or `OK done pass` / `OK done fail` |

use std::time::Duration;

use crate::world::World;
use mcsim::memcache::Key;

/// What a control command asks of the connection that sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Reply with these bytes.
    Reply(Vec<u8>),
    /// Name the connection, then reply `OK`.
    Name(String),
    /// The server restarted or left (its epoch moved on): every connection to it closes.
    Crashed,
    /// WHO (`None`: this connection) waits this long in virtual time, then `OK`.
    Sleep(Option<String>, Duration),
}

/// True if `line` (without its line end) is a control command.
pub(crate) fn is_control(line: &[u8]) -> bool {
    line.starts_with(b"mcsim ") || line == b"mcsim"
}

fn ok(detail: impl std::fmt::Display) -> Effect {
    let detail = detail.to_string();
    let line = if detail.is_empty() {
        "OK\r\n".to_string()
    } else {
        format!("OK {detail}\r\n")
    };
    Effect::Reply(line.into_bytes())
}

fn error(message: impl std::fmt::Display) -> Effect {
    Effect::Reply(format!("CLIENT_ERROR {message}\r\n").into_bytes())
}

fn count(word: Option<&str>) -> Result<u32, Effect> {
    match word {
        None => Ok(1),
        Some(w) => w
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| error(format!("{w:?} is not a count"))),
    }
}

/// If the control command `line` is a step of a participant's, to be taken in its turn
/// under lockstep (`enter` and `leave`): `Some` with the section and the participant it
/// names (`None`: the connection that sent it).
pub(crate) fn in_turn(line: &str) -> Option<(&str, Option<&str>)> {
    let mut words = line.split_whitespace().skip(1);
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some("enter" | "leave"), Some(section), who, None) => Some((section, who)),
        _ => None,
    }
}

/// Runs the control command `line` for a connection to `server`.
pub(crate) fn run(world: &mut World, server: usize, who: &str, line: &str) -> Effect {
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    let (Some(&verb), args) = (words.first(), &words[words.len().min(1)..]) else {
        return error(
            "mcsim: give a command (evict, evict-fraction, evict-random, flush, crash, down, up, lose-reply, close-next, pause, done, advance, skip-second, name, fail, enter, leave, metric, sometimes, sleep, trace, time, next)",
        );
    };
    let now = world.now();
    let effect = match (verb, args) {
        ("evict", [key]) => match Key::new(key.as_bytes()) {
            Ok(k) => {
                let was = world.servers[server].evict(&k, now);
                ok(if was { "evicted" } else { "absent" })
            }
            Err(e) => error(format!("bad key: {e}")),
        },
        ("evict-fraction", [f]) => match f.parse::<f64>() {
            Ok(f) if (0.0..=1.0).contains(&f) => ok(world.evict_fraction(server, f)),
            _ => error(format!("{f:?} is not a fraction from 0 to 1")),
        },
        ("evict-random", []) => ok(world.evict_one(server).unwrap_or_default()),
        ("flush", []) => {
            world.servers[server].drop_all();
            ok("")
        }
        ("crash", []) => {
            world.restart_empty(server, now);
            Effect::Crashed
        }
        ("lose-reply", rest) if rest.len() <= 1 => match count(rest.first().copied()) {
            Ok(n) => {
                world.armed[server].lose_replies =
                    world.armed[server].lose_replies.saturating_add(n);
                ok("")
            }
            Err(e) => e,
        },
        ("close-next", rest) if rest.len() <= 1 => match count(rest.first().copied()) {
            Ok(n) => {
                world.armed[server].close_next = world.armed[server].close_next.saturating_add(n);
                ok("")
            }
            Err(e) => e,
        },
        ("advance", [s]) => match s.parse::<f64>() {
            Ok(secs) if secs.is_finite() && (0.0..=1e9).contains(&secs) => {
                world.advance(Duration::from_secs_f64(secs));
                ok(world.now())
            }
            _ => error(format!("{s:?} is not a number of seconds")),
        },
        ("down", rest) if rest.len() <= 1 => match index(world, server, rest.first()) {
            // This server's own connection closes with the others.
            Ok(down) if down == server => {
                world.take_down_told(down);
                Effect::Crashed
            }
            Ok(down) => {
                world.take_down_told(down);
                ok("")
            }
            Err(e) => e,
        },
        ("up", rest) if rest.len() <= 1 => match index(world, server, rest.first()) {
            Ok(up) => {
                if world.down[up] {
                    world.servers[up].restart(now, false);
                    world.down[up] = false;
                }
                ok("")
            }
            Err(e) => e,
        },
        ("skip-second", []) => {
            world.servers[server].skip_second();
            ok("")
        }
        ("pause", [who, ms]) => match ms.parse::<u64>() {
            Ok(ms) if (1..=1_000_000_000).contains(&ms) => {
                world
                    .pauses
                    .insert((*who).to_string(), Duration::from_millis(ms));
                ok("")
            }
            _ => error(format!("{ms:?} is not a number of milliseconds above 0")),
        },
        ("done", [who]) => {
            if let Some(ls) = &mut world.lockstep {
                ls.done(who);
            }
            ok("")
        }
        ("name", [name]) => Effect::Name((*name).to_string()),
        ("name", words) if words.len() > 1 => error(format!(
            "a participant's name is one word (no spaces): {:?}",
            words.join(" ")
        )),
        ("sleep", [ms]) | ("sleep", [ms, _]) => match ms.parse::<u64>() {
            Ok(ms) if ms <= 1_000_000_000 => Effect::Sleep(
                args.get(1).map(|w| (*w).to_string()),
                Duration::from_millis(ms),
            ),
            _ => error(format!("{ms:?} is not a number of milliseconds")),
        },
        ("fail", message) if !message.is_empty() => {
            world.fail(message.join(" "));
            ok("")
        }
        ("metric", [name, value]) => match value.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                world.declared.metrics.push(((*name).to_string(), v));
                ok("")
            }
            _ => error(format!("{value:?} is not a number")),
        },
        ("sometimes", [name]) => {
            world.declared.sometimes.insert((*name).to_string());
            ok("")
        }
        ("enter", [section]) | ("enter", [section, _]) => {
            let holder = args.get(1).copied().unwrap_or(who);
            // A failure is where the ENTER line that follows is.
            if let Some(broken) = world.declared.enter(section, holder, now) {
                world.fail(broken);
            }
            let n = world.commands;
            world.record(format!("{n:>8} {now}  {holder}  ENTER {section}"));
            ok("")
        }
        ("leave", [section]) | ("leave", [section, _]) => {
            let holder = args.get(1).copied().unwrap_or(who);
            if world.declared.leave(section, holder) {
                let n = world.commands;
                world.record(format!("{n:>8} {now}  {holder}  LEAVE {section}"));
                ok("")
            } else {
                error(format!("{holder} is not inside {section}"))
            }
        }
        ("trace", []) => {
            let mut out = String::new();
            let (lines, dropped) = world.trace();
            if dropped > 0 {
                out.push_str(&format!(
                    "... {dropped} earlier lines left the window kept in memory \
                     (--trace-window; --trace FILE has them all)\r\n"
                ));
            }
            for l in lines {
                out.push_str(l);
                out.push_str("\r\n");
            }
            out.push_str("END\r\n");
            Effect::Reply(out.into_bytes())
        }
        ("time", []) => ok(now),
        _ => error(format!("mcsim: unknown command or arguments: {line}")),
    };
    if let Effect::Reply(reply) = &effect
        && let Some(message) = reply.strip_prefix(b"CLIENT_ERROR ")
    {
        let message = String::from_utf8_lossy(message);
        world
            .declared
            .misuse
            .push(format!("{who} sent `{line}`: {}", message.trim_end()));
    }
    if !matches!(
        verb,
        "trace"
            | "time"
            | "name"
            | "enter"
            | "leave"
            | "metric"
            | "sometimes"
            | "sleep"
            | "pause"
            | "done"
            | "fail"
    ) && !matches!(effect, Effect::Reply(ref b) if b.starts_with(b"CLIENT_ERROR"))
    {
        let at = world.now();
        world.record(format!(
            "{:>8} {at}  s{server}  CONTROL {line}",
            world.commands
        ));
    }
    effect
}

/// Server `which` (its index) of the world's, `this` one if none is given, or the error
/// to answer.
fn index(world: &World, this: usize, which: Option<&&str>) -> Result<usize, Effect> {
    let Some(which) = which else {
        return Ok(this);
    };
    match which.parse::<usize>() {
        Ok(i) if i < world.servers.len() => Ok(i),
        _ => Err(error(format!(
            "{which:?} is not a server: give 0 to {}",
            world.servers.len() - 1
        ))),
    }
}
