//! The catalog of every recipe family: turns a scenario's recipe, variant and parameters
//! into the setup of its executions.

use std::rc::Rc;

use mcsim::scenario::{BuildContext, Catalog, FieldError, Setup};

use crate::{counter, lock};

/// Every recipe family mcsim models.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recipes;

fn variant_error(cx: &BuildContext<'_>) -> FieldError {
    FieldError::new("variant", None, format!("unknown variant {:?}", cx.variant))
}

impl Catalog for Recipes {
    fn build(&self, recipe: &str, cx: &BuildContext<'_>) -> Result<Setup, FieldError> {
        let p = cx.params;
        let clients = cx.clients;
        match recipe {
            lock::FAMILY => {
                let params = lock::LockParams {
                    variant: lock::LockVariant::parse(cx.variant)
                        .ok_or_else(|| variant_error(cx))?,
                    timeout_s: p.u32("timeout_s", 10)?,
                    hold: p.millis("hold_ms", 50)?,
                    backoff: p.millis("backoff_ms", 10)?,
                    rounds: p.u32("rounds", 2)?,
                    skews: cx.skews.to_vec(),
                };
                Ok(Rc::new(move |sim| lock::setup(&params, clients, sim)))
            }
            counter::FAMILY => {
                let params = counter::CounterParams {
                    variant: counter::CounterVariant::parse(cx.variant)
                        .ok_or_else(|| variant_error(cx))?,
                    increments: p.u32("increments", 1)?,
                    reads: p.u32("reads", 0)?,
                    think: p.millis("think_ms", 0)?,
                    retries: p.u32("retries", 3)?,
                    skews: cx.skews.to_vec(),
                };
                Ok(Rc::new(move |sim| counter::setup(&params, clients, sim)))
            }
            other => Err(FieldError::new(
                "recipe",
                None,
                format!("unknown recipe {other:?}"),
            )),
        }
    }

    fn families(&self) -> Vec<(&'static str, &'static [&'static str])> {
        vec![
            (lock::FAMILY, lock::VARIANTS),
            (counter::FAMILY, counter::VARIANTS),
        ]
    }

    fn invariants(&self, recipe: &str) -> &'static [&'static str] {
        match recipe {
            lock::FAMILY => lock::INVARIANTS,
            counter::FAMILY => counter::INVARIANTS,
            _ => &[],
        }
    }
}
