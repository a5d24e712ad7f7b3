//! The set index under loom.

#[allow(unused_imports)]
use super::*;

// ---- set -------------------------------------------------------------------------------

/// The set workload: client `c` adds `m{c}_{i}` at even `i` and removes it at `i + 1`,
/// reading every `read_every` modifications. A client's reads must reflect its own
/// completed modifications (nobody else touches its members), and at the end the index
/// must hold exactly the members whose last modification was an add.
pub(crate) fn set_model(
    variant: SetVariant,
    n: usize,
    ops: u32,
    read_every: u32,
    threshold: usize,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        clients(&server, n, move |c, mc| async move {
            let index = SetIndex::new(INDEX, variant, threshold);
            for i in 0..ops {
                let member = format!("m{c}_{}", i - i % 2);
                if i % 2 == 0 {
                    index.add(&mc, &[&member]).await.expect("add");
                } else {
                    index.remove(&mc, &[&member]).await.expect("remove");
                }
                if read_every > 0 && (i + 1) % read_every == 0 {
                    let items = index.items(&mc).await.expect("items");
                    if items.contains(&member) != (i % 2 == 0) {
                        Sink::Panic.violated(format!(
                            "set.linearizable: c{c} read {items:?} right after its own \
                             modification of {member}"
                        ));
                    }
                }
            }
        });
        let index = SetIndex::new(INDEX, variant, threshold);
        let value = loom::future::block_on(server.client().get(index.key())).expect("get");
        let members = value
            .map(|v| decode(&v.data).expect("the index decodes").members)
            .unwrap_or_default();
        let expected: BTreeSet<String> = (0..n)
            .filter(|_| ops % 2 == 1)
            .map(|c| format!("m{c}_{}", ops - 1))
            .collect();
        if members != expected {
            Sink::Panic.violated(format!(
                "set.linearizable: the index holds {members:?}, the clients' last \
                 modifications say {expected:?}"
            ));
        }
    }
}

#[test]
pub(crate) fn set_as_written_2() {
    agree(
        "set",
        "as-written",
        2,
        "ops = 1\nread_every = 0",
        true,
        set_model(SetVariant::AsWritten, 2, 1, 0, 1),
    );
}

#[test]
pub(crate) fn set_retry_2() {
    agree(
        "set",
        "retry",
        2,
        "ops = 2\nread_every = 2",
        false,
        set_model(SetVariant::Retry, 2, 2, 2, 1),
    );
}

#[test]
pub(crate) fn set_compact_set_2() {
    agree(
        "set",
        "compact-set",
        2,
        "ops = 2\nread_every = 2\ndirtiness_threshold = 0",
        true,
        set_model(SetVariant::CompactSet, 2, 2, 2, 0),
    );
}
