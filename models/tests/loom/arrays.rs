//! The read-mostly and append-mostly arrays under loom.

#[allow(unused_imports)]
use super::*;

// ---- read-mostly array -----------------------------------------------------------------

/// Writers only (no readers), one change each: at the end the array holds every appended
/// element not removed, each once.
pub(crate) fn array_model(
    variant: ArrayVariant,
    n: usize,
    changes: u32,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        let array = move |c| Array::new("a", variant, 5, Duration::from_millis(2), c);
        clients(&server, n, move |c, mc| async move {
            let array = array(c);
            for i in 0..changes {
                let add = vec![format!("c{c}.{i}")];
                let delete = match i % 2 {
                    1 => vec![format!("c{c}.{}", i - 1)],
                    _ => Vec::new(),
                };
                array
                    .change(&mc, &add, &delete, Duration::ZERO)
                    .await
                    .expect("change");
            }
        });
        let mut got = loom::future::block_on(array(0).fetch(&server.client())).expect("fetch");
        got.sort();
        let mut expected: Vec<String> = (0..n)
            .flat_map(|c| (0..changes).map(move |i| (c, i)))
            .filter(|&(_, i)| i % 2 == 1 || i + 1 == changes)
            .map(|(c, i)| format!("c{c}.{i}"))
            .collect();
        expected.sort();
        if got != expected {
            Sink::Panic.violated(format!(
                "array.no_lost_updates: the array holds {got:?}, expected {expected:?}"
            ));
        }
    }
}

#[test]
pub(crate) fn array_lock_2() {
    agree(
        "array",
        "lock",
        2,
        "readers = 0\nchanges = 1",
        false,
        array_model(ArrayVariant::Lock, 2, 1),
    );
}

#[test]
pub(crate) fn array_cas_2() {
    agree(
        "array",
        "cas",
        2,
        "readers = 0\nchanges = 1",
        false,
        array_model(ArrayVariant::Cas, 2, 1),
    );
}

// ---- append-mostly array ---------------------------------------------------------------

/// Every element whose `add` returned must be in the array at the end.
pub(crate) fn array2_model(
    variant: Array2Variant,
    n: usize,
    elements: u32,
) -> impl Fn() + Sync + Send + 'static {
    move || {
        let server = LoomServer::with_defaults();
        let completed: Vec<u64> = clients(&server, n, move |c, mc| async move {
            let array = Array2::new("log", variant);
            let mut done = Vec::new();
            for i in 0..elements {
                array.add(&mc, element(c, i)).await.expect("add");
                done.push(element(c, i));
            }
            done
        })
        .into_iter()
        .flatten()
        .collect();
        let got = loom::future::block_on(Array2::new("log", variant).fetch(&server.client()))
            .expect("fetch");
        let lost: Vec<u64> = completed.into_iter().filter(|e| !got.contains(e)).collect();
        if !lost.is_empty() {
            Sink::Panic.violated(format!(
                "array.no_lost_elements: {lost:?} completed but the array holds {got:?}"
            ));
        }
    }
}

#[test]
pub(crate) fn array2_as_written_2() {
    agree(
        "array2",
        "as-written",
        2,
        "elements = 1",
        true,
        array2_model(Array2Variant::AsWritten, 2, 1),
    );
}

#[test]
pub(crate) fn array2_fixed_2() {
    agree(
        "array2",
        "fixed",
        2,
        "elements = 1",
        false,
        array2_model(Array2Variant::Fixed, 2, 1),
    );
}
