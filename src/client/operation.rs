//! The catalog of operations the client performs: for each, a stable name
//! (used in logs, errors and stats), the method, the path template, whether it
//! accepts HTTP Basic (the spec's table), and whether it is safe to retry.
//!
//! Building a URL from a template is pure ([`Operation::url`]): path parameters
//! are percent-encoded as whole segments, so an id can never add a segment
//! (`a/b`), a query (`?`) or climb (`..`).

use reqwest::{Method, Url};

use super::error::ApiError;

/// Whether an operation may be sent again after an uncertain outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// A read sent with POST: a search, a listing, a login. Every GET is a
    /// read too ([`Operation::is_read`]). Reads are retried on connection
    /// errors, timeouts, 429 and 5xx (500 included) until the time budget
    /// (`--retry-budget`) is spent, however many attempts that takes.
    Read,
    /// An idempotent write (PUT, PATCH, DELETE, and POSTs that set a state,
    /// like favorite): retried on 429 until the time budget is spent, and on
    /// connection errors, timeouts, 500, 502, 503 and 504 up to `--max-retries`.
    Idempotent,
    /// Creates something: retried only when provably not processed
    /// (connection refused before sending, 429); any other failure after the
    /// request may have reached the service is [`ApiError::Ambiguous`].
    Create,
}

/// One operation of the service, as the client performs it.
#[derive(Debug, PartialEq, Eq)]
pub struct Operation {
    /// Stable name, e.g. `update_log_stream_metric_settings`.
    pub name: &'static str,
    /// HTTP method.
    pub method: Method,
    /// Path template relative to the base URL, e.g. `/v2/users/{user_id}`.
    pub path: &'static str,
    /// Whether the operation accepts HTTP Basic (the spec's table: every
    /// operation but 3, 6 and 10).
    pub basic_ok: bool,
    /// Retry class.
    pub retry: Retry,
    /// Whether the request body may be logged at TRACE (redacted). False for
    /// integration bodies and reads and the login form, which are never logged.
    pub log_body: bool,
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} {})", self.name, self.method, self.path)
    }
}

impl Operation {
    /// Whether the operation only reads: every GET, and the POSTs marked
    /// [`Retry::Read`].
    pub fn is_read(&self) -> bool {
        self.method == Method::GET || self.retry == Retry::Read
    }

    /// Whether the operation's resource exists on every deployment (the
    /// project listing, the scorer catalog, the integrations listing, the
    /// caller's own record, the logins): a 404 from it means the base URL is
    /// wrong, not an id or a name.
    pub fn always_exists(&self) -> bool {
        [
            &LIST_PROJECTS,
            &LIST_SCORERS,
            &LIST_INTEGRATIONS,
            &GET_CURRENT_USER,
            &LOGIN,
            &LOGIN_API_KEY,
        ]
        .iter()
        .any(|op| std::ptr::eq(*op, self))
    }

    /// The names of the template's parameters, in order.
    pub fn params(&self) -> Vec<&'static str> {
        self.path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect()
    }

    /// The URL of this operation: `base` with the template's segments
    /// appended, each `{param}` replaced by the next of `params` (escaped as one
    /// segment), and the query pairs appended (escaped).
    pub fn url(
        &'static self,
        base: &Url,
        params: &[&str],
        query: &[(&str, String)],
    ) -> Result<Url, ApiError> {
        let mut url = base.clone();
        let names = self.params();
        if names.len() != params.len() {
            return Err(ApiError::InvalidArgument {
                operation: self,
                message: format!(
                    "expected {} path parameters, got {}",
                    names.len(),
                    params.len()
                ),
            });
        }
        for (name, value) in names.iter().zip(params) {
            if value.is_empty() || *value == "." || *value == ".." {
                return Err(ApiError::InvalidArgument {
                    operation: self,
                    message: format!("path parameter {name} is {value:?}, which is not an id"),
                });
            }
        }
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| ApiError::InvalidArgument {
                    operation: self,
                    message: "the base URL cannot have a path".to_owned(),
                })?;
            segments.pop_if_empty();
            let mut values = params.iter();
            for seg in self.path.split('/').filter(|s| !s.is_empty()) {
                if seg.starts_with('{') {
                    // Counted above: there is one value per parameter.
                    if let Some(v) = values.next() {
                        segments.push(v);
                    }
                } else {
                    segments.push(seg);
                }
            }
        }
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        Ok(url)
    }
}

macro_rules! ops {
    ($( $(#[$doc:meta])* $konst:ident = $name:literal, $method:ident $path:literal, basic: $basic:literal, $retry:ident, log_body: $log:literal; )+) => {
        $(
            $(#[$doc])*
            pub static $konst: Operation = Operation {
                name: $name,
                method: Method::$method,
                path: $path,
                basic_ok: $basic,
                retry: Retry::$retry,
                log_body: $log,
            };
        )+
        /// Every operation of the catalog.
        pub static ALL: &[&Operation] = &[ $( &$konst ),+ ];
    };
}

ops! {
    /// POST `/login`: the OAuth2 password flow (form body).
    LOGIN = "login", POST "/login", basic: false, Read, log_body: false;
    /// POST `/v2/login/api_key`: an API key exchanged for a bearer token
    /// (the body holds the key: never logged).
    LOGIN_API_KEY = "login_api_key", POST "/v2/login/api_key", basic: false, Read, log_body: false;
    /// Spec op 1.
    PATCH_LOG_STREAM_METRIC_SETTINGS = "update_log_stream_metric_settings",
        PATCH "/v2/projects/{project_id}/log_streams/{log_stream_id}/metric_settings", basic: true, Idempotent, log_body: true;
    /// GET of op 1's path.
    GET_LOG_STREAM_METRIC_SETTINGS = "get_log_stream_metric_settings",
        GET "/v2/projects/{project_id}/log_streams/{log_stream_id}/metric_settings", basic: true, Idempotent, log_body: true;
    /// Spec op 2.
    SEARCH_LOG_STREAMS = "search_log_streams",
        POST "/v2/projects/{project_id}/log_streams/search", basic: true, Read, log_body: true;
    /// Create a log stream.
    CREATE_LOG_STREAM = "create_log_stream",
        POST "/v2/projects/{project_id}/log_streams", basic: true, Create, log_body: true;
    /// Get a log stream.
    GET_LOG_STREAM = "get_log_stream",
        GET "/v2/projects/{project_id}/log_streams/{log_stream_id}", basic: true, Idempotent, log_body: true;
    /// Spec op 3 (no Basic).
    CREATE_SECTION = "create_trends_section",
        POST "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/sections", basic: false, Create, log_body: true;
    /// Update a section.
    UPDATE_SECTION = "update_trends_section",
        PUT "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/sections/{section_id}", basic: true, Idempotent, log_body: true;
    /// Delete a section.
    DELETE_SECTION = "delete_trends_section",
        DELETE "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/sections/{section_id}", basic: true, Idempotent, log_body: true;
    /// Get a dashboard with its sections and widgets.
    GET_TRENDS = "get_trends_dashboard",
        GET "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends", basic: true, Idempotent, log_body: true;
    /// List the dashboards of a log stream.
    LIST_DASHBOARDS = "list_trends_dashboards",
        GET "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/dashboards", basic: true, Idempotent, log_body: true;
    /// Spec op 10 (no Basic; idempotent: favoriting twice is one favorite).
    FAVORITE_DASHBOARD = "favorite_trends_dashboard",
        POST "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/dashboards/{trends_dashboard_id}/favorite", basic: false, Idempotent, log_body: true;
    /// Unfavorite the dashboards of a log stream.
    UNFAVORITE_DASHBOARD = "unfavorite_trends_dashboard",
        DELETE "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/dashboards/favorite", basic: true, Idempotent, log_body: true;
    /// Update a dashboard's settings (interval, time range, group-by, filter
    /// tree, layout, name).
    UPDATE_TRENDS = "update_trends_dashboard",
        PUT "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends", basic: true, Idempotent, log_body: true;
    /// Create a widget.
    CREATE_WIDGET = "create_trends_widget",
        POST "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/widgets", basic: true, Create, log_body: true;
    /// Update a widget (also moves it between sections).
    UPDATE_WIDGET = "update_trends_widget",
        PUT "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/widgets/{widget_id}", basic: true, Idempotent, log_body: true;
    /// Delete a widget.
    DELETE_WIDGET = "delete_trends_widget",
        DELETE "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/widgets/{widget_id}", basic: true, Idempotent, log_body: true;
    /// Duplicate a dashboard (the reference's only way to create one).
    DUPLICATE_DASHBOARD = "duplicate_trends_dashboard",
        POST "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/dashboards/{trends_dashboard_id}/duplicate", basic: true, Create, log_body: true;
    /// Delete a dashboard (not the default one).
    DELETE_DASHBOARD = "delete_trends_dashboard",
        DELETE "/v2/projects/{project_id}/log_streams/{log_stream_id}/trends/dashboards/{trends_dashboard_id}", basic: true, Idempotent, log_body: true;
    /// Spec op 4 (the provider is the last segment).
    PUT_INTEGRATION = "put_integration",
        PUT "/v2/integrations/{provider}", basic: true, Idempotent, log_body: false;
    /// Create or update a named custom integration (the name is the last
    /// segment; the body is the custom provider's).
    PUT_NAMED_CUSTOM_INTEGRATION = "put_named_custom_integration",
        PUT "/v2/integrations/custom/{name}", basic: true, Idempotent, log_body: false;
    /// Read an integration's configuration: no secret field, but values a
    /// manifest takes from the environment (secrets too), so never logged.
    GET_INTEGRATION = "get_integration",
        GET "/v2/integrations/{name}", basic: true, Idempotent, log_body: false;
    /// List the caller's integrations (`IntegrationDB[]`, never a secret).
    LIST_INTEGRATIONS = "list_integrations",
        GET "/integrations", basic: true, Idempotent, log_body: true;
    /// Spec op 5.
    PATCH_EXPERIMENT_METRIC_SETTINGS = "update_experiment_metric_settings",
        PATCH "/v2/projects/{project_id}/experiments/{experiment_id}/metric_settings", basic: true, Idempotent, log_body: true;
    /// GET of op 5's path.
    GET_EXPERIMENT_METRIC_SETTINGS = "get_experiment_metric_settings",
        GET "/v2/projects/{project_id}/experiments/{experiment_id}/metric_settings", basic: true, Idempotent, log_body: true;
    /// Search experiments.
    SEARCH_EXPERIMENTS = "search_experiments",
        POST "/v2/projects/{project_id}/experiments/search", basic: true, Read, log_body: true;
    /// Get an experiment.
    GET_EXPERIMENT = "get_experiment",
        GET "/v2/projects/{project_id}/experiments/{experiment_id}", basic: true, Idempotent, log_body: true;
    /// Spec op 6 (no Basic).
    SCORER_VERSION_PROJECTS = "list_scorer_version_projects",
        GET "/v2/scorers/versions/{scorer_version_id}/projects", basic: false, Idempotent, log_body: true;
    /// List scorers.
    LIST_SCORERS = "list_scorers",
        POST "/v2/scorers/list", basic: true, Read, log_body: true;
    /// Get a scorer.
    GET_SCORER = "get_scorer",
        GET "/v2/scorers/{scorer_id}", basic: true, Idempotent, log_body: true;
    /// List a scorer's versions.
    LIST_SCORER_VERSIONS = "list_scorer_versions",
        GET "/v2/scorers/{scorer_id}/versions", basic: true, Idempotent, log_body: true;
    /// List or find projects.
    LIST_PROJECTS = "list_projects",
        POST "/v2/projects/paginated", basic: true, Read, log_body: true;
    /// Get a project.
    GET_PROJECT = "get_project",
        GET "/v2/projects/{project_id}", basic: true, Idempotent, log_body: true;
    /// Spec op 7 (deprecated).
    LIST_FEEDBACK_TEMPLATES = "list_feedback_templates",
        GET "/v2/projects/{project_id}/feedback/templates", basic: true, Idempotent, log_body: true;
    /// Create a feedback template.
    CREATE_FEEDBACK_TEMPLATE = "create_feedback_template",
        POST "/v2/projects/{project_id}/feedback/templates", basic: true, Create, log_body: true;
    /// Get a feedback template.
    GET_FEEDBACK_TEMPLATE = "get_feedback_template",
        GET "/v2/projects/{project_id}/feedback/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// Update a feedback template.
    PATCH_FEEDBACK_TEMPLATE = "update_feedback_template",
        PATCH "/v2/projects/{project_id}/feedback/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// Delete a feedback template.
    DELETE_FEEDBACK_TEMPLATE = "delete_feedback_template",
        DELETE "/v2/projects/{project_id}/feedback/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// List annotation templates.
    LIST_ANNOTATION_TEMPLATES = "list_annotation_templates",
        GET "/v2/projects/{project_id}/annotation/templates", basic: true, Idempotent, log_body: true;
    /// Create an annotation template.
    CREATE_ANNOTATION_TEMPLATE = "create_annotation_template",
        POST "/v2/projects/{project_id}/annotation/templates", basic: true, Create, log_body: true;
    /// Spec op 8.
    GET_ANNOTATION_TEMPLATE = "get_annotation_template",
        GET "/v2/projects/{project_id}/annotation/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// Update an annotation template.
    PATCH_ANNOTATION_TEMPLATE = "update_annotation_template",
        PATCH "/v2/projects/{project_id}/annotation/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// Delete an annotation template.
    DELETE_ANNOTATION_TEMPLATE = "delete_annotation_template",
        DELETE "/v2/projects/{project_id}/annotation/templates/{template_id}", basic: true, Idempotent, log_body: true;
    /// Spec op 9.
    GET_USER = "get_user",
        GET "/v2/users/{user_id}", basic: true, Idempotent, log_body: true;
    /// The caller's own record.
    GET_CURRENT_USER = "get_current_user",
        GET "/v2/current_user", basic: true, Idempotent, log_body: true;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn builds_urls_and_escapes_segments() {
        let b = base("https://api.example.com");
        let u = GET_LOG_STREAM.url(&b, &["p1", "ls 2"], &[]).unwrap();
        assert_eq!(
            u.as_str(),
            "https://api.example.com/v2/projects/p1/log_streams/ls%202"
        );
        let u = GET_USER.url(&b, &["a/b?c#d%e"], &[]).unwrap();
        assert_eq!(
            u.as_str(),
            "https://api.example.com/v2/users/a%2Fb%3Fc%23d%25e"
        );
        let u = FAVORITE_DASHBOARD
            .url(&b, &["p", "l", "d"], &[("visibility", "user&x=1".into())])
            .unwrap();
        assert_eq!(
            u.as_str(),
            "https://api.example.com/v2/projects/p/log_streams/l/trends/dashboards/d/favorite?visibility=user%26x%3D1"
        );
    }

    fn percent_decode(s: &str) -> String {
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    proptest::proptest! {
        #[test]
        fn any_id_is_exactly_one_segment(id in "\\PC{1,24}") {
            proptest::prop_assume!(id != "." && id != "..");
            let url = GET_LOG_STREAM.url(&base("https://h/api"), &["p", &id], &[]).unwrap();
            let segments: Vec<&str> = url.path_segments().unwrap().collect();
            proptest::prop_assert_eq!(segments.len(), 6);
            proptest::prop_assert_eq!(percent_decode(segments[5]), id);
            proptest::prop_assert!(url.query().is_none() && url.fragment().is_none());
        }
    }

    #[test]
    fn keeps_a_base_path_prefix() {
        for b in ["https://h/api", "https://h/api/"] {
            let u = GET_CURRENT_USER.url(&base(b), &[], &[]).unwrap();
            assert_eq!(u.as_str(), "https://h/api/v2/current_user");
        }
        let u = LOGIN.url(&base("http://127.0.0.1:9/"), &[], &[]).unwrap();
        assert_eq!(u.as_str(), "http://127.0.0.1:9/login");
    }

    #[test]
    fn refuses_dot_and_empty_params_and_wrong_counts() {
        let b = base("https://h");
        for bad in ["", ".", ".."] {
            assert!(matches!(
                GET_USER.url(&b, &[bad], &[]),
                Err(ApiError::InvalidArgument { .. })
            ));
        }
        assert!(GET_USER.url(&b, &[], &[]).is_err());
        assert!(GET_USER.url(&b, &["a", "b"], &[]).is_err());
    }

    #[test]
    fn reads_are_the_gets_and_the_searches_listings_and_logins() {
        let reads: Vec<&str> = ALL
            .iter()
            .filter(|o| o.method != Method::GET && o.is_read())
            .map(|o| o.name)
            .collect();
        assert_eq!(
            reads,
            [
                "login",
                "login_api_key",
                "search_log_streams",
                "search_experiments",
                "list_scorers",
                "list_projects"
            ]
        );
        for op in ALL {
            let lists = ["/search", "/list", "/paginated"]
                .iter()
                .any(|end| op.path.ends_with(end));
            assert!(!lists || op.is_read(), "{op} only reads");
            if op.method == Method::GET {
                assert!(op.is_read(), "{op}");
            }
            if op.retry == Retry::Read {
                assert_eq!(op.method, Method::POST, "{op}: a GET needs no mark");
            }
        }
    }

    #[test]
    fn basic_is_refused_exactly_on_spec_ops_3_6_10() {
        let no_basic: Vec<&str> = ALL
            .iter()
            .filter(|o| !o.basic_ok && !o.name.starts_with("login"))
            .map(|o| o.name)
            .collect();
        assert_eq!(
            no_basic,
            [
                "create_trends_section",
                "favorite_trends_dashboard",
                "list_scorer_version_projects"
            ]
        );
        let mut names: Vec<&str> = ALL.iter().map(|o| o.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "operation names are unique");
    }
}
