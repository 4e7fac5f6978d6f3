//! User records as the service returns them: GET `/v2/users/{user_id}`
//! (spec operation 9, `GetUserResponse` with `projects_count` and
//! `runs_count`) and GET `/v2/current_user` (`CurrentUserDB`), and the
//! permission lists the sandbox attaches to records.

use crate::api::{Permission, User, UserRole};

use super::{ApiError, State, UserRecord};

/// The caller's permissions on a record, for the `permissions` field: reads
/// are always allowed; `update`/`delete` (and the like) need a role other
/// than `read_only`.
pub fn permissions(caller: &UserRecord, actions: &[&str]) -> Vec<Permission> {
    let can_write = caller.role != UserRole::ReadOnly;
    actions
        .iter()
        .map(|action| Permission {
            action: (*action).to_owned(),
            allowed: can_write,
            message: (!can_write).then(|| "read_only users cannot change records".to_owned()),
        })
        .collect()
}

impl State {
    fn user_shape(&self, user: &UserRecord, caller: &UserRecord) -> User {
        let user_actions: &[&str] = if caller.role == UserRole::Admin || caller.id == user.id {
            &["update", "delete"]
        } else {
            &[]
        };
        User {
            id: user.id.clone(),
            permissions: permissions(caller, user_actions),
            email: user.email.clone(),
            first_name: Some(user.first_name.clone()),
            last_name: Some(user.last_name.clone()),
            auth_method: user.auth_method.clone(),
            role: user.role.clone(),
            email_is_verified: Some(user.email_is_verified),
            organization_id: self.organization.id.clone(),
            organization_name: self.organization.name.clone(),
            created_at: user.created_at.clone(),
            updated_at: user.updated_at.clone(),
            projects_count: None,
            runs_count: None,
        }
    }

    /// GET `/v2/users/{user_id}`: the user with `projects_count` (projects
    /// the user created) and `runs_count` (log streams and experiments the
    /// user created).
    pub fn get_user(&self, user_id: &str, caller: &UserRecord) -> Result<User, ApiError> {
        let user = self
            .user(user_id)
            .ok_or_else(|| ApiError::not_found("User"))?;
        let mut shape = self.user_shape(user, caller);
        let created_by_user = |c: &Option<String>| c.as_deref() == Some(user.id.as_str());
        let projects = self
            .projects
            .iter()
            .filter(|p| p.created_by == user.id)
            .count();
        let runs = self
            .log_streams
            .iter()
            .filter(|l| created_by_user(&l.created_by))
            .count()
            + self
                .experiments
                .iter()
                .filter(|e| created_by_user(&e.created_by))
                .count();
        shape.projects_count = Some(i64::try_from(projects).unwrap_or(i64::MAX));
        shape.runs_count = Some(i64::try_from(runs).unwrap_or(i64::MAX));
        Ok(shape)
    }

    /// GET `/v2/current_user`: the caller's own record (no counts).
    pub fn current_user(&self, caller: &UserRecord) -> User {
        self.user_shape(caller, caller)
    }
}
