//! A bordered table that renders only the rows in its window (`offset..offset + height`), so a
//! 10,000-row list costs the same per frame as a 40-row one. Shows an empty-state message when
//! there are no rows.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::{Line, Span},
    widgets::{Block, Cell, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap},
};

use crate::config::{Role, Theme};

/// One column: its title, its width, and when it is dropped on a narrow terminal (0 = never;
/// higher numbers go first).
pub struct Column {
    pub title: &'static str,
    pub width: Constraint,
    pub drop: u8,
}

impl Column {
    pub fn new(title: &'static str, width: Constraint, drop: u8) -> Column {
        Column { title, width, drop }
    }
}

/// A list's title with its `/` filter after the count: ` BroadcastJobs [2] /web `.
pub fn filtered_title(theme: &Theme, title: String, filter: &str) -> Line<'static> {
    let mut spans = vec![Span::raw(title)];
    if !filter.is_empty() {
        spans.push(Span::styled(
            format!("/{filter} "),
            theme.style(Role::Prompt),
        ));
    }
    Line::from(spans)
}

/// What an empty list says: `empty`, or with a filter typed, that nothing matches it.
pub fn unmatched(empty: Line<'static>, filter: &str) -> Line<'static> {
    if filter.is_empty() {
        empty
    } else {
        Line::from(format!("Nothing matches /{filter} (esc clears the filter)"))
    }
}

const SPACING: u16 = 1;
/// The least a `Fill` column (the name) keeps before other columns are dropped.
const FILL_MIN: u16 = 16;

/// Which columns fit in `width` (inside the borders), dropping by priority.
fn fitting(columns: &[Column], width: u16) -> Vec<bool> {
    let mut keep = vec![true; columns.len()];
    loop {
        let need: u16 = columns
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| match c.width {
                Constraint::Length(n) | Constraint::Min(n) => n + SPACING,
                _ => FILL_MIN + SPACING,
            })
            .sum();
        if need <= width + SPACING {
            return keep;
        }
        let victim = columns
            .iter()
            .enumerate()
            .filter(|(i, c)| keep[*i] && c.drop > 0)
            .max_by_key(|(i, c)| (c.drop, *i))
            .map(|(i, _)| i);
        match victim {
            Some(i) => keep[i] = false,
            None => return keep,
        }
    }
}

/// What a view hands to [`render`].
pub struct TableSpec<'a> {
    pub title: Line<'a>,
    pub title_right: Line<'a>,
    pub columns: Vec<Column>,
    /// Total rows in the list (for the window maths).
    pub len: usize,
    pub selected: usize,
    pub offset: usize,
    /// Shown instead of rows when `len == 0`.
    pub empty: Vec<Line<'a>>,
}

/// Draws the table; `cells(i)` builds the cells of row `i`, one per column (called only for
/// rows in the window).
pub fn render<'a>(
    spec: TableSpec<'a>,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
    cells: impl Fn(usize) -> Vec<Cell<'a>>,
) {
    let block = Block::bordered()
        .border_style(theme.style(Role::Border))
        .title(spec.title.style(theme.style(Role::Title)))
        .title(
            spec.title_right
                .right_aligned()
                .style(theme.style(Role::Muted)),
        );
    if spec.len == 0 {
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(spec.empty)
            .style(theme.style(Role::Muted))
            .wrap(Wrap { trim: true })
            .centered()
            .render(inner.inner(ratatui::layout::Margin::new(1, 1)), buf);
        return;
    }
    // Inner height minus the column header.
    let height = area.height.saturating_sub(3) as usize;
    let height = height.max(1);
    // The same window rule as the app's cursor maths, applied again in case the size changed.
    let selected = spec.selected.min(spec.len - 1);
    let mut offset = spec.offset.min(spec.len - 1);
    if selected < offset {
        offset = selected;
    } else if selected >= offset + height {
        offset = selected + 1 - height;
    }
    let end = (offset + height).min(spec.len);
    let keep = fitting(&spec.columns, area.width.saturating_sub(2));
    let rows: Vec<Row<'a>> = (offset..end)
        .map(|i| {
            Row::new(
                cells(i)
                    .into_iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(c, _)| c),
            )
        })
        .collect();
    let kept = || {
        spec.columns
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
    };
    let header = Row::new(kept().map(|c| c.title)).style(theme.style(Role::TableHeader));
    let table = Table::new(rows, kept().map(|c| c.width))
        .header(header)
        .block(block)
        .style(theme.style(Role::Text))
        .column_spacing(SPACING)
        .row_highlight_style(theme.style(Role::RowSelected));
    let mut state = TableState::default().with_selected(Some(selected - offset));
    StatefulWidget::render(table, area, buf, &mut state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_highest_priority_columns_first() {
        let cols = vec![
            Column::new("NAME", Constraint::Fill(1), 0),
            Column::new("A", Constraint::Length(10), 1),
            Column::new("B", Constraint::Length(10), 2),
        ];
        assert_eq!(fitting(&cols, 60), vec![true, true, true]);
        assert_eq!(fitting(&cols, 30), vec![true, true, false]);
        assert_eq!(fitting(&cols, 20), vec![true, false, false]);
        assert_eq!(fitting(&cols, 5), vec![true, false, false]);
    }
}
