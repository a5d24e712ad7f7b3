//! The command model shared by the simulated server, the codec and every client backend.

pub mod meta;
pub mod meta_flags;
pub mod number;
mod reply;
mod request;

pub use meta::{MetaCode, MetaCommand, MetaFlag};
pub use reply::{MetaReply, Reply, ValueEntry};
pub use request::{ArithOp, Request, StatsGroup, StoreMode};
