"""What pages, the tour and the class put on screen around a figure: ui (figures with export, pickers), nav (the
pages and their links), the live model map (map_view, map_chart), rnn_view, the browser-side view (docs/architecture.md)."""
