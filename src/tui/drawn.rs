//! Where the views drew things last frame, for mouse clicks and page sizes: written by the
//! views, read by `App` when a click or the wheel arrives.

use ratatui::layout::Rect;

/// Where the views drew things last frame, for mouse clicks and page sizes.
#[derive(Debug, Default, Clone)]
pub struct Drawn {
    pub list: Rect,
    pub list_offset: usize,
    pub panes: Vec<(super::screens::task::Pane, Rect)>,
    /// The code pane's first line as drawn: its scroll, clamped so the last page is full.
    pub code_first: Option<u16>,
}
