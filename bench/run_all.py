"""Run every benchmark and rewrite docs/performance.md from scratch.

    python bench/run_all.py [--quick] [--only forward,memory]

Run on a quiet machine: nothing else using the CPU (check `uptime`; the load average is recorded).
"""
from __future__ import annotations

import argparse
import importlib
import traceback

from common import Check, Section, log, machine_line, write_document, write_section

BENCHMARKS = ["forward", "browser", "cold_start", "memory", "load", "load_server", "attribution", "gpu"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run of every benchmark")
    parser.add_argument("--only", default=None, help="comma-separated subset; updates only those sections")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else BENCHMARKS
    started = machine_line("as the run began")
    sections = []
    for name in names:
        log(f"== {name}")
        module = importlib.import_module(name)
        try:
            section = module.main(["--quick"] if args.quick else [])
        except Exception as e:  # noqa: BLE001 - a broken benchmark is reported in the document, not hidden
            traceback.print_exc()
            section = Section(name, f"{name} (failed)", f"The benchmark failed: `{type(e).__name__}: {e}`",
                              [Check(f"{name} ran", "failed", False)])
        if args.quick:
            section.body = "*Smoke run (`--quick`): few repeats, numbers not for quoting.*\n\n" + section.body
        sections.append(section)
        print(section.markdown())
    if args.only:
        for section in sections:
            write_section(section)
    else:
        write_document(sections, started)
    log("docs/performance.md written")


if __name__ == "__main__":
    main()
