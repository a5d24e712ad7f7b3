//! The sampling strategies a scenario file or `--strategy` can name.

/// Which strategy a scenario runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    /// [`crate::explore::Random`]
    Random,
    /// [`crate::explore::Swarm`]
    Swarm,
    /// [`crate::explore::Pos`]
    Pos,
    /// [`crate::explore::Pct`] with a depth.
    Pct {
        /// Bug depth.
        depth: usize,
        /// Estimated steps per execution.
        steps: u64,
    },
}

impl StrategyKind {
    /// Every strategy's name, as a scenario file and `--strategy` take it.
    pub const NAMES: [&'static str; 4] = ["swarm", "random", "pct", "pos"];

    /// PCT's estimate of the steps of an execution where a scenario file gives none
    /// (`[explore] steps_estimate`).
    pub const DEFAULT_STEPS: u64 = 100;

    /// Parses a strategy name (one of [`StrategyKind::NAMES`]).
    pub fn parse(name: &str, depth: usize, steps: u64) -> Option<StrategyKind> {
        match name {
            "random" => Some(StrategyKind::Random),
            "swarm" => Some(StrategyKind::Swarm),
            "pct" => Some(StrategyKind::Pct { depth, steps }),
            "pos" => Some(StrategyKind::Pos),
            _ => None,
        }
    }

    /// A fresh strategy for a first seed.
    pub fn make(self, seed: u64) -> Box<dyn crate::explore::Strategy + Send> {
        match self {
            StrategyKind::Random => Box::new(crate::explore::Random::new(seed)),
            StrategyKind::Swarm => Box::new(crate::explore::Swarm::new(seed)),
            StrategyKind::Pos => Box::new(crate::explore::Pos::new(seed)),
            StrategyKind::Pct { depth, steps } => {
                Box::new(crate::explore::Pct::new(seed, depth, steps))
            }
        }
    }

    /// The steps per execution PCT estimates: this strategy's own if it is PCT, else
    /// [`StrategyKind::DEFAULT_STEPS`] (for `--strategy pct` on a file that names
    /// another strategy).
    pub fn pct_steps(self) -> u64 {
        match self {
            StrategyKind::Pct { steps, .. } => steps,
            _ => Self::DEFAULT_STEPS,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::Swarm => "swarm",
            StrategyKind::Pct { .. } => "pct",
            StrategyKind::Pos => "pos",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StrategyKind;

    #[test]
    fn every_name_parses_to_the_strategy_of_that_name() {
        for name in StrategyKind::NAMES {
            let kind = StrategyKind::parse(name, 3, 100).expect(name);
            assert_eq!(kind.name(), name);
            assert_eq!(kind.make(0).name(), name);
        }
        assert_eq!(StrategyKind::parse("dfs", 3, 100), None);
        // `--strategy pct` on a file of another strategy estimates the default steps.
        assert_eq!(StrategyKind::Swarm.pct_steps(), StrategyKind::DEFAULT_STEPS);
        let pct = StrategyKind::Pct { depth: 2, steps: 7 };
        assert_eq!(pct.pct_steps(), 7);
    }
}
