//! Users: GET `/v2/users/{user_id}` (spec operation 9) and the caller's own
//! record, GET `/v2/current_user`.

use serde::{Deserialize, Serialize};

use super::common::Permission;
use super::enums::{AuthMethod, UserRole};

/// A user record (`GetUserResponse`, and `CurrentUserDB` without the counts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// Id (uuid4).
    pub id: String,
    /// Permissions of the caller on this user.
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Email.
    pub email: String,
    /// First name (default empty).
    #[serde(default)]
    pub first_name: Option<String>,
    /// Last name (default empty).
    #[serde(default)]
    pub last_name: Option<String>,
    /// How the user signs in.
    #[serde(default = "default_auth_method")]
    pub auth_method: AuthMethod,
    /// Role in the organization.
    #[serde(default = "default_role")]
    pub role: UserRole,
    /// Whether the email is verified.
    #[serde(default)]
    pub email_is_verified: Option<bool>,
    /// Organization id.
    pub organization_id: String,
    /// Organization name.
    pub organization_name: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Number of projects (user lookup only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects_count: Option<i64>,
    /// Number of runs (user lookup only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_count: Option<i64>,
}

fn default_auth_method() -> AuthMethod {
    AuthMethod::Email
}

fn default_role() -> UserRole {
    UserRole::ReadOnly
}

impl User {
    /// `First Last <email>`, or the email alone when no name is set.
    pub fn display(&self) -> String {
        let name = [self.first_name.as_deref(), self.last_name.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if name.is_empty() {
            self.email.clone()
        } else {
            format!("{name} <{}>", self.email)
        }
    }
}
