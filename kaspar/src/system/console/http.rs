//! The console's HTTP server: GET only, four fixed routes, one short-lived
//! thread per connection, every connection closed after one response.
//!
//! Written on `std::net` rather than taken from a crate: the console
//! serves three embedded files and one JSON document, never reads a body,
//! never keeps a connection, and needs no TLS, so what a general server
//! adds (keep-alive, chunked bodies, routing, an async runtime) is code
//! kaspar's users would build for nothing, and kaspar has no async
//! runtime to host it. What it must get right is small and is here: a
//! bound on what it reads (8 KiB of head, 5 s per read and write), a bound
//! on the connections it serves at once (32; more get `503`), a clear
//! status for everything else (`400`, `403`, `404`, `405`), and, on a
//! loopback address, the `Host` check that keeps a web page elsewhere from
//! reading the console through DNS rebinding.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::base::sync::Mutex;

/// The most bytes of request line and headers read.
const MAX_HEAD: usize = 8 * 1024;
/// The most connections served at once.
const MAX_CONNECTIONS: usize = 32;
/// How long a read or a write may wait.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/console.js");
const STYLE: &str = include_str!("page/console.css");

/// What the server hands out: the latest sample, replaced by the sampler.
pub(super) struct Shared {
    pub(super) snapshot: Mutex<Arc<str>>,
    /// Set when the console stops: the acceptor exits at its next wake.
    pub(super) stopping: AtomicBool,
    /// Connections being served now.
    active: AtomicUsize,
    /// Whether only loopback `Host` names are accepted.
    loopback: bool,
}

impl Shared {
    pub(super) fn new(first: String, addr: SocketAddr) -> Self {
        Shared {
            snapshot: Mutex::new(first.into()),
            stopping: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            loopback: addr.ip().is_loopback(),
        }
    }
}

/// The acceptor's loop: until `stopping`, hands each connection to a
/// thread of its own, or refuses it when too many are being served.
pub(super) fn accept(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::Acquire) {
            return;
        }
        let Ok(stream) = conn else {
            // Out of descriptors, or a connection reset before it was
            // taken: nothing to answer; do not spin on it.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if shared.active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            shared.active.fetch_sub(1, Ordering::AcqRel);
            let _ = respond(&stream, Status::Unavailable, "text/plain", b"busy\n");
            continue;
        }
        let served = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("kaspar:console-conn".into())
            .spawn(move || {
                let _ = serve(&stream, &served);
                served.active.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// An answer's status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    BadRequest,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Unavailable,
}

impl Status {
    fn line(self) -> &'static str {
        match self {
            Status::Ok => "200 OK",
            Status::BadRequest => "400 Bad Request",
            Status::Forbidden => "403 Forbidden",
            Status::NotFound => "404 Not Found",
            Status::MethodNotAllowed => "405 Method Not Allowed",
            Status::Unavailable => "503 Service Unavailable",
        }
    }
}

/// Reads one request from `stream` and answers it.
fn serve(stream: &TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(stream)?;
    let (status, kind, body): (Status, &str, Arc<[u8]>) = match route(&head, shared) {
        Ok(Route::Page) => (Status::Ok, "text/html; charset=utf-8", bytes(PAGE)),
        Ok(Route::Script) => (Status::Ok, "text/javascript; charset=utf-8", bytes(SCRIPT)),
        Ok(Route::Style) => (Status::Ok, "text/css; charset=utf-8", bytes(STYLE)),
        Ok(Route::Snapshot) => {
            let doc = Arc::clone(&*shared.snapshot.lock());
            (Status::Ok, "application/json", bytes(&doc))
        }
        Err((status, why)) => (status, "text/plain; charset=utf-8", bytes(why)),
    };
    respond(stream, status, kind, &body)
}

fn bytes(text: &str) -> Arc<[u8]> {
    Arc::from(text.as_bytes())
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Page,
    Script,
    Style,
    Snapshot,
}

/// Reads the request line and headers (up to the blank line), at most
/// [`MAX_HEAD`] bytes. A body, if any, is never read.
fn read_head(mut stream: &TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(head);
        }
        head.extend_from_slice(&buf[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.len() >= MAX_HEAD {
            head.truncate(MAX_HEAD);
            return Ok(head);
        }
    }
}

/// The route of the request whose head is `head`, or the status and
/// reason it is refused with.
fn route(head: &[u8], shared: &Shared) -> Result<Route, (Status, &'static str)> {
    let bad = (Status::BadRequest, "malformed request\n");
    let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Err(bad);
    };
    let text = std::str::from_utf8(&head[..end]).map_err(|_| bad)?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad);
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad);
    }
    if method != "GET" {
        return Err((Status::MethodNotAllowed, "only GET\n"));
    }
    let host = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim());
    let Some(host) = host else {
        return Err((Status::BadRequest, "no Host header\n"));
    };
    if shared.loopback && !is_loopback_host(host) {
        return Err((
            Status::Forbidden,
            "the console on a loopback address answers only to localhost, 127.0.0.1 or [::1]\n",
        ));
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    match path {
        "/" | "/index.html" => Ok(Route::Page),
        "/console.js" => Ok(Route::Script),
        "/console.css" => Ok(Route::Style),
        "/api/snapshot" => Ok(Route::Snapshot),
        _ => Err((Status::NotFound, "not found\n")),
    }
}

/// Whether `host` (a `Host` header's value, port and all) names this
/// machine's loopback interface.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[::1]` or `[::1]:port`.
        match rest.split_once(']') {
            Some((ip, port)) if port.is_empty() || port.starts_with(':') => ip,
            _ => return false,
        }
    } else {
        host.split(':').next().unwrap_or("")
    };
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1"
}

fn respond(mut stream: &TcpStream, status: Status, kind: &str, body: &[u8]) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: default-src 'self'\r\nConnection: close\r\n",
        status.line(),
        body.len()
    );
    if status == Status::MethodNotAllowed {
        head.push_str("Allow: GET\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()?;
    // Tell the client the response is complete; a read of its unread
    // request bytes would otherwise risk a reset that drops the response.
    stream.shutdown(std::net::Shutdown::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(loopback: bool) -> Shared {
        let ip = if loopback { "127.0.0.1" } else { "0.0.0.0" };
        Shared::new("{}".into(), format!("{ip}:1").parse().unwrap())
    }

    fn ask(head: &str, loopback: bool) -> Result<Route, Status> {
        route(head.as_bytes(), &shared(loopback)).map_err(|(s, _)| s)
    }

    #[test]
    fn the_four_routes_and_the_refusals() {
        let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: localhost:9\r\n\r\n");
        assert_eq!(ask(&get("/"), true), Ok(Route::Page));
        assert_eq!(ask(&get("/index.html?x=1"), true), Ok(Route::Page));
        assert_eq!(ask(&get("/console.js"), true), Ok(Route::Script));
        assert_eq!(ask(&get("/console.css"), true), Ok(Route::Style));
        assert_eq!(ask(&get("/api/snapshot"), true), Ok(Route::Snapshot));
        assert_eq!(ask(&get("/etc/passwd"), true), Err(Status::NotFound));
        assert_eq!(
            ask("POST / HTTP/1.1\r\nHost: localhost\r\n\r\n", true),
            Err(Status::MethodNotAllowed)
        );
        assert_eq!(ask("GET / HTTP/1.1\r\n\r\n", true), Err(Status::BadRequest));
        assert_eq!(ask("GET /\r\n\r\n", true), Err(Status::BadRequest));
        assert_eq!(
            ask("GET / HTTP/1.1\r\nHost: localhost", true),
            Err(Status::BadRequest),
            "no end of head"
        );
        assert_eq!(
            ask("GET / SPDY/3\r\nHost: localhost\r\n\r\n", true),
            Err(Status::BadRequest)
        );
    }

    #[test]
    fn a_loopback_console_answers_only_to_loopback_names() {
        for host in [
            "localhost",
            "LOCALHOST:80",
            "127.0.0.1:8080",
            "[::1]",
            "[::1]:1",
        ] {
            let head = format!("GET / HTTP/1.1\r\nhost: {host}\r\n\r\n");
            assert_eq!(ask(&head, true), Ok(Route::Page), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:80",
            "localhost.evil",
            "[::2]:1",
            "[::1",
        ] {
            let head = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
            assert_eq!(ask(&head, true), Err(Status::Forbidden), "{host}");
            // Bound to every interface, the operator chose to be reached
            // by any name.
            assert_eq!(ask(&head, false), Ok(Route::Page), "{host}");
        }
    }
}
