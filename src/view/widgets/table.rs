//! A bordered table that renders only the rows in its window (`offset..offset + height`), so a
//! 10,000-row list costs the same per frame as a 40-row one. Shows an empty-state message when
//! there are no rows.

use ratatui::{
    buffer::Buffer,
    layout::{Constraint, Rect},
    text::Line,
    widgets::{Block, Paragraph, Row, StatefulWidget, Table, TableState, Widget, Wrap},
};

use crate::config::{Role, Theme};

/// What a view hands to [`render`].
pub struct TableSpec<'a> {
    pub title: Line<'a>,
    pub title_right: Line<'a>,
    pub header: Vec<&'a str>,
    pub widths: Vec<Constraint>,
    /// Total rows in the list (for the window maths).
    pub len: usize,
    pub selected: usize,
    pub offset: usize,
    /// Shown instead of rows when `len == 0`.
    pub empty: Vec<Line<'a>>,
}

/// Draws the table; `row(i)` builds row `i` (called only for rows in the window).
pub fn render<'a>(
    spec: TableSpec<'a>,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
    row: impl Fn(usize) -> Row<'a>,
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
    let mut offset = spec.offset.min(spec.len.saturating_sub(1));
    if spec.selected < offset {
        offset = spec.selected;
    } else if spec.selected >= offset + height {
        offset = spec.selected + 1 - height;
    }
    let end = (offset + height).min(spec.len);
    let rows: Vec<Row<'a>> = (offset..end).map(row).collect();
    let header = Row::new(spec.header).style(theme.style(Role::TableHeader));
    let table = Table::new(rows, spec.widths)
        .header(header)
        .block(block)
        .style(theme.style(Role::Text))
        .column_spacing(2)
        .row_highlight_style(theme.style(Role::RowSelected));
    let mut state = TableState::default().with_selected(Some(spec.selected - offset));
    StatefulWidget::render(table, area, buf, &mut state);
}
