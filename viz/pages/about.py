"""About the model: why attention (its cost, for the sidebar sentence) first, then what the model knows, its
configuration, parameters, data and model card, training curve and metrics."""
import json

import pandas as pd
import streamlit as st

from viz.figures.training import clean_train_log, complexity_figure, layer_costs, loss_curve, lr_curve, parameter_groups
from viz.state import Context
from viz.ui import need_context, show_figure

CONFIG_MEANING = {
    "vocab_size": "tokens in the joint source/target vocabulary",
    "d_model": "width of every token vector",
    "n_heads": "attention heads per attention sublayer",
    "n_encoder_layers": "encoder layers stacked",
    "n_decoder_layers": "decoder layers stacked",
    "d_ff": "hidden width of the position-wise feed-forward network",
    "dropout": "dropout rate during training",
    "max_len": "longest sequence the positional encoding covers",
    "norm_first": "False: post-norm (paper), True: pre-norm",
    "pe": "positional encoding: sinusoidal (paper) or learned",
    "share_embeddings": "one matrix for both embeddings and the output layer",
    "ln_eps": "LayerNorm epsilon",
    "pad_id": "id of ⟨pad⟩", "bos_id": "id of ⟨s⟩", "eos_id": "id of ⟨/s⟩",
}
TOY_DATA = ("Synthetic data, generated on the fly by model/tasks.py: random sequences of 3 to 8 symbols from "
            "a–j, with the {task} of the sequence as the target. Nothing is downloaded, so there is no data "
            "licence to respect.")

KNOWS = {
    "en-es": ("It learned all its Spanish from one book: about 28,700 Bible verses, the World English Bible paired "
              "with the Reina-Valera translation of 1909. So its spelling is that of 1909 (\"se fué á casa\", "
              "where today one writes \"se fue a casa\"), its words are the Bible's (\"varón\" for man), and "
              "everyday or modern sentences can come out wrong."),
}
TOY_KNOWS = ("It learned one task only, on made-up data: the {task} of a sequence of 3 to 8 symbols from a–j. "
             "Anything else is outside what it knows.")
CONV_KERNEL = 3


def what_the_model_knows(model_id: str, metrics) -> str | None:
    """One plain paragraph on what the model learned from, and so where it goes wrong; None if unknown."""
    if model_id in KNOWS:
        return KNOWS[model_id]
    if isinstance(metrics, dict) and "task" in metrics:
        return TOY_KNOWS.format(task=str(metrics["task"]))
    return None


def architecture_summary(cfg) -> str:
    norm = ("**post-norm**, as in the paper: each sublayer's output is added to its input and then normalized, "
            "LayerNorm(x + Sublayer(x))" if not cfg.norm_first else
            "**pre-norm**: each sublayer reads a normalized copy and adds its output back, x + Sublayer(LayerNorm(x)), "
            "with a final LayerNorm after each stack")
    pe = ("**sinusoidal** positional encoding (fixed, no parameters)" if cfg.pe == "sinusoidal"
          else "**learned** positional embeddings (a trained table of max_len × d_model)")
    shared = ("**one shared matrix** for the source embedding, the target embedding and the output layer (as in "
              "the paper)" if cfg.share_embeddings else
              "**separate** source embedding, target embedding and output matrices")
    return (f"An encoder-decoder Transformer: {cfg.n_encoder_layers} encoder and {cfg.n_decoder_layers} decoder "
            f"layers, width d_model = {cfg.d_model}, {cfg.n_heads} heads of d_k = {cfg.d_head}, feed-forward "
            f"width {cfg.d_ff}, vocabulary of {cfg.vocab_size} tokens. Residual connections are {norm}. It uses {pe}, "
            f"and {shared}. Dropout {cfg.dropout} during training.")


def sentence_length(ctx: Context) -> int | None:
    """Tokens of the sidebar sentence, or None when the model has not read one."""
    return len(ctx.trace.meta["src_ids"]) if ctx.trace is not None else None


def why_attention_picture(ctx: Context, n: int, k: int = CONV_KERNEL) -> None:
    d = ctx.bundle.config.d_model
    fig = complexity_figure(n, d, k, title=f"Cost of one layer: your sentence has n = {n} tokens, this model d = {d}")
    show_figure(fig, f"{ctx.model_id}-why-attention-n{n}", layer_costs(n, d, k), key="about-costs")


def why_attention_details(n: int, d: int, k: int = CONV_KERNEL) -> None:
    st.markdown(
        "The paper compares one layer of each kind for a sequence of n tokens of width d (Table 1). Self-attention "
        "links every pair of positions in one step, so nothing is sequential within a layer and any token reaches "
        "any other in a single hop; its cost grows with n², which stays below a recurrent layer's n·d² while n < d. "
        "A recurrent layer must walk the sequence one position at a time; a convolution with kernel k sees only a "
        "window, so (dilated) layers must be stacked log_k n deep before distant tokens meet.")
    st.dataframe(layer_costs(n, d, k), column_config={
        f"operations (n={n}, d={d})": st.column_config.NumberColumn(format="localized")})


def configuration_and_parameters(bundle) -> None:
    cfg = bundle.config
    c1, c2 = st.columns([1.1, 1])
    with c1:
        st.subheader("Configuration")
        config = pd.DataFrame([(k, str(v), CONFIG_MEANING.get(k, "")) for k, v in cfg.to_dict().items()],
                              columns=["setting", "value", "meaning"]).set_index("setting")
        st.dataframe(config, height=35 * (len(config) + 1) + 3)
    with c2:
        st.subheader("Parameters")
        groups = parameter_groups((name, p.numel()) for name, p in bundle.model.named_parameters())
        st.dataframe(groups, column_config={"parameters": st.column_config.NumberColumn(format="localized"),
                                            "share": st.column_config.NumberColumn(format="percent")})
        tied = cfg.vocab_size * cfg.d_model
        if cfg.share_embeddings:
            st.caption(f"Tied weights are counted once: the shared {cfg.vocab_size} × {cfg.d_model} matrix "
                       f"({tied:,} parameters) sits under embeddings; the generator adds only its bias. Untied it "
                       f"would cost {2 * tied:,} more.")
        else:
            st.caption("No weights are tied: the two embeddings and the output layer each have their own matrix.")
        if cfg.pe == "sinusoidal":
            st.caption("The sinusoidal positional encoding is computed, not learned, so it has no parameters.")


def data_and_card(bundle, metrics) -> None:
    st.subheader("Data, licence and model card")
    card = bundle.path / "README.md"
    if card.is_file():
        with st.expander("Model card (README.md)", expanded=True):
            st.markdown(card.read_text(encoding="utf-8", errors="replace"))  # repository content, not user input
    elif isinstance(metrics, dict) and "task" in metrics:
        st.markdown(TOY_DATA.format(task=str(metrics["task"])))
    else:
        st.info("This model folder has no model card (README.md), so its data and licence are not recorded here.")


def training_curve(model_id: str, bundle) -> None:
    st.subheader("Training curve")
    log_path = bundle.path / "train_log.csv"
    if not log_path.is_file():
        st.info("This model folder has no train_log.csv. Toy models are trained in a minute or two by "
                "model/train.py, which keeps only their final metrics (below); the translation trainer writes the log.")
        return
    try:
        log = clean_train_log(pd.read_csv(log_path))
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        st.warning(f"train_log.csv could not be read: {e}")
        return
    show_figure(loss_curve(log, title=f"{model_id}: loss during training"), f"{model_id}-loss-curve",
                log, key="about-loss")
    show_figure(lr_curve(log), f"{model_id}-learning-rate", key="about-lr")
    last = log.iloc[-1]
    dev = log["dev_loss"].dropna()
    st.caption(f"{len(log)} logged points up to step {int(last['step'])} (epoch {last['epoch']:.0f}); "
               f"last train loss {last['train_loss']:.3f}"
               + (f", last dev loss {dev.iloc[-1]:.3f}." if len(dev) else "; no dev loss logged yet."))


def metrics_table(metrics) -> None:
    st.subheader("Metrics")
    if not metrics:
        st.info("This model folder has no metrics.json.")
    elif "error" in metrics and len(metrics) == 1:
        st.warning(metrics["error"])
    else:
        rows = [(k, v if isinstance(v, (int, float, str)) else json.dumps(v)) for k, v in metrics.items()]
        st.dataframe(pd.DataFrame(rows, columns=["metric", "value"]).astype({"value": str}).set_index("metric"))


def render() -> None:
    ctx = need_context(need_trace=False)
    bundle, cfg = ctx.bundle, ctx.bundle.config
    metrics = bundle.extra.get("metrics")
    st.title(f"About the model: {ctx.model_id}")
    n = sentence_length(ctx)
    why_attention_picture(ctx, n or 10)
    st.caption("Operations of one layer as the sentence grows (both axes logarithmic). Self-attention (blue) costs "
               "n²·d, less than a recurrent layer's n·d² while n < d (left of the grey line); the red line is your "
               "sentence." + ("" if n else " No readable sentence in the sidebar: using n = 10."))
    with st.expander("Why attention: the paper's Table 1 for your sentence"):
        why_attention_details(n or 10, cfg.d_model)
    knows = what_the_model_knows(ctx.model_id, metrics)
    if knows:
        st.markdown(f"**What this model knows.** {knows}")
    st.markdown(architecture_summary(cfg))
    configuration_and_parameters(bundle)
    data_and_card(bundle, metrics)
    training_curve(ctx.model_id, bundle)
    metrics_table(metrics)


if __name__ == "__main__":
    render()
