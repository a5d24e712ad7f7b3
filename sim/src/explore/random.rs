//! The random strategy: uniform over the calls that may run, a uniform time inside the
//! call's window, and each kind of fault with the plan's probability. Seeded
//! PCG (`rand_pcg::Pcg64Mcg`): the seed alone determines the execution.

use rand::{RngExt, SeedableRng};

use crate::explore::{CallOption, Choice, Options, Strategy};
use crate::fault::FaultKind;

/// The generator behind `random` and `pct`: PCG's 64-bit multiplicative variant
/// (`rand_pcg::Pcg64Mcg`, the one shuttle's schedulers use too). Its output for a seed is
/// fixed by the crate's stability promise, so replay lines stay valid across versions;
/// seeding it costs a few multiplications, which matters because every execution reseeds.
pub(crate) type SeededRng = rand_pcg::Pcg64Mcg;

/// The seeds of a sampling strategy's executions (`random`, `swarm`, `pct`, `pos`):
/// execution `i` of first seed `s` draws everything from seed `s + i`, so a failure
/// replays from its seed alone, and its tick phase from that seed's own stream.
#[derive(Debug, Clone)]
pub(crate) struct Seeds {
    first: u64,
    /// The seed of the current execution.
    current: u64,
    /// The current execution's generator.
    pub(crate) rng: SeededRng,
}

impl Seeds {
    /// Seeds from `first` on, the first execution's generator ready.
    pub(crate) fn new(first: u64) -> Seeds {
        Seeds {
            first,
            current: first,
            rng: SeededRng::seed_from_u64(first),
        }
    }

    /// Starts execution `execution`: its seed, and a generator seeded with it.
    pub(crate) fn begin(&mut self, execution: u64) {
        self.current = self.first.wrapping_add(execution);
        self.rng = SeededRng::seed_from_u64(self.current);
    }

    /// The current execution's tick phase where the scenario leaves it free.
    pub(crate) fn tick_phase(&self, free: bool) -> Option<std::time::Duration> {
        free.then(|| drawn_phase(self.current))
    }
}

/// Uniform random choices from a seed.
#[derive(Debug, Clone)]
pub struct Random {
    seeds: Seeds,
}

impl Random {
    /// A strategy whose first execution uses `seed`, the next `seed + 1`, and so on.
    pub fn new(seed: u64) -> Random {
        Random {
            seeds: Seeds::new(seed),
        }
    }
}

/// The tick phase of the execution with seed `seed`, uniform over the microseconds of a
/// second. Drawn from its own stream (a SplitMix64 step of the seed), so that drawing it
/// leaves every other choice of the execution as it was.
pub(crate) fn drawn_phase(seed: u64) -> std::time::Duration {
    let mut z = seed ^ 0x7068_6173_6500_0000; // "phase"
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    std::time::Duration::from_micros(z % 1_000_000)
}

/// Picks a fault with the plan's probabilities, or none.
#[inline]
pub(crate) fn maybe_fault(rng: &mut SeededRng, options: &Options<'_>) -> Option<Choice> {
    // Most steps offer no fault: answered here, without a call.
    if options.faults.is_empty() {
        return None;
    }
    fault_firing(rng, options, 1.0, Aim::Anywhere)
}

/// Where a firing fault may land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aim {
    /// Any option of its kind, uniformly.
    Anywhere,
    /// Only an [aimed](crate::explore::FaultOption::aimed) option: at a step where its
    /// kind has none, the kind does not fire (nor spend a draw), so the budget waits for
    /// a step where it can bite.
    Only,
}

/// Each kind in turn fires with its plan probability times `boost` (at most 1), among
/// the options `aim` allows, uniformly. No list is built (this runs at every step of a
/// fault scenario), and with [`Aim::Anywhere`] no draw is spent on aiming, so `random`'s
/// draws are what they always were.
pub(crate) fn fault_firing(
    rng: &mut SeededRng,
    options: &Options<'_>,
    boost: f64,
    aim: Aim,
) -> Option<Choice> {
    if options.faults.is_empty() {
        return None;
    }
    for kind in FaultKind::ALL {
        let of_kind = options.faults_of(kind);
        let Some(first) = of_kind.clone().next() else {
            continue;
        };
        let aimed = if aim == Aim::Only {
            let aimed = of_kind.clone().filter(|f| f.aimed).count();
            if aimed == 0 {
                // Held until it can bite.
                continue;
            }
            aimed
        } else {
            0
        };
        if first.probability <= 0.0 || !rng.random_bool((first.probability * boost).min(1.0)) {
            continue;
        }
        let pick = if aimed > 0 {
            let i = rng.random_range(0..aimed);
            of_kind.filter(|f| f.aimed).nth(i)
        } else {
            let i = rng.random_range(0..of_kind.clone().count());
            of_kind.clone().nth(i)
        };
        return pick.map(|f| Choice::Fault(f.fault.clone()));
    }
    None
}

/// A uniform delay inside the window of the chosen call.
pub(crate) fn delay_in_window(rng: &mut SeededRng, options: &Options<'_>, client: usize) -> u64 {
    delay_in(rng, options.call_of(client).expect("chosen client may run"))
}

/// A delay drawn uniformly in `call`'s latency window.
#[inline(always)]
pub(crate) fn delay_in(rng: &mut SeededRng, call: &CallOption) -> u64 {
    let width = call.width();
    if width == 0 {
        0
    } else {
        rng.random_range(0..=width)
    }
}

impl Strategy for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn begin(&mut self, execution: u64) {
        self.seeds.begin(execution);
    }

    fn tick_phase(&mut self, free: bool) -> Option<std::time::Duration> {
        self.seeds.tick_phase(free)
    }

    #[inline(always)]
    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        let rng = &mut self.seeds.rng;
        if let Some(fault) = maybe_fault(rng, options) {
            return Some(fault);
        }
        let i = rng.random_range(0..options.calls.len());
        let call = &options.calls[i];
        let delay = delay_in(rng, call);
        let client = call.client;
        Some(Choice::Run { client, delay })
    }
}
