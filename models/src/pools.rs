//! For the families that address two servers by role (`gutter`: a primary and a gutter
//! pool; `warmup`: a cold and a warm cluster): the check that a scenario gives them.

use mcsim::prelude::*;

/// Two servers, 0 and 1 in the roles `roles` names, and at least `clients` clients,
/// whom `who` names: otherwise an error at the field, naming the family.
pub(crate) fn check_two_servers(
    cx: &Context,
    family: &str,
    roles: &str,
    clients: usize,
    who: &str,
) -> Result<(), FieldError> {
    if cx.servers != 2 {
        return Err(FieldError::new(
            "servers.count",
            None,
            format!(
                "the {family} family runs on 2 servers ({roles}); the scenario has {}",
                cx.servers
            ),
        ));
    }
    if cx.clients < clients {
        return Err(FieldError::new(
            "clients",
            None,
            format!("the {family} family needs {who}: {clients} clients or more"),
        ));
    }
    Ok(())
}
