//! Every recipe family mcsim ships, one line each: the list scenario files, the command
//! line and the gate look families up in. A new family is a folder with a [`mcsim::Model`]
//! implementation and one line here.

use mcsim::model::{Family, family};

use crate::{
    array, array2, cache, cluster, counter, eventlog, gutter, herd, lock, lookaside, online, set,
    table, tags, visitor, warmup,
};

/// Every family, in the order `mcsim` lists them.
pub static RECIPES: &[&dyn Family] = &[
    family::<lock::LockVariant>(),
    family::<counter::CounterVariant>(),
    family::<cache::CacheVariant>(),
    family::<tags::TagsVariant>(),
    family::<visitor::VisitorVariant>(),
    family::<array::ArrayVariant>(),
    family::<array2::Array2Variant>(),
    family::<table::TableVariant>(),
    family::<set::SetVariant>(),
    family::<online::OnlineVariant>(),
    family::<cluster::ClusterVariant>(),
    family::<eventlog::EventLogVariant>(),
    family::<lookaside::LookasideVariant>(),
    family::<gutter::GutterVariant>(),
    family::<herd::HerdVariant>(),
    family::<warmup::WarmupVariant>(),
];
