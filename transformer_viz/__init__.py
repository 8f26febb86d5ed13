"""The commands that need both the library (model/) and the app (viz/): above both, so that nothing under
model/ imports viz/. `transformer-viz COMMAND` (python -m transformer_viz COMMAND) runs every command: the
library's own (model/cli) and these (lesson: the offline HTML lesson, drawn with the app's figures and words;
figure: the same figures as PDF, SVG or PNG).
"""
