//! Terminal safety. Text from models and programs may hold control characters and escape
//! sequences (a program can print `\x1b]52;...` to write the clipboard, or `\x1b[2J` to wipe the
//! screen). Nothing of theirs reaches a terminal raw: the headless printer writes through
//! `CleanWriter`, and the TUI cleans every cell of a frame before it is drawn.

use std::borrow::Cow;

/// True for characters a terminal may act on: C0 controls except newline and tab, DEL, and the C1
/// controls (U+0080-U+009F, where U+009B alone starts a sequence on some terminals).
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

/// A visible stand-in: the Unicode "control picture" for C0 and DEL (`␛` for ESC), else U+FFFD.
fn picture(c: char) -> char {
    match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or(char::REPLACEMENT_CHARACTER),
        0x7f => '\u{2421}',
        _ => char::REPLACEMENT_CHARACTER,
    }
}

/// `text` with every control character replaced by a visible stand-in (`\r` included: a lone
/// carriage return would let later text overwrite earlier text on the same line).
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if is_control(c) { picture(c) } else { c }).collect())
}

/// A writer for a terminal: every piece written is cleaned (pieces are whole UTF-8 strings when
/// they come from `write!`; a byte chunk that is not UTF-8 is written lossily).
pub struct CleanWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for CleanWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(clean(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Cleans every cell of a rendered frame, whatever view put the text there.
pub fn clean_buffer(buffer: &mut ratatui::buffer::Buffer) {
    for cell in buffer.content.iter_mut() {
        if cell.symbol().chars().any(is_control) {
            let clean = clean(cell.symbol()).into_owned();
            cell.set_symbol(&clean);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible_and_plain_text_is_untouched() {
        let hostile = "ok\x1b]52;c;aGk=\x07\x1b[2J\rX\u{9b}31m\x7f";
        let out = clean(hostile);
        assert!(!out.chars().any(is_control), "{out:?}");
        assert!(out.starts_with("ok␛]52;c;aGk=␇␛[2J␍X"), "{out:?}");
        assert!(matches!(clean("def f():\n\treturn 'é'"), Cow::Borrowed(_)));
        let mut buffer = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 4, 1));
        buffer[(1, 0)].set_symbol("\x1b");
        clean_buffer(&mut buffer);
        assert_eq!(buffer[(1, 0)].symbol(), "␛");
    }
}
