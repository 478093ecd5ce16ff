//! The command line this process was given, fit for another process to run: some flags dropped,
//! and the key and endpoint moved to the environment. A command line is visible to every user of
//! the machine (`ps`) and a batch script is a file, so secrets travel by environment (clap reads
//! OPENAI_API_KEY / OPENAI_BASE_URL for the same flags). `rgd sweep --detach` and
//! `rgd slurm submit` both start their sweeps from it.

/// Arguments and the environment that carries what was taken out of them.
#[derive(Debug, Default)]
pub struct Relaunch {
    pub args: Vec<String>,
    pub env: Vec<(&'static str, String)>,
}

/// `given` (without the program name) minus the `drop` flags and the `drop_valued` flags with
/// their values (`--flag value` or `--flag=value`).
pub fn relaunch(given: impl IntoIterator<Item = String>, drop: &[&str], drop_valued: &[&str]) -> Relaunch {
    let mut out = Relaunch::default();
    let mut given = given.into_iter();
    while let Some(arg) = given.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let env = match flag.as_str() {
            "--api-key" => Some("OPENAI_API_KEY"),
            "--base-url" => Some("OPENAI_BASE_URL"),
            f if drop.contains(&f) => continue,
            f if drop_valued.contains(&f) => None,
            _ => {
                out.args.push(arg);
                continue;
            }
        };
        let value = inline.or_else(|| given.next());
        if let (Some(env), Some(value)) = (env, value) {
            out.env.push((env, value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn drops_flags_and_moves_secrets_to_the_environment() {
        let r = relaunch(
            words("sweep --dataset mbpp --api-key sk-1 --shards 4 --tui --base-url=http://h/v1 --time=1:00 --limit 3"),
            &["--tui"],
            &["--shards", "--time"],
        );
        assert_eq!(r.args, words("sweep --dataset mbpp --limit 3"));
        assert_eq!(
            r.env,
            vec![
                ("OPENAI_API_KEY", "sk-1".to_string()),
                ("OPENAI_BASE_URL", "http://h/v1".to_string())
            ]
        );
    }
}
