//! Turning generated token bytes into text deltas: bytes are held until they form whole UTF-8
//! characters (a token can end mid-character), and text that could be the start of a stop
//! sequence is held until it is known not to be one, so a stop string never reaches the viewer.

#[derive(Debug, Default)]
pub struct TextStream {
    stops: Vec<String>,
    /// Bytes of an incomplete character.
    pending: Vec<u8>,
    /// All text so far (the answer).
    text: String,
    /// How much of `text` has been handed out as deltas.
    emitted: usize,
    stopped: bool,
}

impl TextStream {
    pub fn new(stops: &[String]) -> TextStream {
        TextStream {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            ..TextStream::default()
        }
    }

    /// Adds a token's bytes; returns the text that can be shown now. After a stop sequence
    /// appears, `stopped()` is true and the text ends before it.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        if self.stopped {
            return String::new();
        }
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            // An invalid sequence (not merely an incomplete one) is replaced, never stalls.
            Err(e) if e.error_len().is_some() => {
                let lossy = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                self.text.push_str(&lossy);
                return self.release();
            }
            Err(e) => e.valid_up_to(),
        };
        let rest = self.pending.split_off(valid);
        let whole = std::mem::replace(&mut self.pending, rest);
        // Valid UTF-8 up to here (checked above), so nothing is replaced.
        self.text.push_str(&String::from_utf8_lossy(&whole));
        self.release()
    }

    fn release(&mut self) -> String {
        let search_from = self.emitted.saturating_sub(self.longest_stop());
        if let Some(at) = self
            .stops
            .iter()
            .filter_map(|s| {
                self.text[floor(&self.text, search_from)..]
                    .find(s.as_str())
                    .map(|i| i + floor(&self.text, search_from))
            })
            .min()
        {
            self.text.truncate(at);
            self.stopped = true;
            return self.take(self.text.len());
        }
        // Hold back the longest tail that is a prefix of some stop sequence.
        let held = self
            .stops
            .iter()
            .flat_map(|s| (1..s.len()).rev().filter(|&n| s.is_char_boundary(n)).map(move |n| &s[..n]))
            .filter(|prefix| self.text.ends_with(prefix))
            .map(str::len)
            .max()
            .unwrap_or(0);
        self.take(self.text.len() - held)
    }

    fn take(&mut self, upto: usize) -> String {
        // Defensive: text is never truncated below what was shown (shown text held no stop prefix).
        self.emitted = self.emitted.min(self.text.len());
        let upto = floor(&self.text, upto.max(self.emitted));
        let delta = self.text[self.emitted..upto].to_string();
        self.emitted = upto;
        delta
    }

    fn longest_stop(&self) -> usize {
        self.stops.iter().map(String::len).max().unwrap_or(0)
    }

    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The whole answer; call `finish` first to release held-back text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// At the end of generation: everything not yet shown (held-back prefixes, stray bytes).
    pub fn finish(&mut self) -> String {
        if !self.pending.is_empty() {
            let lossy = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.text.push_str(&lossy);
        }
        self.take(self.text.len())
    }
}

/// The largest char boundary at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], pieces: &[&[u8]]) -> (Vec<String>, String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut s = TextStream::new(&stops);
        let mut deltas: Vec<String> = pieces.iter().map(|p| s.push(p)).collect();
        deltas.push(s.finish());
        (deltas, s.text().to_string(), s.stopped())
    }

    #[test]
    fn characters_split_across_tokens_come_out_whole() {
        let e = "é".as_bytes();
        let (deltas, text, _) = run(&[], &[b"caf", &e[..1], &e[1..], b"!"]);
        assert_eq!(deltas, ["caf", "", "é", "!", ""]);
        assert_eq!(text, "café!");
    }

    #[test]
    fn a_stop_sequence_split_across_tokens_is_never_shown() {
        let (deltas, text, stopped) = run(&["```\n\n"], &[b"x = 1\n`", b"``", b"\n", b"\nmore"]);
        assert_eq!(text, "x = 1\n");
        assert!(stopped);
        assert_eq!(deltas.concat(), "x = 1\n");
        assert_eq!(deltas[0], "x = 1\n");
    }

    #[test]
    fn a_held_prefix_that_was_not_a_stop_is_released() {
        let (deltas, text, stopped) = run(&["</answer>"], &[b"a </", b"b> c"]);
        assert_eq!(deltas, ["a ", "</b> c", ""]);
        assert_eq!(text, "a </b> c");
        assert!(!stopped);
    }

    #[test]
    fn invalid_bytes_are_replaced_not_stuck() {
        let (deltas, text, _) = run(&[], &[b"a\xff", b"b"]);
        assert_eq!(text, "a\u{fffd}b");
        assert_eq!(deltas.concat(), text);
    }
}
