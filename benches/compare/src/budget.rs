//! What a speed-up target over shuttle asks of each side, from measured times.
//!
//! mcsim and shuttle run the same recipe code against the same simulated server (the
//! shared work); each adds its own cost per execution on top (its overhead). A ratio of
//! rates is therefore `(shuttle overhead + shared) / (mcsim overhead + shared)`: making
//! the shared work cheaper raises it, but never above `shuttle overhead / mcsim
//! overhead`, the ratio if the recipe code and the server cost nothing at all. The
//! compare bench prints this bound beside the measured ratio, so a target can be judged
//! against what each part would have to become.

/// Per-execution times of one workload, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// The shared work alone: the recipe code and its server calls with no checker.
    pub shared: f64,
    /// One execution under shuttle's scheduler, shared work included.
    pub shuttle: f64,
    /// One execution under an mcsim strategy, shared work included.
    pub mcsim: f64,
}

impl Budget {
    /// What shuttle spends per execution above the shared work.
    pub fn shuttle_overhead(&self) -> f64 {
        (self.shuttle - self.shared).max(0.0)
    }

    /// What mcsim spends per execution above the shared work.
    pub fn mcsim_overhead(&self) -> f64 {
        (self.mcsim - self.shared).max(0.0)
    }

    /// The measured ratio of rates, mcsim over shuttle.
    pub fn ratio(&self) -> f64 {
        self.shuttle / self.mcsim
    }

    /// The ratio mcsim would reach, keeping its overhead, if the shared work cost
    /// nothing: the most that speeding up the recipe code and the server can give.
    pub fn ratio_with_free_shared_work(&self) -> f64 {
        self.shuttle_overhead() / self.mcsim_overhead()
    }

    /// The most the shared work may cost per execution for mcsim, keeping its present
    /// overhead, to run `target` times as fast as shuttle; `None` if no cost is low
    /// enough (the overhead alone is too much).
    pub fn shared_work_allowed(&self, target: f64) -> Option<f64> {
        // Solves `(s + w) / (m + w) >= target` for `w`:
        // at most `(s - target·m) / (target - 1)`.
        let most = (self.shuttle_overhead() - target * self.mcsim_overhead()) / (target - 1.0);
        (most > 0.0).then_some(most)
    }

    /// The most mcsim's overhead may be, with the shared work as it is, to run `target`
    /// times as fast as shuttle; `None` if not even a free checker would.
    pub fn overhead_allowed(&self, target: f64) -> Option<f64> {
        let most = (self.shuttle - target * self.shared) / target;
        (most > 0.0).then_some(most)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Roughly the get/set counter on the reference machine.
    const GET_SET: Budget = Budget {
        shared: 700.0,
        shuttle: 7000.0,
        mcsim: 1400.0,
    };

    #[test]
    fn the_parts_add_up_to_the_measured_ratio() {
        let b = GET_SET;
        assert_eq!(b.shuttle_overhead(), 6300.0);
        assert_eq!(b.mcsim_overhead(), 700.0);
        assert_eq!(b.ratio(), 5.0);
        assert_eq!(
            (b.shuttle_overhead() + b.shared) / (b.mcsim_overhead() + b.shared),
            b.ratio()
        );
    }

    #[test]
    fn free_shared_work_bounds_the_ratio_by_the_overheads() {
        assert_eq!(GET_SET.ratio_with_free_shared_work(), 9.0);
        // Any shared work at all pulls the ratio below that bound.
        for shared in [1.0, 100.0, 700.0, 5000.0] {
            let b = Budget {
                shared,
                shuttle: 6300.0 + shared,
                mcsim: 700.0 + shared,
            };
            assert!(b.ratio() < 9.0, "{shared}: {}", b.ratio());
        }
    }

    #[test]
    fn a_target_above_the_bound_leaves_no_shared_work_a_target_below_it_some() {
        assert_eq!(GET_SET.shared_work_allowed(10.0), None);
        // 5× is what it runs at: the shared work may stay as it is.
        assert_eq!(GET_SET.shared_work_allowed(5.0), Some(700.0));
        let w = GET_SET
            .shared_work_allowed(8.0)
            .expect("8× is below the 9× bound");
        let at = Budget {
            shared: w,
            shuttle: 6300.0 + w,
            mcsim: 700.0 + w,
        };
        assert!((at.ratio() - 8.0).abs() < 1e-9, "{}", at.ratio());
    }

    #[test]
    fn the_overhead_allowed_reaches_the_target_with_the_shared_work_as_it_is() {
        let m = GET_SET
            .overhead_allowed(5.0)
            .expect("below the free-checker bound");
        assert_eq!(m, 700.0);
        // shuttle / shared = 10: a free checker runs exactly at 10×, nothing is left.
        assert_eq!(GET_SET.overhead_allowed(10.0), None);
        let roomy = Budget {
            shuttle: 14000.0,
            ..GET_SET
        };
        assert_eq!(roomy.overhead_allowed(10.0), Some(700.0));
    }
}
