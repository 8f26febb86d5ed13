"""The bottom room: the words (catalogue, i18n, text, folder_text, model_words, upload, tex) and the view (view, context).
Imports nothing else from viz (docs/architecture.md)."""
