//! The catalog of every recipe family: turns a scenario's recipe, variant and parameters
//! into the setup of its executions.

use mcsim::scenario::{BuildContext, Catalog, FieldError, Setup};

use crate::{cluster, counter, lock};

/// One recipe family as the catalog knows it.
pub struct Family {
    /// Its name in scenario files (`lock`).
    pub name: &'static str,
    /// Its variants (`add`, `get-set`, …).
    pub variants: &'static [&'static str],
    /// The invariants it checks.
    pub invariants: &'static [&'static str],
    /// Builds the setup of a scenario's executions from its variant and parameters.
    pub build: fn(&BuildContext<'_>) -> Result<Setup, FieldError>,
}

/// Every family, in the order `mcsim` lists them.
pub const FAMILIES: &[Family] = &[
    Family {
        name: lock::FAMILY,
        variants: lock::VARIANTS,
        invariants: lock::INVARIANTS,
        build: lock::build,
    },
    Family {
        name: counter::FAMILY,
        variants: counter::VARIANTS,
        invariants: counter::INVARIANTS,
        build: counter::build,
    },
    Family {
        name: crate::cache::FAMILY,
        variants: crate::cache::VARIANTS,
        invariants: crate::cache::INVARIANTS,
        build: crate::cache::build,
    },
    Family {
        name: crate::tags::FAMILY,
        variants: crate::tags::VARIANTS,
        invariants: crate::tags::INVARIANTS,
        build: crate::tags::build,
    },
    Family {
        name: crate::visitor::FAMILY,
        variants: crate::visitor::VARIANTS,
        invariants: crate::visitor::INVARIANTS,
        build: crate::visitor::build,
    },
    Family {
        name: crate::array::FAMILY,
        variants: crate::array::VARIANTS,
        invariants: crate::array::INVARIANTS,
        build: crate::array::build,
    },
    Family {
        name: crate::array2::FAMILY,
        variants: crate::array2::VARIANTS,
        invariants: crate::array2::INVARIANTS,
        build: crate::array2::build,
    },
    Family {
        name: crate::table::FAMILY,
        variants: crate::table::VARIANTS,
        invariants: crate::table::INVARIANTS,
        build: crate::table::build,
    },
    Family {
        name: crate::set::FAMILY,
        variants: crate::set::VARIANTS,
        invariants: crate::set::INVARIANTS,
        build: crate::set::build,
    },
    Family {
        name: crate::online::FAMILY,
        variants: crate::online::VARIANTS,
        invariants: crate::online::INVARIANTS,
        build: crate::online::build,
    },
    Family {
        name: cluster::FAMILY,
        variants: cluster::VARIANTS,
        invariants: cluster::INVARIANTS,
        build: cluster::build,
    },
    Family {
        name: crate::eventlog::FAMILY,
        variants: crate::eventlog::VARIANTS,
        invariants: crate::eventlog::INVARIANTS,
        build: crate::eventlog::build,
    },
];

/// Every recipe family mcsim models.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recipes;

impl Catalog for Recipes {
    fn build(&self, recipe: &str, cx: &BuildContext<'_>) -> Result<Setup, FieldError> {
        match FAMILIES.iter().find(|f| f.name == recipe) {
            Some(f) => (f.build)(cx),
            None => Err(FieldError::new(
                "recipe",
                None,
                format!("unknown recipe {recipe:?}"),
            )),
        }
    }

    fn families(&self) -> Vec<(&'static str, &'static [&'static str])> {
        FAMILIES.iter().map(|f| (f.name, f.variants)).collect()
    }

    fn shared(&self) -> std::rc::Rc<dyn Catalog> {
        std::rc::Rc::new(*self)
    }

    fn invariants(&self, recipe: &str) -> &'static [&'static str] {
        FAMILIES
            .iter()
            .find(|f| f.name == recipe)
            .map(|f| f.invariants)
            .unwrap_or(&[])
    }
}

/// The error for a variant a family does not have (the loader checks names first, so this
/// only guards builders called directly).
pub fn unknown_variant(cx: &BuildContext<'_>) -> FieldError {
    FieldError::new("variant", None, format!("unknown variant {:?}", cx.variant))
}
