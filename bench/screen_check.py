"""What a class sees, page by page: every page x en/zh x normal/presenter x a 9- and a 40-word sentence x a
projector's 1280x720 and a phone's 390x844, in Chromium against `streamlit run app.py`, failing on

  text out      a chart's title, axis title, note or tick label leaving its chart (cut at its edge), two chart
                titles over one another, a button's words wider than the button, two buttons over one another;
  toolbar       presenter mode and phones: plotly's toolbar (shown when the pointer is over a chart) over the chart's
                title;
  small         presenter mode at 1280x720: chart, table, caption or body text under 20 px, or a table drawn on
                a canvas (st.dataframe: 14 px whatever the mode);
  dropped       a 9-word sentence's tokens missing from a chart that labels the source (a window of it, or
                labels plotly left out);
  no picture    the first screen (scroll 0) without a chart or picture;
  sentence line presenter mode: the sentence line over the page taller than two lines.

    python bench/screen_check.py [--pages home decoding] [--lang en zh] [--mode present normal]
                                 [--words 9 40] [--screen projector phone] [--root /path/to/another/checkout]
                                 [--shots DIR] [--json out.json]

--root runs another checkout's app (the main a branch started from) with this script's checks. Prints one row
per failing view and a summary per check; exits 1 when any view fails.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.parse
from pathlib import Path

from common import ROOT, SentenceMaker, Server, log, table

from browser_utils import CHROMIUM, CHROMIUM_ARGS, wait_for_app
from chart_text import CHARTS_SETTLED_JS, PAGES
from long_text import SENTENCES

SCREENS = {"projector": {"viewport": {"width": 1280, "height": 720}},
           "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                     "device_scale_factor": 2,
                     "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
                                   "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"}}
WORDS = {"9": SENTENCES["9"], "40": SENTENCES["40"]}
FLOOR_PX = 20          # presenter mode: the back row
PICTURE_PX = 120       # a first screen shows a picture when at least this much of one is in view

CHECKS_JS = r"""([present, phone, sourceLabels]) => {
  const W = innerWidth, H = innerHeight, out = [];
  const R = el => el.getBoundingClientRect();
  const shown = el => el.checkVisibility({opacityProperty: true, visibilityProperty: true})
                      && !el.closest('details:not([open])') && R(el).width > 0;
  const say = (check, what) => out.push({check, what: String(what).replace(/\s+/g, ' ').trim().slice(0, 60)});
  const meets = (a, b, pad = 1) => a.left + pad < b.right && b.left + pad < a.right && a.top + pad < b.bottom
                                   && b.top + pad < a.bottom;
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(shown);
  for (const gd of plots) {
    const svg = gd.querySelector('svg.main-svg');
    if (!svg) continue;
    const box = R(svg);
    const titles = [...gd.querySelectorAll('.gtitle, .infolayer text[class$="title"], .annotation-text')]
      .filter(el => (el.textContent || '').trim() && R(el).width > 0);
    const texts = [...titles, ...gd.querySelectorAll('.xtick text, .ytick text, .legendtext')];
    for (const el of texts) {
      const r = R(el);
      if (r.width < 1 || !(el.textContent || '').trim()) continue;
      if (r.left < box.left - 2 || r.right > box.right + 2 || r.top < box.top - 2 || r.bottom > box.bottom + 2)
        say('text out', 'chart text cut at its edge: ' + el.textContent);
    }
    for (let i = 0; i < titles.length; i++) for (let j = i + 1; j < titles.length; j++)
      if (meets(R(titles[i]), R(titles[j]), 2)) say('text out', titles[i].textContent + ' over ' + titles[j].textContent);
    const bar = gd.querySelector('.modebar');
    if ((present || phone) && bar && R(bar).width > 0) {   // normal mode at a desk: the toolbar's downloads stay
      for (const t of titles) if (t.classList.contains('gtitle') || t.closest('.annotation'))
        if (meets(R(bar), R(t))) { say('toolbar', 'toolbar over ' + t.textContent); break; }
    }
    if (present && !phone) {      // a phone in presenter mode keeps its own sizes: projector sizes cut every title
      for (const el of gd.querySelectorAll('svg text')) {
        const t = (el.textContent || '').trim();
        if (!t || !shown(el)) continue;
        const px = parseFloat(getComputedStyle(el).fontSize);
        const m = el.getScreenCTM();
        const drawn = px * (m ? Math.sqrt(Math.abs(m.a * m.d - m.b * m.c)) : 1);
        if (Math.min(px, drawn) < 19.95) { say('small', `chart text ${Math.round(drawn * 10) / 10} px: ${t}`); break; }
      }
    }
    // the source's tokens: a chart that labels some of them labels all
    const full = gd._fullLayout || {};
    for (const k of Object.keys(full).filter(k => /^[xy]axis\d*$/.test(k))) {
      const ax = full[k];
      if (ax.type !== 'category' || !ax.visible || !ax.showticklabels) continue;
      const cats = (ax._categories || []).map(c => String(c).replace(/&lt;/g, '<').replace(/&gt;/g, '>'));
      const drawn = new Set([...gd.querySelectorAll('.' + ax._id + 'tick text')].map(e => e.textContent));
      const source = cats.filter(c => sourceLabels.includes(c));
      if (sourceLabels.length && source.length >= 3 && source.length === cats.length && source.length < sourceLabels.length)
        say('dropped', `${ax._id}: ${source.length} of ${sourceLabels.length} source tokens`);
      const missing = cats.filter(c => !drawn.has(c)).length;
      if (ax.tickmode !== 'array' && missing && cats.length <= 16) say('dropped', `${ax._id}: ${missing} labels not drawn`);
    }
  }
  const main = document.querySelector('[data-testid="stMain"]');
  const buttons = [...main.querySelectorAll('button, [data-testid="stPageLink"] a')].filter(shown);
  for (const b of buttons) {
    const words = b.querySelector('p');
    if (words && shown(words) && (words.scrollWidth > words.clientWidth + 1 || R(words).right > R(b).right + 1))
      say('text out', 'button words cut: ' + words.textContent);
  }
  for (let i = 0; i < buttons.length; i++) for (let j = i + 1; j < buttons.length; j++)
    if (!buttons[i].contains(buttons[j]) && !buttons[j].contains(buttons[i]) && meets(R(buttons[i]), R(buttons[j]), 3))
      say('text out', `button over button: ${buttons[i].textContent} / ${buttons[j].textContent}`);
  if (present && !phone) {
    const texts = main.querySelectorAll('[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,'
      + ' [data-testid="stCaptionContainer"] p, table td, table th, [data-testid="stCode"] code');
    for (const el of texts) {
      if (!shown(el) || !(el.textContent || '').trim() || el.closest('button, [data-testid="stTooltipContent"], '
          + '[data-testid="stWidgetLabel"], [data-baseweb="popover"], header')) continue;
      const px = parseFloat(getComputedStyle(el).fontSize);
      if (px < 19.95) { say('small', `text ${px} px: ${el.textContent}`); }
    }
    for (const grid of main.querySelectorAll('[data-testid="stDataFrame"]')) if (shown(grid))
      say('small', 'a table drawn on a canvas (14 px)');
    const line = document.querySelector('.st-key-presenter-line');
    if (line) {
      const p = line.querySelector('p');
      const lh = p ? parseFloat(getComputedStyle(p).lineHeight) || 30 : 30;
      if (p && R(p).height > 2.2 * lh) say('sentence line', `${Math.round(R(p).height / lh)} lines`);
    }
  }
  main.scrollTo(0, 0);
  const pictures = [...main.querySelectorAll('.js-plotly-plot, img, canvas, iframe, [data-testid="stImage"]')]
    .filter(shown).map(R).filter(r => Math.min(r.bottom, H) - Math.max(r.top, 0) >= Math.min(PICTURE, r.height) && r.height >= 60);
  if (!pictures.length) say('no picture', 'nothing drawn on the first screen');
  return out;
}""".replace("PICTURE", str(PICTURE_PX))


def view_url(base: str, page: str, present: bool, lang: str, words: str) -> str:
    params = {"text": WORDS[words]}
    if present:
        params["present"] = "1"
    if lang != "en":
        params["lang"] = lang
    return f"{base}/{'' if page == 'home' else page}?" + urllib.parse.urlencode(params)


def settle(page, timeout_ms: int = 240_000) -> None:
    wait_for_app(page, timeout_ms)
    try:
        page.wait_for_function(CHARTS_SETTLED_JS, timeout=min(timeout_ms, 60_000))
    except Exception:          # noqa: BLE001 - a page whose first screen has no chart
        pass
    time.sleep(1.0)            # plotly's autosize pass after the first draw
    wait_for_app(page, timeout_ms)


def check_view(page, url: str, present: bool, phone: bool, source: list[str], shot: Path | None) -> list[dict]:
    page.goto(url)
    settle(page)
    errors = [e.inner_text()[:200] for e in page.locator('[data-testid="stException"]').all()]
    found = [{"check": "error", "what": e} for e in errors]
    # plotly shows its toolbar while the pointer is over a chart: put it over the first one
    first = page.locator(".js-plotly-plot").first
    if first.count():
        try:
            first.hover(timeout=3000)
            time.sleep(0.3)
        except Exception:     # noqa: BLE001 - a chart that cannot be hovered: its toolbar is not checked
            pass
    found += page.evaluate(CHECKS_JS, [present, phone, source])
    if shot is not None:
        page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
        page.screenshot(path=str(shot))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    parser.add_argument("--lang", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--mode", nargs="+", default=["present", "normal"], choices=["present", "normal"])
    parser.add_argument("--words", nargs="+", default=list(WORDS), choices=list(WORDS))
    parser.add_argument("--screen", nargs="+", default=list(SCREENS), choices=list(SCREENS))
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose app to run (default: this one)")
    parser.add_argument("--shots", type=Path, default=None, help="save each view's first screen here")
    parser.add_argument("--json", default=None, help="write every failure here")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright
    maker = SentenceMaker()
    sources = {"9": maker.labels(WORDS["9"]), "40": []}     # the 9-word sentence's tokens, all of which must show
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    failures: list[dict] = []
    views = 0
    started = time.perf_counter()
    with Server(root=args.root) as server, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for screen in args.screen:
            for mode in args.mode:
                for lang in args.lang:
                    # one session per screen, mode and language (presenter mode and the language stick)
                    context = chromium.new_context(**SCREENS[screen])
                    page = context.new_page()
                    for words in args.words:
                        for name in args.pages:
                            where = f"{name} {lang} {mode} {words}w {screen}"
                            shot = args.shots / f"{where.replace(' ', '-')}.png" if args.shots else None
                            try:
                                found = check_view(page, view_url(server.url, name, mode == "present", lang, words),
                                                   mode == "present", screen == "phone", sources[words], shot)
                            except Exception as e:  # noqa: BLE001 - a page that never settles is a failure, not a crash
                                found = [{"check": "error", "what": f"{type(e).__name__}: {e}"[:200]}]
                            views += 1
                            for f in found:
                                failures.append({"view": where, **f})
                            log(f"screen check {where}: " + ("ok" if not found else
                                                             "; ".join(f"{f['check']}: {f['what']}" for f in found[:4])))
                    context.close()
        chromium.close()
    seconds = time.perf_counter() - started
    if args.json:
        Path(args.json).write_text(json.dumps(failures, ensure_ascii=False, indent=1), encoding="utf-8")
    by_check: dict[str, set[str]] = {}
    for f in failures:
        by_check.setdefault(f["check"], set()).add(f["view"])
    rows = [[check, len(v), ", ".join(sorted(v)[:6]) + (" …" if len(v) > 6 else "")] for check, v in
            sorted(by_check.items())]
    print(table(["check", "views failing", "some of them"], rows) if rows else "no failures")
    print(f"{views} views in {seconds:.0f} s; {len({f['view'] for f in failures})} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
