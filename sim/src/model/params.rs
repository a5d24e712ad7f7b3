//! Reading a scenario's `[params]` table into a model's parameter struct, with errors at
//! the line and field they are about.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde::de::DeserializeOwned;
use toml::Spanned;

use crate::model::field::{FieldError, did_you_mean, key_at};

/// A scenario's `[params]` table being read: the file's text and the position of every
/// value.
#[derive(Debug, Clone, Copy)]
pub struct ParamSource<'a> {
    /// The whole file.
    pub(crate) source: &'a str,
    /// The table, as parsed.
    pub(crate) values: &'a BTreeMap<String, Spanned<toml::Value>>,
}

/// The file's `[params]` table and nothing else (other tables are read elsewhere).
#[derive(serde::Deserialize)]
struct OnlyParams<P: Default> {
    #[serde(default = "P::default")]
    params: P,
}

impl ParamSource<'_> {
    /// Reads the table into `P`; `owner` (`lock/add`) names the recipe in errors.
    pub(crate) fn read<P>(&self, owner: &str) -> Result<P, FieldError>
    where
        P: Serialize + DeserializeOwned + Default,
    {
        let params: P = match toml::from_str::<OnlyParams<P>>(self.source) {
            Ok(p) => p.params,
            Err(e) => return Err(self.locate_error::<P>(&e)),
        };
        self.reject_unknown(&params, owner)?;
        Ok(params)
    }

    /// The field and position of a failed read. A field read through `#[serde(flatten)]`
    /// reports only its table: the culprit is then found by reading each value alone.
    fn locate_error<P>(&self, e: &toml::de::Error) -> FieldError
    where
        P: DeserializeOwned,
    {
        let key = e.span().and_then(|s| key_at(self.source, s.start));
        if let Some(key) = key.filter(|k| k.starts_with("params.")) {
            return FieldError::new(key, e.span(), e.message().trim());
        }
        let fields = self
            .values
            .iter()
            .map(|(name, value)| (name.clone(), value.get_ref().clone(), Some(value.span())));
        first_bad_field::<P>(fields)
            .unwrap_or_else(|| FieldError::new("params", e.span(), e.message().trim()))
    }

    /// Fails on the first parameter `P` does not have: a typo, or a parameter of another
    /// recipe. A field is known if it is in what was read, written back.
    fn reject_unknown<P: Serialize + Default>(
        &self,
        params: &P,
        owner: &str,
    ) -> Result<(), FieldError> {
        let known = field_names(params)
            .into_iter()
            .chain(field_names(&P::default()))
            .collect::<BTreeSet<String>>();
        for (name, value) in self.values {
            if !known.contains(name) {
                let list: Vec<&str> = known.iter().map(String::as_str).collect();
                return Err(FieldError::new(
                    format!("params.{name}"),
                    Some(value.span()),
                    format!(
                        "unknown parameter for {owner}{}; known parameters: {}",
                        did_you_mean(name, list.iter().copied()),
                        list.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The position of a parameter's value, for an error a model raised about it.
    pub(crate) fn locate(&self, mut e: FieldError) -> FieldError {
        if e.span.is_none()
            && let Some(v) = e
                .field
                .strip_prefix("params.")
                .and_then(|name| self.values.get(name))
        {
            e.span = Some(v.span());
        }
        e
    }
}

fn field_names<P: Serialize>(params: &P) -> Vec<String> {
    match toml::Value::try_from(params) {
        Ok(toml::Value::Table(t)) => t.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Checks parameters built in code as a scenario file's would be: each field written out
/// and read back alone, so a [`Count`](crate::model::Count) or a duration out of range is
/// the same error, naming its field, as in a file.
pub(crate) fn recheck_params<P>(params: &P) -> Result<(), FieldError>
where
    P: Serialize + DeserializeOwned,
{
    // Parameters that are no table (`()`) have no field a file could set.
    let Ok(toml::Value::Table(table)) = toml::Value::try_from(params) else {
        return Ok(());
    };
    match first_bad_field::<P>(table.into_iter().map(|(name, value)| (name, value, None))) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The first field that `P` refuses when read alone (every other field defaulted), with
/// its position when known: the culprit of a failed read, whatever serde's error names.
fn first_bad_field<P: DeserializeOwned>(
    fields: impl Iterator<Item = (String, toml::Value, Option<std::ops::Range<usize>>)>,
) -> Option<FieldError> {
    fields.into_iter().find_map(|(name, value, span)| {
        let mut alone = toml::Table::new();
        alone.insert(name.clone(), value);
        P::deserialize(toml::Value::Table(alone))
            .err()
            .map(|e| FieldError::new(format!("params.{name}"), span, e.message().trim()))
    })
}
