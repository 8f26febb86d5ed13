"""About the model: why attention (its cost, for the sidebar sentence) first, then what the model knows, its
configuration, parameters, data and model card, training curve and metrics."""
import json

import pandas as pd
import streamlit as st

from viz.figures.training import (complexity_figure, layer_costs, loss_curve, lr_curve, mark_run_ends, parameter_groups,
                                  read_train_log, run_ends)
from viz.core.i18n import LANGS, catalogue_keys, current_lang, t
from viz.core.model_words import task_name, what_the_model_knows
from viz.core.folder_text import card_html, code_span
from viz.services.models import model_file_text
from viz.core.context import Context
from viz.core.text import plain
from viz.elements.ui import data_table, look, need_context, show_figure

CONFIG_SETTINGS = ("vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "dropout",
                   "max_len", "norm_first", "pe", "share_embeddings", "ln_eps", "pad_id", "bos_id", "eos_id",
                   "src_vocab_size", "final_norm", "ln_kind", "src_bos")
CONV_KERNEL = 3


# Catalogue keys (viz/locales), written out so that a test finds every key in use.
ABOUT_COSTS_COL_KEYS = catalogue_keys("about.costs", "col0", "col1", "col2", "col3", "col4", "col5")   # layer_costs' columns
ABOUT_COSTS_KEYS = catalogue_keys("about.costs", "attention", "conv", "recurrent")
ABOUT_PARAMS_KEYS = catalogue_keys("about.params", "decoder", "embeddings", "encoder", "generator", "parameters",
                                   "share", "total")
ABOUT_CONFIG_KEYS = catalogue_keys("about.config", "bos_id", "d_ff", "d_model", "dropout", "eos_id", "final_norm",
                                   "ln_eps", "ln_kind", "max_len", "n_decoder_layers", "n_encoder_layers", "n_heads",
                                   "norm_first", "pad_id", "pe", "share_embeddings", "src_bos", "src_vocab_size",
                                   "vocab_size")


def architecture_summary(cfg) -> str:
    norm = t("about.arch.pre_norm") if cfg.norm_first else t("about.arch.post_norm")
    pe = t("about.arch.sinusoidal") if cfg.pe == "sinusoidal" else t("about.arch.learned")
    shared = t("about.arch.shared") if cfg.share_embeddings else t("about.arch.separate")
    return t("about.arch", encoder=cfg.n_encoder_layers, decoder=cfg.n_decoder_layers, d_model=cfg.d_model,
             heads=cfg.n_heads, d_k=cfg.d_head, d_ff=cfg.d_ff, vocab=cfg.vocab_size, norm=norm, pe=pe, shared=shared,
             dropout=cfg.dropout)


def sentence_length(ctx: Context) -> int | None:
    """Tokens of the sidebar sentence, or None when the model has not read one."""
    return len(ctx.trace.meta["src_ids"]) if ctx.trace is not None else None


def cost_table(n: int, d: int, k: int = CONV_KERNEL):
    """The paper's Table 1 (layer_costs) with its headers in the page's language."""
    table = layer_costs(n, d, k)
    table.columns = [t(key, n=n, d=d) for key in ABOUT_COSTS_COL_KEYS.values()]
    table.index = [t(ABOUT_COSTS_KEYS[kind]) for kind in ("attention", "recurrent", "conv")]
    return table


def why_attention_picture(ctx: Context, n: int, k: int = CONV_KERNEL) -> None:
    d = ctx.model.config.d_model
    fig = complexity_figure(n, d, look(), k, title=t("about.costs.title", n=n, d=d))
    show_figure(fig, f"{ctx.model_id}-why-attention-n{n}", cost_table(n, d, k), key="about-costs")


def why_attention_details(n: int, d: int, k: int = CONV_KERNEL) -> None:
    st.markdown(t("about.costs.details"))
    data_table(cost_table(n, d, k), digits=0, column_config={
        t("about.costs.col3", n=n, d=d): st.column_config.NumberColumn(format="localized")})


def configuration_and_parameters(model) -> None:
    cfg = model.config
    c1, c2 = st.columns([1.1, 1])
    with c1:
        st.subheader(t("about.config"))
        config = pd.DataFrame([(k, str(v), t(ABOUT_CONFIG_KEYS[k]) if k in CONFIG_SETTINGS else "")
                               for k, v in cfg.to_dict().items()],
                              columns=[t("about.config.setting"), t("about.config.value"), t("about.config.meaning")])
        config = config.set_index(t("about.config.setting"))
        st.table(config)      # a static table wraps its meanings; a data frame cut them ("sinusoi") at 1280 px
    with c2:
        st.subheader(t("about.params"))
        groups = parameter_groups(model.parameter_sizes)
        groups.index = [t(ABOUT_PARAMS_KEYS[part]) for part in groups.index]
        groups.columns = [t(ABOUT_PARAMS_KEYS[column]) for column in groups.columns]
        data_table(groups, formats={t("about.params.share"): "{:.1%}"}, column_config={
            t("about.params.parameters"): st.column_config.NumberColumn(format="localized"),
            t("about.params.share"): st.column_config.NumberColumn(format="percent")})
        tied = cfg.vocab_size * cfg.d_model
        if cfg.share_embeddings:
            st.caption(t("about.params.tied", vocab=cfg.vocab_size, d_model=cfg.d_model, tied=f"{tied:,}",
                         untied=f"{2 * tied:,}"))
        else:
            st.caption(t("about.params.untied"))
        if cfg.pe == "sinusoidal":
            st.caption(t("about.params.sinusoidal"))


def data_and_card(model_id: str, metrics) -> None:
    st.subheader(t("about.data"))
    card, translated = None, False
    try:                                                          # read only within its size limit
        if current_lang() == "zh":                                # the card in the reader's language, when written
            card = model_file_text(model_id, "README.zh.md")
            translated = card is not None
        card = card if translated else model_file_text(model_id, "README.md")
    except ValueError as e:
        st.warning(plain(str(e)))
        card = None
    if card is not None:
        if not translated:
            st.caption(t("about.card.language"))
        with st.expander(t("about.card"), expanded=True):
            # parsed, not patched: no image fetched, no HTML, no shortcode drawn (a folder may not be the authors')
            st.html(card_html(card))
    elif isinstance(metrics, dict) and "task" in metrics:
        st.markdown(t("about.toy_data", task=task_name(metrics["task"], current_lang())))
    else:
        st.info(t("about.no_card"))


def training_curve(model_id: str) -> None:
    st.subheader(t("about.curve"))
    try:
        text = model_file_text(model_id, "train_log.csv")   # read only within its size limit
        if text is None:
            st.info(t("about.curve.none"))
            return
        log = read_train_log(text)
    except (ValueError, UnicodeDecodeError) as e:
        st.warning(t("about.curve.unreadable", error=e))
        return
    curve = loss_curve(log, look(), title=t("fig.loss.title", model=model_id))
    show_figure(mark_run_ends(curve, run_ends(log), look()),
                f"{model_id}-loss-curve", log, key="about-loss")
    show_figure(lr_curve(log, look()), f"{model_id}-learning-rate", key="about-lr")
    last = log.iloc[-1]
    dev = log["dev_loss"].dropna()
    summary = t("about.curve.summary", points=len(log), step=int(last["step"]), epoch=f"{last['epoch']:.0f}",
                train=f"{last['train_loss']:.3f}")
    st.caption(summary + (t("about.curve.dev", dev=f"{dev.iloc[-1]:.3f}") if len(dev) else t("about.curve.no_dev")))


def score_rows(metrics: dict) -> dict[str, dict]:
    """The evaluations in metrics.json (entries with a BLEU and a chrF), by name."""
    return {name: v for name, v in metrics.items() if isinstance(v, dict) and {"bleu", "chrf"} <= v.keys()}


def decoding_name(name: str) -> str:
    """greedy / beam4 in the page's language; any other evaluation by its identifier, spaced."""
    if name == "greedy":
        return t("about.metrics.greedy")
    if name.startswith("beam") and name[4:].isdigit():
        return t("about.metrics.beam", beam=int(name[4:]))
    return name.replace("_", " ")


# Named score sets of a metrics.json besides its top level (the Bible's held-out verses).
SCORE_SET_KEYS = catalogue_keys("about.metrics.set", "everyday_test", "everyday_sentences")


def metrics_table(metrics) -> None:
    """Scores as tables (one row per decoding, BLEU / chrF / seconds), one per test set (the top level, then
    each named set such as the everyday sentences), the sacreBLEU signatures once below each; other values
    as short rows and long notes as text: nothing cut off at a cell's edge."""
    st.subheader(t("about.metrics"))
    if not metrics:
        st.info(t("about.metrics.none"))
        return
    if "error" in metrics and len(metrics) == 1:
        st.warning(plain(str(metrics["error"]), limit=600))
        return
    sets = {k: v for k, v in metrics.items() if isinstance(v, dict) and score_rows(v)}
    scores = score_rows(metrics)
    if scores and sets:
        st.markdown(t("about.metrics.set.main"))
    score_table(metrics, scores)
    for name, scored in sets.items():
        st.markdown(t(SCORE_SET_KEYS[name]) if name in SCORE_SET_KEYS else f"`{plain(name, 60)}`")
        score_table(scored, score_rows(scored))
    shown = set(scores) | set(sets) | ({"pairs", "test_file"} if scores else set())          # said in the caption
    translated = {k for k in metrics if k.rpartition(".")[2] in LANGS}     # "checkpoint.zh": a note's translation
    rest = {k: metrics.get(f"{k}.{current_lang()}", v) for k, v in metrics.items() if k not in shown | translated}
    short = [(k, v if isinstance(v, (int, float, str)) else json.dumps(v)) for k, v in rest.items()
             if not isinstance(v, str) or len(v) <= 40]
    if short:
        metric, value = t("about.metrics.metric"), t("about.metrics.value")
        data_table(pd.DataFrame(short, columns=[metric, value]).astype({value: str}).set_index(metric))
    for k, v in rest.items():
        if isinstance(v, str) and len(v) > 40:
            st.caption(plain(f"{k}: {v}", limit=2000))           # a metrics.json's words, shown as written


def score_table(metrics: dict, scores: dict[str, dict]) -> None:
    """One test set's decodings as rows, and the set's file, size and sacreBLEU signatures in a caption."""
    if not scores:
        return
    seconds = t("about.metrics.seconds")
    table = pd.DataFrame([{"BLEU": v["bleu"], "chrF": v["chrf"], seconds: v.get("seconds")} for v in scores.values()],
                         index=pd.Index([decoding_name(n) for n in scores], name=t("about.metrics.decoding")))
    data_table(table.dropna(axis=1, how="all"), digits=2)
    first = next(iter(scores.values()))
    if "bleu_signature" in first:
        st.caption(t("about.metrics.signatures", pairs=plain(str(metrics.get("pairs", "?")), 40),
                     file=plain(str(metrics.get("test_file", "?")), 200), bleu=code_span(first["bleu_signature"]),
                     chrf=code_span(first.get("chrf_signature", "?"))))


def render() -> None:
    ctx = need_context(need_trace=False)
    cfg, metrics = ctx.model.config, ctx.model.metrics
    st.title(t("about.title", model=code_span(ctx.model_id)))       # a folder's name is never Markdown
    n = sentence_length(ctx)
    why_attention_picture(ctx, n or 10)
    st.caption(t("about.costs.read") + ("" if n else " " + t("about.costs.default_n")))
    with st.expander(t("about.costs.expander")):
        why_attention_details(n or 10, cfg.d_model)
    knows = what_the_model_knows(ctx.model_id, metrics, current_lang())
    if knows:
        st.markdown(t("home.knows", knows=knows))
    st.markdown(architecture_summary(cfg))
    configuration_and_parameters(ctx.model)
    data_and_card(ctx.model_id, metrics)
    training_curve(ctx.model_id)
    metrics_table(metrics)


if __name__ == "__main__":
    render()
