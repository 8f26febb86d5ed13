"""Snapshots scrubbed on the live training page, two trees side by side (issue 44): a past main (A, whose result view
reran the script for every snapshot picked on its select slider) and this tree (B, whose snapshots the browser
answers: viz/figures/browser_view.js, a deck of every snapshot), each served by its own `streamlit run app.py`, in
Chromium at 1280x720, one toy training on each, then the same scrubs on each in turn.

    python bench/training_ab.py [--base f48b87d | --against /tmp/base | --alone] [--picks 32] [--heads 12]
                                [--size small] [--steps 200] [--present] [--build tiny medium] [--build-steps 800]
                                [--write]

First, on each tree in turn: the training page opened (copy, the toy model --size, --steps steps: small and 200 give
17 snapshots) and Train pressed, timed until the result view is drawn at its last snapshot and the page idle (the
training's own seconds, which the load sways, included). Each scrub: A, the select slider's thumb moved one snapshot
with the arrow keys; B, ◀ Previous or Next ▶ clicked (down to the first snapshot, up to the last, again), the trees
alternating; from the key or click until the snapshot is on screen (A: the script has finished, nothing is stale,
every chart drawn and the grid's title names the snapshot's step; B: the view marks every picture of it drawn) and
the websocket messages sent meanwhile and 0.5 s after (a script run asked for is one). B's view body as it received
it (every snapshot's curve, caption, grid and two maps, gzipped). Then --heads head picks at a snapshot of the
middle, the trees alternating: A the server's head select box (a script run; main before 2026-11-29's htrain3 built
the deck again for the head), B the view's head select (the maps of every layer and head are in the browser); from
the choice until the maps name the head, every picture drawn and the page idle. --alone: this tree only. The load
average is printed at the start and end.

--build: before the browsers, in this process, a training of each size given (copy, --build-steps steps) and this
tree's deck of it built three times: the build's seconds (median) and the body's bytes gzipped, as the page sends it.
"""
from __future__ import annotations

import argparse
import time
import urllib.parse
from pathlib import Path

from common import Check, Section, median, report, table
from deck_ab import (VIEW, Messages, Trees, faster, in_browser, ms, no_runs, on_screen, order,
                     pick_table, sent_cell, time_picks, view_cell)
from edit_ab import TIMEOUT_MS, load

from browser_utils import wait_for_app

BASE = "f48b87d"          # main of 2026-11-29, before the training page's snapshots were drawn in the browser
EXAMPLE = "a b c d e f g"
# A snapshot on screen: no run going, nothing stale, every chart drawn; the view says it drew every picture of the
# snapshot (its index, with the maps' layer and head where the view picks them), or (a tree without the view) the
# grid's title names its step ("Step 12: ...")
SNAPSHOT_DRAWN_JS = """([index, step]) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.length || !plots.every(p => p.querySelector('svg.main-svg'))) return false;
  const deck = document.querySelector('.vz-deck');
  const drawn = deck ? deck.dataset.linesPick || '' : '';      // "3", or "3:1:-1" (a deck that picks the maps' head)
  if (deck) return (drawn === String(index) || drawn.startsWith(index + ':')) && deck.dataset.whole === '1';
  return [...document.querySelectorAll('.js-plotly-plot .gtitle')]
    .some(t => t.textContent.replace(/\\s/g, '').startsWith('Step' + step + ':'));
}"""


# A head on screen: no run going, nothing stale, every chart drawn; the view (its head select) says it drew every
# picture of the pick, or (a tree whose head is the server's select box) the cross-attention map's title names the
# head ("layer 1, head 2", spaces dropped)
HEAD_DRAWN_JS = """([pick, name]) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (!plots.length || !plots.every(p => p.querySelector('svg.main-svg'))) return false;
  const deck = document.querySelector('.vz-deck');
  if (deck && deck.querySelector('select.vz-head')) return deck.dataset.linesPick === pick;
  const titles = deck ? deck.querySelectorAll('.vz-fig-cross .gtitle') : document.querySelectorAll('.js-plotly-plot .gtitle');
  return [...titles].some(t => t.textContent.replace(/\\s/g, '').includes(name));
}"""


def url(base: str, size: str, steps: int, present: bool) -> str:
    query = {"model": "toy-reverse", "task": "copy", "size": size, "steps": steps, "example": EXAMPLE}
    return f"{base}/training?{urllib.parse.urlencode({**query, **({'present': 1} if present else {})})}"


def snapshot_steps(steps: int) -> list[int]:
    """The training steps a run of `steps` snapshots (model/training/live.eval_interval), as the page names them."""
    from model.training.live import eval_interval
    every = eval_interval(steps)
    return sorted({*range(every, steps + 1, every), steps})


def walk(n: int, last: int) -> list[tuple[str, int]]:
    """n scrubs from the last snapshot: back to the first, on to the last, again: (the way, the snapshot shown)."""
    picks, at, by = [], last, -1
    while len(picks) < n:
        if not 0 <= at + by <= last:
            by = -by
        at += by
        picks.append(("next" if by > 0 else "previous", at))
    return picks


def train(trees: Trees, size: str, steps: int, present: bool, named: list[int]) -> tuple[dict, dict, dict]:
    """Each tree's page opened and a training run on it, in turn: the pages, their Messages, and the seconds from
    Train pressed until the result is drawn at its last snapshot and the page idle."""
    pages, frames, seconds = {}, {}, {}
    for name in order(trees.roots, 0):
        page = trees.browsers[name].new_page(viewport={"width": 1280, "height": 720})
        frames[name] = Messages(page)
        page.goto(url(trees.servers[name].url, size, steps, present))
        wait_for_app(page, TIMEOUT_MS)
        start = time.perf_counter()
        page.get_by_role("button", name="Train", exact=True).click()
        page.wait_for_function(SNAPSHOT_DRAWN_JS, arg=[len(named) - 1, named[-1]], timeout=TIMEOUT_MS, polling=100)
        seconds[name] = time.perf_counter() - start
        time.sleep(1)
        pages[name] = page
    return pages, frames, seconds


def time_scrubs(pages: dict, frames: dict, n: int, named: list[int]) -> dict:
    def scrub(name: str, page, pick: tuple[str, int]) -> str:
        way, index = pick
        if in_browser(page):
            page.click(f"{VIEW} .vz-{way}")
        else:                       # the base's select slider: its thumb, one snapshot with an arrow key
            thumb = page.locator(".st-key-train-snapshot input[type=range]")
            thumb.focus()
            page.keyboard.press("ArrowRight" if way == "next" else "ArrowLeft")
        page.wait_for_function(SNAPSHOT_DRAWN_JS, arg=[index, named[index]], timeout=TIMEOUT_MS, polling="raf")
        return "snapshot"

    return time_picks(pages, frames, walk(n, len(named) - 1), scrub,
                      lambda i, pick: f"scrub {i + 1} ({pick[0]} to snapshot {pick[1]}, step {named[pick[1]]})")


def head_picks(n: int, heads: int) -> list[int]:
    """n heads to pick in turn, each another than the one before: 1, 2, ... heads-1, 0, 1, ..."""
    return [(i + 1) % heads for i in range(n)]


def time_heads(pages: dict, frames: dict, n: int, heads: int, layer: int, index: int) -> dict:
    """Each tree's maps' head picked n times (the snapshot `index` shown, the last layer)."""
    def pick(name: str, page, head: int) -> str:
        wanted = f"layer{layer},head{head}"
        if in_browser(page) and page.locator(f"{VIEW} select.vz-head").count():
            page.select_option(f"{VIEW} select.vz-head", str(head))
        else:                       # the server's select box (a script run)
            page.locator(".st-key-train-head [role=combobox]").click()
            page.keyboard.type(f"head {head}")          # the one option it matches
            page.keyboard.press("Enter")
        page.wait_for_function(HEAD_DRAWN_JS, arg=[f"{index}:{layer}:{head}", wanted], timeout=TIMEOUT_MS,
                               polling="raf")
        return "head"

    for name in order(pages, 0):    # the snapshot of the middle, first (a step pick: the view's)
        pages[name].click(f"{VIEW} .vz-step-choice >> nth={index}")
        if pages[name].locator(f"{VIEW} select.vz-layer").count():
            pages[name].select_option(f"{VIEW} select.vz-layer", str(layer))
        wait_for_app(pages[name], TIMEOUT_MS)
        time.sleep(1)
    return time_picks(pages, frames, head_picks(n, heads), pick, lambda i, head: f"head {i + 1} (head {head})")


def build_cost(size: str, steps: int, repeats: int = 3) -> list:
    """A training of `size` (copy, `steps` steps) in this process, and this tree's deck of it built `repeats`
    times: [size, snapshots, picks, build seconds (median), body bytes gzipped]."""
    from model.training.toy import TOY_SIZES
    from viz.core.i18n import words
    from viz.figures.style import NORMAL, Look
    from viz.pages import training as page
    from viz.services.training import LiveRun, make_example, parse_symbols, train_live
    run = LiveRun("copy", size, steps, make_example("copy", parse_symbols(EXAMPLE)))
    train_live(run, lambda record, snap: None)
    look, seconds = Look(words("en"), NORMAL), []
    for _ in range(repeats):
        start = time.perf_counter()
        body = page.deck_body(run, look, True, "bench")
        seconds.append(time.perf_counter() - start)
    _, heads, layers, _ = TOY_SIZES[size]
    n = len(run.snapshots)
    return [size, n, f"{n} x {layers * (heads + 1)}", f"{median(seconds):.2f} s", f"{len(body.gzipped):,} B"]


def main(argv=None) -> Section:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help="commit of tree A (git archive)")
    parser.add_argument("--against", type=Path, default=None, help="a checkout of --base instead (a worktree)")
    parser.add_argument("--alone", action="store_true", help="this tree only, no tree A")
    parser.add_argument("--picks", type=int, default=32)
    parser.add_argument("--size", default="small", choices=["tiny", "small", "medium"])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--present", action="store_true", help="presenter mode, not normal mode")
    parser.add_argument("--heads", type=int, default=12, help="head picks per tree (0: none)")
    parser.add_argument("--build", nargs="*", default=["tiny", "medium"], choices=["tiny", "small", "medium"],
                        help="toy sizes whose deck's build is timed in this process first")
    parser.add_argument("--build-steps", type=int, default=800)
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    named = snapshot_steps(args.steps)
    build_load = load()
    builds = [build_cost(size, args.build_steps) for size in args.build]
    from model.training.toy import TOY_SIZES
    _, n_heads, n_layers, _ = TOY_SIZES[args.size]
    with Trees(args.base, args.against, args.alone, prefix="training-ab-") as trees:
        pages, frames, trained = train(trees, args.size, args.steps, args.present, named)
        bodies = {name: int(page.locator(VIEW).get_attribute("data-body-bytes")) for name, page in pages.items()
                  if in_browser(page)}           # as each view received it, gzipped
        body = bodies["B"]
        picks = time_scrubs(pages, frames, args.picks, named)
        heads = time_heads(pages, frames, args.heads, n_heads, n_layers - 1, len(named) // 2) if args.heads else {}
    label, load_start, load_end = trees.label, trees.load_start, trees.load_end
    mode = "presenter mode" if args.present else "normal mode"
    against = "" if args.alone else f"A {label['A'][3:]} and "
    rows = [[label[name], len(r["snapshot"]), ms(r["snapshot"]), ms(r["painted_snapshot"]), view_cell(r),
             sent_cell(r), f"{sum(r['runs'])}", f"{trained[name]:.1f} s"] for name, r in picks.items()]
    text = "\n".join([
        f"Chromium (headless, 1280x720) against {'one' if args.alone else 'two'} `streamlit run app.py` at once, "
        f"{against}B this tree (bench/training_ab.py), the live training page, {mode}: one training on each (copy, "
        f"the {args.size} toy model, {args.steps} steps: {len(named)} snapshots, example \"{EXAMPLE}\"), then the "
        "same scrubs. B draws the snapshots in the browser (viz/elements/browser_view.py, a deck of every snapshot's "
        "curve, caption, grid and two maps, those of every layer and head, the page's builders', sent once a training "
        f"and look); A {'reran the script for each snapshot' if args.base == BASE else 'as that main drew it'}. "
        f"Load average {load_start} at the start, {load_end} at the end (1/5/15 "
        "min; 2 CPUs shared with other work): only the comparison within the run counts.", "",
        f"**Scrubs** ({args.picks} per tree, from the last snapshot back to the first and on again, one at a time: A "
        "the select slider's thumb with an arrow key, B ◀ Previous / Next ▶ clicked; the trees alternating): median "
        "/ p90 from the key or click until the snapshot is on screen (A: script finished, nothing stale, every chart "
        "drawn, the grid's title names the step; B: the view marks every picture of the snapshot drawn), as "
        "Playwright drives it. \"first picture on screen\": the view's own clock, from the click's event until the "
        "frame after the snapshot's first picture is drawn has been shown; \"in the view\": its clock to the first "
        "picture drawn / to every picture in sight drawn. \"sent\": websocket messages from the browser during the "
        "scrub and 0.5 s after; \"script runs\": of them, the page's reruns asked for. \"trained\": Train pressed "
        "until the result is drawn at its last snapshot and the page idle (the training's own seconds included).", "",
        table(["tree", "scrubs", "scrub: median / p90", "first picture on screen: median / p90",
               "in the view (median)", "messages sent per scrub (median)", "script runs (all scrubs)", "trained"],
              rows),
        "", "The view's body as the view received it (gzipped; every snapshot sent at once): "
        + ", ".join(f"{label[name]} {n:,} B" for name, n in bodies.items()) + ".",
        *(["", f"**Head picks** ({args.heads} per tree, the maps' head at snapshot {len(named) // 2}, layer "
           f"{n_layers - 1}, the trees alternating: A its server select box, B the view's head select): from the "
           "choice until the maps name the head, every chart drawn and the page idle.",
           "", pick_table(heads, label, "head")] if heads else []),
        *(["", f"**Build** (this tree's deck of a training, copy, {args.build_steps} steps, built in one process "
           f"three times; load average {build_load} before):", "",
           table(["size", "snapshots", "picks (snapshots x layers x (heads + mean))", "build (median of 3)",
                  "body gzipped"], builds)] if builds else []),
    ])
    b = picks["B"]
    checks = [Check("a snapshot's picture on screen in ≤ 50 ms (p50, this tree, the view's clock)",
                    f"{median(b['painted_snapshot']) * 1000:.0f} ms", median(b["painted_snapshot"]) <= 0.05),
              no_runs(b, "scrub")]
    if not args.alone:
        checks.append(faster(b, picks["A"], ("snapshot",), args.base, "scrub"))
    checks.append(Check("the view's body < 2 MB (this tree)", f"{body:,} B", body < 2_000_000))
    if heads:
        checks += [*on_screen(heads["B"], ("head",)), no_runs(heads["B"], "head")]
        if not args.alone:
            checks.append(faster(heads["B"], heads["A"], ("head",), args.base, "head pick"))
    return report(Section("training_picks", "Snapshots in the browser: the live training page's scrub (issue 44)",
                          text, checks), args.write)


if __name__ == "__main__":
    main()
