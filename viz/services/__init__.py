"""The only viz package that touches model io, inference and training: a page never loads or runs a model
itself. One module per job, each imported by its own name (nothing is re-exported here):

    models      the models offered, loading each once, the pages' read-only ModelView, a folder's text files
    presets     the example sentences and test-split references a model folder ships
    traces      the server's trace cache (trace_cache.TraceCache, bounded by bytes) and the .npz export
    analyses    cached runs of the analyses the pages show: decoding, ablation, positional, attribution, zoo
    training    live toy training (one per server process) and the toy model before its first step
    rnn         the shipped GRU encoder-decoders of the page before the Transformer
    spinner     a cached function's spinner in the page's language

Shared results are read-only: st.cache_resource hands every session the same object (no copy per rerun).
"""
