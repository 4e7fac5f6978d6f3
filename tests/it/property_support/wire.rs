//! The raw HTTP/1.1 of the request properties: send bytes over a fresh TCP
//! connection (reading while writing) and read the answer, nothing tidied.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// What came back: the status and the body, or `None` when the connection
/// closed without a status line.
pub struct Answer {
    /// The final status (interim `1xx` answers skipped).
    pub status: Option<u16>,
    /// The `Content-Type`, lowercased.
    pub content_type: Option<String>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// The start of the answer, for messages.
    pub raw: String,
}

/// Sends `bytes` to `addr` on a new connection and reads the answer.
pub fn send(addr: SocketAddr, bytes: &[u8]) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    stream.set_write_timeout(Some(Duration::from_secs(20)))?;
    // Read while writing: a server may answer before reading the whole body
    // (a route that takes none, a refusal) and then close; reading at once
    // catches the answer before the connection is reset.
    let mut reader = stream.try_clone()?;
    let answer = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out);
        out
    });
    let _ = stream.write_all(bytes);
    let out = answer.join().unwrap_or_default();
    Ok(parse_answer(&out))
}

/// Reads an HTTP/1.1 answer.
pub fn parse_answer(mut out: &[u8]) -> Answer {
    // Skip interim answers (`100 Continue` to `Expect: 100-continue`).
    while out.starts_with(b"HTTP/1.1 1") {
        match out.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(end) => out = &out[end + 4..],
            None => break,
        }
    }
    let raw = String::from_utf8_lossy(out).into_owned();
    let status = raw
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok());
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(out.len(), |i| i + 4);
    let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type:"))
        .map(|v| v.trim().to_owned());
    let chunked = head.contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(&out[split..])
    } else {
        out[split..].to_vec()
    };
    Answer {
        status,
        content_type,
        body,
        raw: raw.chars().take(1_000).collect(),
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&data[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        data = &data[line_end + 2..];
        if size == 0 || data.len() < size {
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or_default();
    }
    out
}
