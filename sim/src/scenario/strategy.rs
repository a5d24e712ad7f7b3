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
    pub fn make(self, seed: u64) -> Box<dyn crate::explore::Strategy> {
        match self {
            StrategyKind::Random => Box::new(crate::explore::Random::new(seed)),
            StrategyKind::Swarm => Box::new(crate::explore::Swarm::new(seed)),
            StrategyKind::Pos => Box::new(crate::explore::Pos::new(seed)),
            StrategyKind::Pct { depth, steps } => {
                Box::new(crate::explore::Pct::new(seed, depth, steps))
            }
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
    }
}
