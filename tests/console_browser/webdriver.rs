//! Just enough of a WebDriver client to drive headless Chromium through
//! Debian's chromedriver: start the driver, open a session, load a page,
//! run a script, take a screenshot.
//!
//! Written on `std::net` rather than taken from a crate: the Rust
//! WebDriver clients (fantoccini, thirtyfour) are async and bring tokio
//! and hyper into a test that makes a dozen sequential requests to a
//! process on localhost. Here each request is one HTTP/1.1 exchange on a
//! fresh connection (`Connection: close`); the answer's body is read by its
//! `Content-Length`, or in chunks, and parsed with serde_json.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Where Debian's packages `chromium-driver` and `chromium` put them.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// A running chromedriver, killed when dropped.
pub struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    /// Starts chromedriver on a free localhost port and waits until it is
    /// ready (at most 30 s).
    pub fn start() -> Result<Driver, String> {
        if !std::path::Path::new(CHROMEDRIVER).exists() {
            return Err(format!(
                "{CHROMEDRIVER} is missing: apt-get install chromium chromium-driver \
                 (bash .ci/steps/console.sh installs them)"
            ));
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{CHROMEDRIVER}: {e}"))?;
        let driver = Driver { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match driver.call("GET", "/status", None) {
                Ok(v) if v["ready"] == json!(true) => return Ok(driver),
                _ if Instant::now() > deadline => {
                    return Err("chromedriver did not become ready in 30 s".into())
                }
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// A headless Chromium session with a fresh profile, its window
    /// `width` × `height`.
    pub fn session(&self, width: u32, height: u32) -> Result<Session<'_>, String> {
        let profile = std::env::temp_dir().join(format!(
            "kaspar-console-chromium-{}-{}",
            std::process::id(),
            self.port
        ));
        let _ = std::fs::remove_dir_all(&profile);
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([
            format!("--user-data-dir={}", profile.display()),
            format!("--window-size={width},{height}"),
        ])
        .collect::<Vec<_>>();
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        }}});
        let v = self.call("POST", "/session", Some(&caps))?;
        let id = v["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session id in {v}"))?
            .to_string();
        Ok(Session {
            driver: self,
            id,
            profile,
        })
    }

    /// One WebDriver command: its `value`, or the driver's error.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(|e| e.to_string())?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\
             Content-Type: application/json; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .map_err(|e| e.to_string())?;
        let (status, text) = read_response(s).map_err(|e| format!("{method} {path}: {e}"))?;
        let mut v: Value =
            serde_json::from_slice(&text).map_err(|e| format!("{method} {path}: {e}"))?;
        let value = v["value"].take();
        if status != 200 {
            return Err(format!("{method} {path}: HTTP {status}: {value}"));
        }
        Ok(value)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status and body of one HTTP/1.1 response.
fn read_response(s: TcpStream) -> std::io::Result<(u16, Vec<u8>)> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').ok_or_else(|| bad("bad header"))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| bad("bad length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| bad("bad chunk size"))?;
            if size == 0 {
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            r.read_exact(&mut body[start..])?;
            line.clear();
            r.read_line(&mut line)?;
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else {
        r.read_to_end(&mut body)?;
    }
    Ok((status, body))
}

/// A browser session; closed (the browser quits) when dropped.
pub struct Session<'d> {
    driver: &'d Driver,
    id: String,
    profile: PathBuf,
}

impl Session<'_> {
    fn call(&self, method: &str, what: &str, body: Option<&Value>) -> Result<Value, String> {
        self.driver
            .call(method, &format!("/session/{}/{what}", self.id), body)
    }

    /// Loads `url` and waits for it (the document's `load` event).
    pub fn goto(&self, url: &str) -> Result<(), String> {
        self.call("POST", "url", Some(&json!({ "url": url })))
            .map(drop)
    }

    /// Runs `script` (a function body; `return` gives the value) in the
    /// page and returns what it returned.
    pub fn run(&self, script: &str) -> Result<Value, String> {
        self.call(
            "POST",
            "execute/sync",
            Some(&json!({ "script": script, "args": [] })),
        )
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Result<Vec<u8>, String> {
        use base64::Engine as _;
        let v = self.call("GET", "screenshot", None)?;
        let b64 = v.as_str().ok_or("a screenshot is a base64 string")?;
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| e.to_string())
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .driver
            .call("DELETE", &format!("/session/{}", self.id), None);
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
