//! Users: spec operation 9 and the caller's own record.

use super::super::operation::{GET_CURRENT_USER, GET_USER};
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::User;

impl Client {
    /// Spec operation 9: GET a user; `None` when there is no such user.
    pub async fn get_user(&self, user_id: &str) -> Result<Option<User>, ApiError> {
        self.fetch_opt(Call::new(&GET_USER, &[user_id])).await
    }

    /// GET the caller's own record (a cheap check that the credentials work).
    pub async fn current_user(&self) -> Result<User, ApiError> {
        self.fetch(Call::new(&GET_CURRENT_USER, &[])).await
    }
}
