//! Numbers and names from flags, environment variables and `rgd.toml` are checked where they are
//! read, so a negative, NaN, infinite or absurd value is an error that names its source instead
//! of a panic (`Duration::from_secs_f64(-1.0)` panics) or a run that never ends. Flags and their
//! environment variables use the clap parsers below (clap names the flag); `rgd.toml` uses
//! `FileConfig::validate`, which names the file and key.

/// The longest timeout accepted anywhere: a day.
pub const MAX_SECS: f64 = 86_400.0;
/// Most iterations per task.
pub const MAX_ITERS: u32 = 1_000;
/// Most of anything counted (concurrency, retries, contexts, in-flight requests).
pub const MAX_COUNT: usize = 4_096;

/// A duration in seconds: finite, above zero, at most a day.
pub fn seconds(value: f64) -> Result<f64, String> {
    if !value.is_finite() {
        return Err(format!("{value} is not a number of seconds"));
    }
    if value <= 0.0 {
        return Err(format!("{value} s: must be above zero"));
    }
    if value > MAX_SECS {
        return Err(format!("{value} s: more than a day ({MAX_SECS} s)"));
    }
    Ok(value)
}

/// A count between `min` and `max`.
pub fn count(value: usize, min: usize, max: usize) -> Result<usize, String> {
    if value < min || value > max {
        return Err(format!("{value}: must be between {min} and {max}"));
    }
    Ok(value)
}

/// A name that is not empty or blank.
pub fn name(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err("must not be empty".into());
    }
    Ok(value.to_string())
}

/// clap parser: seconds.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    seconds(s.trim().parse::<f64>().map_err(|e| format!("{s:?}: {e}"))?)
}

/// clap parser: iterations per task (1 to 1,000).
pub fn parse_iters(s: &str) -> Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|e| format!("{s:?}: {e}"))?;
    count(n as usize, 1, MAX_ITERS as usize).map(|n| n as u32)
}

/// clap parser: a count of at least one (concurrency, contexts, limits).
pub fn parse_count(s: &str) -> Result<usize, String> {
    count(s.trim().parse().map_err(|e| format!("{s:?}: {e}"))?, 1, MAX_COUNT)
}

/// clap parser: a count that may be zero (retries).
pub fn parse_count0(s: &str) -> Result<usize, String> {
    count(s.trim().parse().map_err(|e| format!("{s:?}: {e}"))?, 0, MAX_COUNT)
}

/// The largest context size accepted (16M tokens).
pub const MAX_CONTEXT: usize = 1 << 24;

/// clap parser: a context size in tokens (64 to 16M).
pub fn parse_context(s: &str) -> Result<u32, String> {
    count(s.trim().parse().map_err(|e| format!("{s:?}: {e}"))?, 64, MAX_CONTEXT).map(|n| n as u32)
}

/// clap parser: a cosine similarity threshold, -1 to 1.
pub fn parse_unit(s: &str) -> Result<f32, String> {
    let v: f32 = s.trim().parse().map_err(|e| format!("{s:?}: {e}"))?;
    if (-1.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a cosine similarity (from -1 to 1)"))
    }
}

/// clap parser: a model name.
pub fn parse_name(s: &str) -> Result<String, String> {
    name(s)
}

/// clap parser: one word for an `#SBATCH` line (a partition, a time limit): a space or a line
/// break would end the option, or start a command in the script.
pub fn parse_sbatch_word(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{s:?}: one word, without spaces or line breaks"));
    }
    Ok(s.to_string())
}

/// A run id chosen by hand: it names a directory, so letters, digits, `-` and `_` only.
pub fn parse_run_id(s: &str) -> Result<String, String> {
    let ok = !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!("{s:?}: a run id is 1 to 64 letters, digits, - or _"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_numbers_and_names_are_refused_with_the_reason() {
        for bad in ["-1", "0", "nan", "inf", "1e9", "abc", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_seconds(" 2.5 "), Ok(2.5));
        assert!(parse_iters("0").is_err() && parse_iters("1001").is_err() && parse_iters("-3").is_err());
        assert_eq!(parse_iters("10"), Ok(10));
        assert!(parse_count("0").is_err() && parse_count("99999").is_err());
        assert_eq!(parse_count0("0"), Ok(0));
        assert!(parse_name("  ").is_err() && parse_name("").is_err());
    }
}
