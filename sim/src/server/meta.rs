//! Meta commands (`mg`, `ms`, `md`, `ma`, `mn`).

use crate::clock::VirtualTime;
use crate::memcache::Key;
use crate::protocol::{MetaCode, MetaCommand, MetaFlag, MetaReply, Reply};
use crate::server::Server;

/// Executes one meta command.
pub(super) fn execute(
    _server: &mut Server,
    command: MetaCommand,
    _key: Option<&Key>,
    _flags: &[MetaFlag],
    _data: Option<&[u8]>,
    _now: VirtualTime,
) -> Reply {
    match command {
        MetaCommand::Noop => {
            Reply::Meta(MetaReply { code: MetaCode::Noop, flags: vec![], value: None })
        }
        _ => Reply::Error,
    }
}
