//! A model as the scenario loader, the command line and the gate see it: looked up by
//! name, without knowing its types.

use std::marker::PhantomData;
use std::rc::Rc;

use crate::exec::Sim;
use crate::model::field::{FieldError, did_you_mean};
use crate::model::{Claim, Context, Model, ParamSource};

/// What a family builds for a scenario: registers one execution's clients and invariants.
pub type Setup = Rc<dyn Fn(&mut Sim)>;

/// One recipe family, as scenario files name it. Made from a [`Model`] by [`family`].
pub trait Family: Sync {
    /// Its name in scenario files.
    fn name(&self) -> &'static str;

    /// Its variants' names.
    fn variants(&self) -> Vec<&'static str>;

    /// The invariants it checks.
    fn invariants(&self) -> &'static [&'static str];

    /// What its variants' sources claim ([`Model::CLAIMS`]).
    fn claims(&self) -> &'static [Claim] {
        &[]
    }

    /// The setup of a scenario's executions from its variant and `[params]` table.
    #[doc(hidden)]
    fn build(
        &self,
        variant: &str,
        params: ParamSource<'_>,
        cx: &Context,
    ) -> Result<Setup, FieldError>;
}

/// The [`Family`] of a model, for a list of families (`mcsim_cli::main(&[family::<MyLock>()])`).
pub const fn family<M: Model>() -> &'static dyn Family {
    FamilyOf::<M>::ENTRY
}

struct FamilyOf<M>(PhantomData<fn() -> M>);

impl<M: Model> FamilyOf<M> {
    const ENTRY: &'static FamilyOf<M> = &FamilyOf(PhantomData);
}

impl<M: Model> Family for FamilyOf<M> {
    fn name(&self) -> &'static str {
        M::NAME
    }

    fn variants(&self) -> Vec<&'static str> {
        M::VARIANTS.iter().map(|(name, _)| *name).collect()
    }

    fn invariants(&self) -> &'static [&'static str] {
        M::INVARIANTS
    }

    fn claims(&self) -> &'static [Claim] {
        M::CLAIMS
    }

    fn build(
        &self,
        variant: &str,
        params: ParamSource<'_>,
        cx: &Context,
    ) -> Result<Setup, FieldError> {
        let Some(&(name, model)) = M::VARIANTS.iter().find(|(name, _)| *name == variant) else {
            return Err(FieldError::new(
                "variant",
                None,
                format!(
                    "unknown variant {variant:?} of {}{}; known: {}",
                    M::NAME,
                    did_you_mean(variant, self.variants().into_iter()),
                    self.variants().join(", ")
                ),
            ));
        };
        let p: M::Params = params.read(&format!("{}/{name}", M::NAME))?;
        model.check_params(&p, cx).map_err(|e| params.locate(e))?;
        let cx = cx.clone();
        Ok(Rc::new(move |sim| model.setup(&p, &cx, sim)))
    }
}
