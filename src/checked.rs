//! Records that can tell they were damaged: JSON lines that carry a checksum of themselves (a
//! run's journal, the memory pool's), and JSON files with a checksum inside (a run's manifest,
//! status and seal, the memory pool's state). A byte changed, a line cut, a file truncated is
//! then named, never read as another value.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

const SUM_HEAD: &str = "{\"sum\":\"";
/// `{"sum":"` + 16 hex digits + `",`: what a line has before its JSON, less its brace.
pub const LINE_HEAD: usize = SUM_HEAD.len() + 16 + 2;

/// The key of the checksum a checked JSON file carries: sha256 of the file's other keys and
/// values written compactly, as serde_json writes a `Value`.
const CHECKSUM: &str = "checksum";

fn line_sum(json: &[u8]) -> String {
    hex::encode(&Sha256::digest(json)[..8])
}

/// The line (newline included) for `json`, a JSON object (`{...}`): the same object with a
/// checksum of it put first (`{"sum":"<16 hex>",` and then the object after its brace). Readers
/// that ignore `sum` read the object as it was.
pub fn line(json: &[u8]) -> Vec<u8> {
    let body = json.strip_prefix(b"{").unwrap_or(json);
    let mut out = Vec::with_capacity(body.len() + LINE_HEAD + 2);
    out.extend_from_slice(SUM_HEAD.as_bytes());
    out.extend_from_slice(line_sum(json).as_bytes());
    out.extend_from_slice(b"\",");
    out.extend_from_slice(body);
    out.push(b'\n');
    out
}

/// The JSON a line holds when its checksum matches; a line without a checksum (written before
/// lines carried one) as it is.
pub fn verify_line(line: &str) -> Result<String, String> {
    let Some(rest) = line.strip_prefix(SUM_HEAD) else {
        return Ok(line.to_string());
    };
    let (Some(want), Some(body)) = (rest.get(..16), rest.get(18..)) else {
        return Err("cut off".into());
    };
    let json = format!("{{{body}");
    if line_sum(json.as_bytes()) != want {
        return Err("its checksum does not match its bytes".into());
    }
    Ok(json)
}

/// Whole lines of `bytes` (a file of `line`s) with their numbers, and whether the last one was
/// cut off (no newline after it).
pub fn lines(bytes: &[u8]) -> (Vec<(usize, String)>, bool) {
    let text = String::from_utf8_lossy(bytes);
    let cut = !text.is_empty() && !text.ends_with('\n');
    let lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    (lines, cut)
}

fn checksum_of(object: &serde_json::Map<String, serde_json::Value>) -> String {
    hex::encode(Sha256::digest(serde_json::to_vec(object).unwrap_or_default()))
}

/// `value` (a JSON object) as pretty JSON with a checksum of its contents inside. Secrets are
/// scrubbed before the checksum is taken.
pub fn json_text<T: Serialize>(value: &T) -> serde_json::Result<String> {
    let compact = serde_json::to_string(value)?;
    let scrubbed: serde_json::Value = serde_json::from_str(&crate::secrets::scrub(&compact))?;
    let serde_json::Value::Object(mut object) = scrubbed else {
        return serde_json::to_string_pretty(&scrubbed);
    };
    object.remove(CHECKSUM);
    let sum = checksum_of(&object);
    object.insert(CHECKSUM.into(), serde_json::Value::String(sum));
    serde_json::to_string_pretty(&object)
}

/// Writes `text` whole: through a temporary file, synced, then renamed, so readers never see
/// half a file.
pub fn write_atomically(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `value` as `json_text` does, whole.
pub fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let text = json_text(value).map_err(std::io::Error::other)?;
    write_atomically(path, text.as_bytes())
}

/// Reads a file `write_json` wrote, or `Err` saying in one sentence what is wrong with it
/// (unreadable, not whole JSON, checksum not matching, not the expected record). A file written
/// before checksums were kept is read as it is.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown} cannot be read ({e})"))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{shown} is not whole JSON ({e})"))?;
    let serde_json::Value::Object(mut object) = value else {
        return Err(format!("{shown} is not a JSON object"));
    };
    if let Some(want) = object.remove(CHECKSUM)
        && want.as_str() != Some(checksum_of(&object).as_str())
    {
        return Err(format!(
            "{shown} does not match its checksum (its contents changed after rgd wrote it)"
        ));
    }
    serde_json::from_value(serde_json::Value::Object(object)).map_err(|e| format!("{shown} does not hold what rgd wrote there ({e})"))
}

/// Copies the files of `from` into `to`, keeping its layout (a sled database folder checked on a
/// copy: sled rewrites a damaged file as it opens it, which a check must not do).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// `name` moved aside in `dir` as `name.damaged-<time>` (kept for whoever wants to look at it);
/// the new path, or `None` when there was nothing there.
pub fn move_aside(dir: &Path, name: &str, stamp: &str) -> std::io::Result<Option<std::path::PathBuf>> {
    let from = dir.join(name);
    if std::fs::symlink_metadata(&from).is_err() {
        return Ok(None);
    }
    let to = dir.join(format!("{name}.damaged-{stamp}"));
    std::fs::rename(&from, &to)?;
    Ok(Some(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_its_json_and_any_changed_byte_breaks_its_sum() {
        let json = br#"{"seq":7,"event":{"type":"run_resumed","finished":["T/1"]}}"#;
        let line = line(json);
        let text = String::from_utf8(line.clone()).unwrap();
        let as_json: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(as_json["seq"], 7, "readers that ignore `sum` read the object");
        assert_eq!(verify_line(text.trim_end()).unwrap().as_bytes(), json);
        for at in [LINE_HEAD + 3, text.len() / 2, text.len() - 3] {
            let mut bad = line.clone();
            bad[at] = if bad[at] == b'1' { b'2' } else { b'1' };
            let bad = String::from_utf8_lossy(&bad).into_owned();
            assert!(verify_line(bad.trim_end()).is_err(), "byte {at} changed: {bad}");
        }
    }

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Status {
        state: String,
        finished: usize,
        solved: usize,
        ratio: f64,
    }

    #[test]
    fn a_checked_file_reads_back_and_a_changed_value_or_a_cut_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("status.json");
        let status = Status {
            state: "finished".into(),
            finished: 3,
            solved: 2,
            ratio: 0.1 + 0.2,
        };
        write_json(&path, &status).unwrap();
        assert_eq!(read_json::<Status>(&path).unwrap(), status);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"solved\": 2", "\"solved\": 3")).unwrap();
        assert!(read_json::<Status>(&path).unwrap_err().contains("does not match its checksum"));
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        assert!(read_json::<Status>(&path).unwrap_err().contains("is not whole JSON"));
        // Written before checksums were kept: read as it is.
        std::fs::write(&path, serde_json::to_string(&status).unwrap()).unwrap();
        assert_eq!(read_json::<Status>(&path).unwrap(), status);
    }
}
