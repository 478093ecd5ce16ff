//! Secrets never reach disk. API keys (and passwords in endpoint URLs) are registered where the
//! settings are resolved; everything rgd writes about a run (manifests, events, results, journals,
//! exports, logs) passes through `scrub`, and recorded command lines through `redact_args`. Scrubbing
//! at the writers, rather than at each place a key might be mentioned, also catches the key inside
//! an error message a server or a library composed.

use std::borrow::Cow;
use std::sync::RwLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Shorter values are not treated as secrets: replacing them would mangle ordinary text.
const MIN_LEN: usize = 6;

/// Flags whose value is a secret.
const SECRET_FLAGS: &[&str] = &["--api-key"];

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers a value that must never be written anywhere.
pub fn register(secret: &str) {
    let secret = secret.trim();
    if secret.len() < MIN_LEN {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_string());
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Registers the password (and user) of a URL's userinfo, if it has any.
pub fn register_url(url: &str) {
    if let Some((user, password)) = userinfo(url) {
        register(password.unwrap_or(user));
    }
}

/// `text` with every registered secret replaced.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for s in secrets.iter() {
        out = out.replace(s.as_str(), REDACTED);
    }
    Cow::Owned(out)
}

/// `bytes` with every registered secret replaced (bytes that are not UTF-8 are left alone).
pub fn scrub_bytes(bytes: Vec<u8>) -> Vec<u8> {
    match std::str::from_utf8(&bytes) {
        Ok(text) => match scrub(text) {
            Cow::Borrowed(_) => bytes,
            Cow::Owned(clean) => clean.into_bytes(),
        },
        Err(_) => bytes,
    }
}

/// A URL with its userinfo (`user:password@`) replaced.
pub fn redact_url(url: &str) -> String {
    match split_userinfo(url) {
        Some((scheme, _, host)) => format!("{scheme}://{REDACTED}@{host}"),
        None => url.to_string(),
    }
}

fn userinfo(url: &str) -> Option<(&str, Option<&str>)> {
    let (_, info, _) = split_userinfo(url)?;
    Some(match info.split_once(':') {
        Some((user, password)) => (user, Some(password)),
        None => (info, None),
    })
}

/// (scheme, userinfo, everything after the `@`) of a URL whose authority has userinfo.
fn split_userinfo(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    Some((scheme, &rest[..at], &rest[at + 1..]))
}

/// A command line fit to record: values of secret flags and URL userinfo replaced, and any
/// registered secret scrubbed.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next_is_secret = false;
    for arg in args {
        if next_is_secret {
            out.push(REDACTED.to_string());
            next_is_secret = false;
            continue;
        }
        if let Some(flag) = SECRET_FLAGS.iter().find(|f| arg.starts_with(&format!("{f}="))) {
            out.push(format!("{flag}={REDACTED}"));
            continue;
        }
        if SECRET_FLAGS.contains(&arg.as_str()) {
            next_is_secret = true;
            out.push(arg.clone());
            continue;
        }
        out.push(scrub(&redact_url(arg)).into_owned());
    }
    out
}

/// A writer that scrubs what passes through it (for log files and stderr).
pub struct ScrubWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for ScrubWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let clean = scrub_bytes(buf.to_vec());
        self.0.write_all(&clean)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_urls_and_registered_values_are_redacted() {
        register("sk-test-abcdef123456");
        let args: Vec<String> = [
            "rgd",
            "sweep",
            "--api-key",
            "sk-live-zzzzzz",
            "--api-key=sk-live-yyyyyy",
            "--base-url",
            "http://bob:hunter22@127.0.0.1:8000/v1",
            "--model",
            "note sk-test-abcdef123456",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let red = redact_args(&args);
        let joined = red.join(" ");
        for secret in ["sk-live-zzzzzz", "sk-live-yyyyyy", "hunter22", "bob:", "sk-test-abcdef123456"] {
            assert!(!joined.contains(secret), "{secret} in {joined}");
        }
        assert_eq!(red[3], REDACTED);
        assert_eq!(red[6], "http://<redacted>@127.0.0.1:8000/v1");
        assert_eq!(redact_url("http://127.0.0.1:8000/v1?x=a@b"), "http://127.0.0.1:8000/v1?x=a@b");
        assert_eq!(scrub("short ab"), "short ab");
    }
}
