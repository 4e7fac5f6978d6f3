//! Generators of hostile HTTP requests to every route of the sandbox:
//! path segments (valid ids of the demo fixture, random UUIDs, junk),
//! query strings, credentials, headers and bodies (random JSON, near-valid
//! bodies with random edits, deep nesting, bad escapes, random bytes).

use base64::Engine;
use evalctl::sandbox::fingerprint::stable_id;
use evalctl::sandbox::fixture::ids;
use proptest::prelude::*;
use serde_json::{Value, json};

pub const P: &str = "/v2/projects/{project_id}";
pub const LS: &str = "/v2/projects/{project_id}/log_streams/{log_stream_id}";
pub const EX: &str = "/v2/projects/{project_id}/experiments/{experiment_id}";

/// Every route the sandbox serves: method and path template.
pub fn routes() -> Vec<(&'static str, String)> {
    let p = |s: &str| format!("{P}{s}");
    let ls = |s: &str| format!("{LS}{s}");
    let ex = |s: &str| format!("{EX}{s}");
    vec![
        ("POST", "/login".into()),
        ("POST", "/v2/login".into()),
        ("GET", "/v2/current_user".into()),
        ("GET", "/v2/users/{user_id}".into()),
        ("POST", "/v2/projects/paginated".into()),
        ("GET", P.into()),
        ("GET", p("/log_streams")),
        ("POST", p("/log_streams")),
        ("POST", p("/log_streams/search")),
        ("GET", p("/log_streams/paginated")),
        ("GET", LS.into()),
        ("GET", ls("/metric_settings")),
        ("PATCH", ls("/metric_settings")),
        ("POST", p("/experiments/search")),
        ("GET", EX.into()),
        ("GET", ex("/metric_settings")),
        ("PATCH", ex("/metric_settings")),
        ("GET", ls("/trends")),
        ("GET", ls("/trends/dashboards")),
        ("POST", ls("/trends/sections")),
        ("PUT", ls("/trends/sections/{section_id}")),
        ("DELETE", ls("/trends/sections/{section_id}")),
        (
            "POST",
            ls("/trends/dashboards/{trends_dashboard_id}/favorite"),
        ),
        ("DELETE", ls("/trends/dashboards/favorite")),
        ("GET", "/v2/integrations/available".into()),
        ("GET", "/v2/integrations/{name}".into()),
        ("PUT", "/v2/integrations/{name}".into()),
        ("GET", "/integrations".into()),
        ("DELETE", "/integrations/{name}".into()),
        ("POST", "/v2/scorers/list".into()),
        ("GET", "/v2/scorers/{scorer_id}".into()),
        ("GET", "/v2/scorers/{scorer_id}/versions".into()),
        ("GET", "/v2/scorers/{scorer_id}/version".into()),
        (
            "GET",
            "/v2/scorers/versions/{scorer_version_id}/projects".into(),
        ),
        ("GET", p("/annotation/templates")),
        ("POST", p("/annotation/templates")),
        ("GET", p("/annotation/templates/{template_id}")),
        ("PATCH", p("/annotation/templates/{template_id}")),
        ("DELETE", p("/annotation/templates/{template_id}")),
        ("GET", p("/feedback/templates")),
        ("POST", p("/feedback/templates")),
        ("GET", p("/feedback/templates/{template_id}")),
        ("PATCH", p("/feedback/templates/{template_id}")),
        ("DELETE", p("/feedback/templates/{template_id}")),
    ]
}

/// A valid body for a route, as the starting point of near-valid ones.
pub fn sample_body(method: &str, template: &str) -> Option<Value> {
    let body = match (method, template) {
        (_, t) if t.ends_with("/login") => return None,
        ("POST", "/v2/projects/paginated") => {
            json!({"filters": [{"name": "name", "operator": "eq", "value": "demo-project"}]})
        }
        ("POST", t) if t.ends_with("/log_streams") => json!({"name": "hostile"}),
        ("POST", t) if t.ends_with("/search") => {
            json!({"filters": [{"name": "name", "operator": "eq", "value": "production"}], "limit": 10})
        }
        ("PATCH", t) if t.ends_with("/metric_settings") => json!({
            "scorers": [{"id": ids::scorer_id("bleu"), "scorer_type": "preset"}],
            "segment_filters": [{"sample_rate": 0.5, "filter": {"name": "node_name", "operator": "eq", "value": "llm"}}]
        }),
        ("POST", t) if t.ends_with("/sections") => {
            json!({"name": "Hostile", "description": "d", "color": "#123456"})
        }
        ("PUT", t) if t.contains("/sections/") => json!({"name": "Renamed", "color": "#654321"}),
        ("PUT", t) if t.contains("/integrations/") => {
            json!({"organization_id": "org", "token": "sk-hostile"})
        }
        ("POST", "/v2/scorers/list") => {
            json!({"filters": [{"name": "name", "operator": "eq", "value": "bleu"}]})
        }
        ("POST", t) if t.ends_with("/annotation/templates") => {
            json!({"name": "t", "criteria": "c", "constraints": {"annotation_type": "score", "min": 1, "max": 5}})
        }
        ("POST", t) if t.ends_with("/feedback/templates") => {
            json!({"name": "t", "constraints": {"feedback_type": "choice", "choices": ["a", "b"]}})
        }
        ("PATCH", _) => json!({"name": "t2", "criteria": "c2"}),
        _ => return None,
    };
    Some(body)
}

/// Ids of the demo fixture, by path parameter name.
pub fn valid_ids(name: &str) -> Vec<String> {
    let prod = ids::log_stream("demo-project", "production");
    match name {
        "project_id" => vec![ids::project("demo-project"), ids::project("support-bot")],
        "log_stream_id" => vec![
            prod.clone(),
            ids::log_stream("demo-project", "staging"),
            ids::log_stream("support-bot", "default"),
        ],
        "experiment_id" => vec![ids::experiment("demo-project", "baseline-eval")],
        "user_id" => vec![
            ids::user("demo@example.com"),
            ids::user("viewer@example.com"),
        ],
        "trends_dashboard_id" => vec![ids::default_dashboard(&prod)],
        "section_id" => vec![
            stable_id("section:production:quality"),
            stable_id("section:production:latency"),
        ],
        "template_id" => vec![
            ids::template("demo-project", "star-annotation"),
            ids::template("demo-project", "star-feedback"),
        ],
        "scorer_id" => vec![ids::scorer_id("bleu"), ids::scorer_id("correctness")],
        "scorer_version_id" => vec![ids::version_id("context_adherence", 1)],
        "name" => vec!["openai".into(), "anthropic".into(), "custom".into()],
        _ => Vec::new(),
    }
}

/// Percent-encodes every byte that is not unreserved.
pub fn pct(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(b) {
                (*b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A path segment for parameter `name`.
pub fn segment(name: String) -> impl Strategy<Value = String> {
    let valid = valid_ids(&name);
    let valid = if valid.is_empty() {
        vec!["x".to_owned()]
    } else {
        valid
    };
    prop_oneof![
        30 => prop::sample::select(valid.clone()),
        1 => prop::sample::select(valid).prop_map(|v| v.to_uppercase()),
        1 => any::<u128>().prop_map(|n| uuid::Uuid::from_u128(n).to_string()),
        1 => any::<u128>().prop_map(|n| uuid::Uuid::from_u128(n).simple().to_string()),
        1 => any::<u128>().prop_map(|n| format!("{{{}}}", uuid::Uuid::from_u128(n))),
        2 => prop::sample::select(vec![
            "..", ".", "%2e%2e", "%2F", "a%2Fb", "%00", "%ff", "%", "%zz", "%C3%28", "%E2%80%AE",
            "null", "0", "-1", "urn:uuid:00000000-0000-0000-0000-000000000000", "~", ";", "@",
        ])
        .prop_map(str::to_owned),
        2 => prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| pct(&b)),
        1 => "[!$&'()*+,;=:@a-zA-Z0-9._~-]{1,30}",
        1 => (1usize..20_000).prop_map(|n| "a".repeat(n)),
    ]
}

/// A query string (without the `?`), or none.
pub fn query() -> impl Strategy<Value = Option<String>> {
    let name = prop_oneof![
        4 => prop::sample::select(vec![
            "trends_dashboard_id", "visibility", "starting_token", "limit", "include_counts",
            "include_logstreams", "run_id", "version", "ungroup",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,10}",
        1 => prop::collection::vec(any::<u8>(), 0..10).prop_map(|b| pct(&b)),
    ];
    let value = prop_oneof![
        prop::sample::select(vec![
            "user",
            "project",
            "none",
            "0",
            "1",
            "-1",
            "100",
            "99999999999999999999",
            "1.5",
            "true",
            "false",
            "yes",
            "",
            "null",
            "%",
            "%zz",
            "%00",
        ])
        .prop_map(str::to_owned),
        Just(ids::default_dashboard(&ids::log_stream(
            "demo-project",
            "production"
        ))),
        any::<u128>().prop_map(|n| uuid::Uuid::from_u128(n).to_string()),
        prop::collection::vec(any::<u8>(), 0..30).prop_map(|b| pct(&b)),
    ];
    prop_oneof![
        2 => Just(None),
        4 => prop::collection::vec((name, value), 1..5).prop_map(|pairs| {
            Some(pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"))
        }),
        1 => "[!$&'()*+,;=:@/?a-zA-Z0-9._~%-]{0,60}".prop_map(Some),
    ]
}

/// How a request authenticates (raw header lines).
pub fn auth() -> impl Strategy<Value = Vec<String>> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    prop_oneof![
        30 => Just(vec!["Service-AO-API-Key: demo-api-key".to_owned()]),
        1 => Just(vec!["Service-AO-API-Key: viewer-api-key".to_owned()]),
        1 => Just(Vec::new()),
        1 => "[ -~]{0,40}".prop_map(|k| vec![format!("Service-AO-API-Key: {k}")]),
        1 => Just(vec![format!("Authorization: Basic {}", b64("demo@example.com:demo-password"))]),
        1 => "[ -~]{0,40}".prop_map(move |s| vec![format!("Authorization: Basic {}", b64(&s))]),
        1 => "[ -~]{0,40}".prop_map(|s| vec![format!("Authorization: Basic {s}")]),
        1 => "[ -~]{0,60}".prop_map(|s| vec![format!("Authorization: Bearer {s}")]),
        1 => "[ -~]{0,60}".prop_map(|s| vec![format!("Authorization: {s}")]),
        1 => Just(vec![
            "Service-AO-API-Key: demo-api-key".to_owned(),
            "Service-AO-API-Key: alice-api-key".to_owned(),
            "Authorization: Bearer nonsense".to_owned(),
        ]),
    ]
}

/// Other headers: a content type (usually JSON), then odd ones: encodings,
/// random names and values.
pub fn headers() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let content_type = prop_oneof![
        8 => Just(Some(b"Content-Type: application/json".to_vec())),
        1 => Just(None),
    ];
    let fixed = prop::sample::select(vec![
        "Content-Type: application/json; charset=utf-16",
        "Content-Type: text/plain",
        "Content-Type: application/x-www-form-urlencoded",
        "Content-Type: multipart/form-data; boundary=xyz",
        "Content-Type: ",
        "Content-Encoding: gzip",
        "Content-Encoding: br, deflate",
        "Accept: application/xml",
        "Accept-Encoding: gzip",
        "Expect: 100-continue",
        "X-Forwarded-For: 10.0.0.1",
        "Cookie: session=abc",
        "Range: bytes=0-10",
        "If-None-Match: *",
    ])
    .prop_map(|s| s.as_bytes().to_vec());
    let random = (
        "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}",
        prop::collection::vec(prop_oneof![0x20u8..0x7f, 0x80u8..=0xff, Just(b'\t')], 0..80),
    )
        .prop_filter("not a framing header", |(name, _)| {
            let n = name.to_ascii_lowercase();
            n != "content-length" && n != "transfer-encoding" && n != "host" && n != "connection"
        })
        .prop_map(|(name, value)| {
            let mut line = format!("{name}: ").into_bytes();
            line.extend(value);
            line
        });
    (
        content_type,
        prop::collection::vec(prop_oneof![fixed, random], 0..4),
    )
        .prop_map(|(ct, extra)| ct.into_iter().chain(extra).collect())
}

/// A random JSON value.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,20}".prop_map(Value::from),
        prop::sample::select(vec![
            "demo-project",
            "#123456",
            "eq",
            "one_of",
            "node_name",
            "star",
            "preset",
            "llm",
            "user",
            "project",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    prop::sample::select(vec![
                        "name",
                        "id",
                        "filters",
                        "scorers",
                        "segment_filters",
                        "sample_rate",
                        "filter",
                        "operator",
                        "value",
                        "color",
                        "description",
                        "constraints",
                        "annotation_type",
                        "feedback_type",
                        "token",
                        "limit",
                        "starting_token",
                        "scorer_type",
                        "scorer_version",
                        "choices",
                        "min",
                        "max",
                    ])
                    .prop_map(str::to_owned),
                    ".{0,8}",
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Sets `value` at the `index`-th node (in a walk of `target`), or deletes it
/// when `value` is `None`.
pub fn edit(target: &mut Value, index: usize, value: Option<Value>) {
    fn walk(v: &mut Value, left: &mut usize, value: &mut Option<Option<Value>>) {
        match v {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    if *left == 0 {
                        match value.take() {
                            Some(Some(new)) => {
                                map.insert(k, new);
                            }
                            Some(None) => {
                                map.remove(&k);
                            }
                            None => {}
                        }
                        return;
                    }
                    *left -= 1;
                    if let Some(child) = map.get_mut(&k) {
                        walk(child, left, value);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    if *left == 0 {
                        if let Some(Some(new)) = value.take() {
                            *item = new;
                        }
                        return;
                    }
                    *left -= 1;
                    walk(item, left, value);
                }
            }
            _ => {}
        }
    }
    let mut left = index;
    let mut value = Some(value);
    walk(target, &mut left, &mut value);
}

/// A request body: none, or raw bytes of one of many hostile kinds. `sample`
/// is the route's valid body, if it takes one.
pub fn body(sample: Option<Value>) -> impl Strategy<Value = Option<Vec<u8>>> {
    let near = {
        let sample = sample.clone().unwrap_or_else(|| json!({}));
        prop::collection::vec((0usize..16, prop::option::of(json_value())), 0..3).prop_map(
            move |edits| {
                let mut v = sample.clone();
                for (i, new) in edits {
                    edit(&mut v, i, new);
                }
                Some(v.to_string().into_bytes())
            },
        )
    };
    prop_oneof![
        2 => Just(None),
        1 => Just(sample.map(|s| s.to_string().into_bytes())),
        6 => near,
        3 => json_value().prop_map(|v| Some(v.to_string().into_bytes())),
        2 => prop::collection::vec(any::<u8>(), 0..256).prop_map(Some),
        1 => (1usize..50_000, prop::sample::select(vec!["[", "{\"a\":"])).prop_map(|(n, open)| {
            let close = if open == "[" { "]" } else { "}" };
            Some(format!("{}1{}", open.repeat(n), close.repeat(n)).into_bytes())
        }),
        1 => prop::sample::select(vec![
            r#"{"name": "a", "name": "b"}"#,
            r#"{"name": "\ud800"}"#,
            r#"{"name": "\u0000"}"#,
            r#"{"sample_rate": 1e999999}"#,
            r#"{"limit": 123456789012345678901234567890}"#,
            r#"{"limit": -0}"#,
            r#"{"limit": NaN}"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            "\u{feff}{}",
            "null",
            "\"just a string\"",
            "[]",
            "",
            "username=demo%40example.com&password=demo-password&grant_type=password",
            "username=%zz&password=%&grant_type=password&grant_type=other",
        ])
        .prop_map(|s| Some(s.as_bytes().to_vec())),
        1 => Just(Some(b"{\"name\": \"\xff\xfe\"}".to_vec())),
    ]
}

/// One hostile request, as the bytes sent.
#[derive(Clone)]
pub struct Request {
    /// Method.
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Header lines, without line ends.
    pub headers: Vec<Vec<u8>>,
    /// The body, if any.
    pub body: Option<Vec<u8>>,
    /// Sent with chunked framing (else with a `Content-Length`).
    pub chunked: bool,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Readable counterexamples: the request as it goes on the wire.
        let text = String::from_utf8_lossy(&self.bytes()).into_owned();
        let shown: String = text.chars().take(2_000).collect();
        write!(f, "{shown:?}")
    }
}

impl Request {
    /// The request as it goes on the wire.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n",
            self.method, self.target
        )
        .into_bytes();
        for h in &self.headers {
            out.extend_from_slice(h);
            out.extend_from_slice(b"\r\n");
        }
        match (&self.body, self.chunked) {
            (None, _) => out.extend_from_slice(b"\r\n"),
            (Some(body), false) => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(body);
            }
            (Some(body), true) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                for chunk in body.chunks(1000) {
                    out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
        out
    }
}

/// A request to a route of the sandbox (or, sometimes, with the wrong
/// method, or to a path it does not serve).
pub fn request() -> impl Strategy<Value = Request> {
    (0..routes().len()).prop_flat_map(|i| {
        let (method, template) = routes()[i].clone();
        let names: Vec<String> = template
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_owned)
            .collect();
        let segments: Vec<_> = names.into_iter().map(segment).collect();
        let sample = sample_body(method, &template);
        (
            segments,
            query(),
            auth(),
            headers(),
            body(sample),
            any::<bool>(),
            prop_oneof![
                8 => Just(method.to_owned()),
                1 => prop::sample::select(vec!["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
                    .prop_map(str::to_owned),
                1 => "[A-Z]{1,8}",
            ],
            prop_oneof![8 => Just(String::new()), 1 => Just("/".to_owned()), 1 => "/[a-z%0-9]{1,8}"],
        )
            .prop_map(move |(segments, query, auth, mut headers, body, chunked, method, suffix)| {
                let mut values = segments.into_iter();
                let path: String = template
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        if s.starts_with('{') {
                            values.next().unwrap_or_default()
                        } else {
                            s.to_owned()
                        }
                    })
                    .fold(String::new(), |acc, s| format!("{acc}/{s}"));
                let target = match query {
                    Some(q) => format!("{path}{suffix}?{q}"),
                    None => format!("{path}{suffix}"),
                };
                headers.extend(auth.into_iter().map(String::into_bytes));
                Request {
                    method,
                    target,
                    headers,
                    body,
                    chunked,
                }
            })
    })
}
