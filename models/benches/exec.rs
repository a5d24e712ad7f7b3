//! Executor throughput: executions per second of the random strategy on the 3-client
//! get/set counter (one increment each: six calls per execution), and simulated calls per
//! second on a heavier workload.
//!
//! `cargo bench -p mcsim-models --bench exec`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcsim::exec::{ExecConfig, execute};
use mcsim::explore::Random;
use mcsim_models::counter::{CounterParams, CounterVariant, setup};

fn params(variant: CounterVariant, increments: u32) -> CounterParams {
    CounterParams {
        variant,
        increments,
        reads: 0,
        think: Duration::ZERO,
        retries: 0,
        skews: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let config = ExecConfig {
        trace: false,
        ..ExecConfig::default()
    };
    let mut group = c.benchmark_group("random");

    let p = params(CounterVariant::GetSet, 1);
    let s = move |sim: &mut mcsim::Sim| setup(&p, 3, sim);
    group.throughput(Throughput::Elements(1));
    group.bench_function("executions/counter-get-set-3-clients", |b| {
        let mut strategy = Random::new(0);
        let mut i = 0;
        b.iter(|| {
            i += 1;
            black_box(execute(&config, &s, &mut strategy, i).calls)
        });
    });

    let p = params(CounterVariant::IncrAdd, 100);
    let s = move |sim: &mut mcsim::Sim| setup(&p, 10, sim);
    let calls = execute(&config, &s, &mut Random::new(0), 0).calls;
    group.throughput(Throughput::Elements(calls));
    group.bench_function("calls/counter-incr-add-10-clients-x100", |b| {
        let mut strategy = Random::new(0);
        let mut i = 0;
        b.iter(|| {
            i += 1;
            black_box(execute(&config, &s, &mut strategy, i).calls)
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
