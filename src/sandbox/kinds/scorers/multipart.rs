//! `multipart/form-data` bodies (RFC 7578), for the two code-scorer
//! operations that take a file. Small and strict: the sandbox reads whole
//! bodies (at most `BODY_LIMIT`) anyway, so a streaming parser (`multer`)
//! would add a dependency for nothing. A body that is not multipart reads
//! as a form with no field (FastAPI then reports each required field
//! missing); a multipart body that cannot be parsed is a 400 with
//! FastAPI's words.

use serde_json::{Map, Value};

use crate::sandbox::reply::ApiError;

/// One part of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The field's name.
    pub name: String,
    /// The file name, for a file.
    pub filename: Option<String>,
    /// The content.
    pub data: Vec<u8>,
}

fn bad() -> ApiError {
    ApiError::BadRequest("There was an error parsing the body".into())
}

/// The boundary of a `multipart/form-data` content type.
fn boundary(content_type: &str) -> Option<String> {
    let mut params = content_type.split(';');
    let media = params.next()?.trim();
    if !media.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A `name="value"` parameter of a Content-Disposition header.
fn disposition_param(header: &str, name: &str) -> Option<String> {
    header.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// The parts of `body`; none when the content type is not multipart.
pub fn parse(content_type: Option<&str>, body: &[u8]) -> Result<Vec<Part>, ApiError> {
    let Some(boundary) = content_type.and_then(boundary) else {
        return Ok(Vec::new());
    };
    if boundary.is_empty() || boundary.len() > 200 {
        return Err(bad());
    }
    let delimiter = format!("--{boundary}").into_bytes();
    let start = find(body, &delimiter).ok_or_else(bad)?;
    let mut rest = &body[start + delimiter.len()..];
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        rest = rest.strip_prefix(b"\r\n").ok_or_else(bad)?;
        let head_end = find(rest, b"\r\n\r\n").ok_or_else(bad)?;
        let head = std::str::from_utf8(&rest[..head_end]).map_err(|_| bad())?;
        let content = &rest[head_end + 4..];
        let mut close = b"\r\n".to_vec();
        close.extend_from_slice(&delimiter);
        let end = find(content, &close).ok_or_else(bad)?;
        let disposition = head
            .split("\r\n")
            .find_map(|line| {
                let (k, v) = line.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-disposition")
                    .then_some(v.trim())
            })
            .ok_or_else(bad)?;
        let name = disposition_param(disposition, "name").ok_or_else(bad)?;
        parts.push(Part {
            name,
            filename: disposition_param(disposition, "filename"),
            data: content[..end].to_vec(),
        });
        rest = &content[end + close.len()..];
    }
}

/// The form as the JSON object the reference's `Body_…` schema describes:
/// each field a string, a field sent more than once a list of strings.
pub fn as_object(parts: &[Part]) -> Value {
    let mut obj = Map::new();
    for p in parts {
        let text = Value::String(String::from_utf8_lossy(&p.data).into_owned());
        match obj.get_mut(&p.name) {
            Some(Value::Array(list)) => list.push(text),
            Some(one) => *one = Value::Array(vec![one.take(), text]),
            None => {
                obj.insert(p.name.clone(), text);
            }
        }
    }
    Value::Object(obj)
}

/// The content of the first part named `name`.
pub fn field<'p>(parts: &'p [Part], name: &str) -> Option<&'p [u8]> {
    parts
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.data.as_slice())
}

/// Every value of the text field `name`.
pub fn values(parts: &[Part], name: &str) -> Vec<String> {
    parts
        .iter()
        .filter(|p| p.name == name)
        .map(|p| String::from_utf8_lossy(&p.data).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_and_bad_bodies_refused() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"s.py\"\r\nContent-Type: text/x-python\r\n\r\ndef scorer_fn():\r\n    pass\r\n--XyZ\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\na\r\n--XyZ\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\nb\r\n--XyZ--\r\n";
        let parts = parse(Some("multipart/form-data; boundary=\"XyZ\""), body).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].filename.as_deref(), Some("s.py"));
        assert_eq!(parts[0].data, b"def scorer_fn():\r\n    pass");
        assert_eq!(
            as_object(&parts),
            serde_json::json!({"file": "def scorer_fn():\r\n    pass", "n": ["a", "b"]})
        );
        assert!(parse(Some("application/json"), b"{}").unwrap().is_empty());
        assert!(parse(None, b"").unwrap().is_empty());
        for broken in [
            &b"--XyZ\r\nno headers end"[..],
            b"nothing",
            b"--XyZ\r\n\r\n\r\nx",
        ] {
            assert!(
                parse(Some("multipart/form-data; boundary=XyZ"), broken).is_err(),
                "{broken:?}"
            );
        }
    }
}
