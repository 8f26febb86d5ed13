"""The guided tour and the lesson made from it: the steps (steps), their pictures (pictures), the offline HTML
lesson (lesson, formulas by formula_html) and its download button (download), every picture as a static file
(static_figures), and the Previous/Next buttons of the tour and presenter mode (buttons)."""
