//! The binary opcodes that name a key: retrievals and touches, stores, deletes and
//! counters.

use super::{Executed, Packet, be32, be64, done, error, exptime, op, respond, status};
use crate::clock::VirtualTime;
use crate::memcache::{Exptime, Key};
use crate::protocol::{ArithOp, Reply, Request, StoreMode};
use crate::server::Server;

/// The opcodes that name a key.
pub(super) fn keyed(
    p: &Packet,
    key: Key,
    quiet: bool,
    server: &mut Server,
    now: VirtualTime,
    out: &mut Vec<u8>,
) -> Executed {
    let cas_of = |server: &Server, key: &Key| server.peek(key, now).map_or(0, |i| i.cas);
    match p.opcode {
        op::GET
        | op::GETQ
        | op::GETK
        | op::GETKQ
        | op::TOUCH
        | op::GAT
        | op::GATQ
        | op::GATK
        | op::GATKQ => {
            let with_key = matches!(p.opcode, op::GETK | op::GETKQ | op::GATK | op::GATKQ);
            let request = match p.opcode {
                op::TOUCH => Request::Touch {
                    key: key.clone(),
                    exptime: exptime(be32(&p.extras)),
                    noreply: false,
                },
                op::GAT | op::GATQ | op::GATK | op::GATKQ => Request::Gat {
                    exptime: exptime(be32(&p.extras)),
                    keys: vec![key.clone()],
                    with_cas: true,
                },
                _ => Request::Get {
                    keys: vec![key.clone()],
                    with_cas: true,
                },
            };
            let reply = server.apply(&request, now);
            let hit = match &reply {
                Reply::Values(v) => v.first().map(|e| (e.flags, e.data.as_slice(), e.cas)),
                Reply::Touched => server
                    .peek(&key, now)
                    .map(|i| (i.flags, &[][..], Some(i.cas))),
                _ => None,
            };
            match hit {
                Some((flags, data, cas)) => {
                    let shown_key: &[u8] = if with_key { key.as_bytes() } else { &[] };
                    let value = if p.opcode == op::TOUCH { &[][..] } else { data };
                    respond(
                        out,
                        p,
                        status::SUCCESS,
                        &flags.to_be_bytes(),
                        shown_key,
                        value,
                        cas.unwrap_or(0),
                    );
                }
                None if quiet => {}
                None if with_key => {
                    respond(out, p, status::KEY_ENOENT, &[], key.as_bytes(), &[], 0);
                }
                None => error(out, p, status::KEY_ENOENT),
            }
            done(Some(request), reply, std::mem::take(out), false)
        }
        op::SET
        | op::SETQ
        | op::ADD
        | op::ADDQ
        | op::REPLACE
        | op::REPLACEQ
        | op::APPEND
        | op::APPENDQ
        | op::PREPEND
        | op::PREPENDQ => {
            let (flags, expiry) = if p.extras.len() == 8 {
                (be32(&p.extras[..4]), exptime(be32(&p.extras[4..])))
            } else {
                (0, Exptime::NEVER)
            };
            let base = match p.opcode {
                op::SET | op::SETQ => StoreMode::Set,
                op::ADD | op::ADDQ => StoreMode::Add,
                op::REPLACE | op::REPLACEQ => StoreMode::Replace,
                op::APPEND | op::APPENDQ => StoreMode::Append,
                _ => StoreMode::Prepend,
            };
            let appending = matches!(base, StoreMode::Append | StoreMode::Prepend);
            let total = crate::server::item_total(key.len(), flags, p.value.len());
            if total > u64::from(server.config().item_size_max) {
                // Checked before any cas.
                let reply = server.reject_too_large(&key, base == StoreMode::Set, now);
                error(out, p, status::E2BIG);
                // Written at once (with what is pending), then the value is skipped.
                return done(None, reply, std::mem::take(out), false);
            }
            // A cas makes set, add and replace a compare-and-swap; append and prepend
            // check it against the item and keep their own meaning.
            if appending && p.cas != 0 && server.peek(&key, now).is_some_and(|i| i.cas != p.cas) {
                error(out, p, status::KEY_EEXISTS);
                return done(None, Reply::Exists, std::mem::take(out), false);
            }
            let mode = if p.cas != 0 && !appending {
                StoreMode::Cas(p.cas)
            } else {
                base
            };
            let request = Request::Store {
                mode,
                key: key.clone(),
                flags,
                exptime: expiry,
                data: p.value.clone(),
                noreply: false,
            };
            let reply = server.apply(&request, now);
            match &reply {
                Reply::Stored if quiet => {}
                Reply::Stored => {
                    let cas = cas_of(server, &key);
                    respond(out, p, status::SUCCESS, &[], &[], &[], cas);
                }
                Reply::Exists => error(out, p, status::KEY_EEXISTS),
                Reply::NotFound => error(out, p, status::KEY_ENOENT),
                Reply::NotStored => error(
                    out,
                    p,
                    match mode {
                        StoreMode::Add => status::KEY_EEXISTS,
                        StoreMode::Replace => status::KEY_ENOENT,
                        _ => status::NOT_STORED,
                    },
                ),
                Reply::ServerError(e) if e.contains("too large") => error(out, p, status::E2BIG),
                _ => error(out, p, status::ENOMEM),
            }
            done(Some(request), reply, std::mem::take(out), false)
        }
        op::DELETE | op::DELETEQ => {
            if p.cas != 0 && server.peek(&key, now).is_some_and(|i| i.cas != p.cas) {
                error(out, p, status::KEY_EEXISTS);
                return done(None, Reply::Exists, std::mem::take(out), false);
            }
            let request = Request::Delete {
                key,
                noreply: false,
            };
            let reply = server.apply(&request, now);
            match &reply {
                Reply::Deleted if quiet => {}
                Reply::Deleted => respond(out, p, status::SUCCESS, &[], &[], &[], 0),
                _ => error(out, p, status::KEY_ENOENT),
            }
            done(Some(request), reply, std::mem::take(out), false)
        }
        _ => {
            // INCREMENT, DECREMENT and their quiet forms.
            let delta = be64(&p.extras[..8]);
            let initial = be64(&p.extras[8..16]);
            let expiry = be32(&p.extras[16..20]);
            // An empty value fails as not a number before the cas is compared; any other
            // value is compared first.
            let mismatch = server
                .peek(&key, now)
                .is_some_and(|i| p.cas != 0 && i.cas != p.cas && !i.data.is_empty());
            if mismatch {
                error(out, p, status::KEY_EEXISTS);
                return done(None, Reply::Exists, std::mem::take(out), false);
            }
            let op = if matches!(p.opcode, op::INCREMENT | op::INCREMENTQ) {
                ArithOp::Incr
            } else {
                ArithOp::Decr
            };
            let request = Request::Arith {
                op,
                key: key.clone(),
                delta,
                noreply: false,
            };
            let mut reply = server.apply(&request, now);
            let value = match &reply {
                Reply::Number(n) => Some(*n),
                Reply::NotFound if expiry != u32::MAX => {
                    // A miss creates the item with the initial value.
                    let create = Request::Store {
                        mode: StoreMode::Add,
                        key: key.clone(),
                        flags: 0,
                        exptime: exptime(expiry),
                        data: initial.to_string().into_bytes(),
                        noreply: false,
                    };
                    reply = server.apply(&create, now);
                    matches!(reply, Reply::Stored).then_some(initial)
                }
                _ => None,
            };
            match (value, &reply) {
                (Some(_), _) if quiet => {}
                (Some(n), _) => {
                    let cas = cas_of(server, &key);
                    respond(out, p, status::SUCCESS, &[], &[], &n.to_be_bytes(), cas);
                }
                (None, Reply::NotFound) => error(out, p, status::KEY_ENOENT),
                (None, Reply::ClientError(_)) => error(out, p, status::DELTA_BADVAL),
                (None, Reply::NotStored) => error(out, p, status::NOT_STORED),
                (None, _) => error(out, p, status::ENOMEM),
            }
            done(Some(request), reply, std::mem::take(out), false)
        }
    }
}
