"""RESULTS.md and plots from the raw results in ``results/*.json``.

Everything in RESULTS.md is generated from the numbers except the section
after the ``HUMAN NOTES`` marker, which is kept as it is across regenerations.
"""

from __future__ import annotations

import glob
import json
import os
import statistics

HUMAN_MARKER = (
    "<!-- HUMAN NOTES: everything below this line is kept when RESULTS.md is regenerated -->"
)
PEERS = ("cubed", "dask", "dask-zarrs", "numpy")
ENGINE_ORDER = ("cubego", "cubed", "dask", "dask-zarrs", "numpy")
STATUS_TEXT = {
    "not_supported": "not supported",
    "refused": "refused (memory)",
    "timeout": "timeout",
    "oom": "OOM-killed",
    "memory": "MemoryError",
    "crash": "crashed",
    "crash-retried": "crashed, retried",
    "error": "error",
    "skipped": "skipped",
    "disk": "out of disk",
}
# Dask "holds data" in a case when its RSS growth is at least this share of the input
# and at least HOLDS_DATA_MIN bytes (above the noise of imports and interpreter).
HOLDS_DATA = 0.5
HOLDS_DATA_MIN = 256 * 10**6
COLORS = {
    "cubego": "#1b9e77",
    "cubed": "#d95f02",
    "dask": "#7570b3",
    "dask-zarrs": "#e7298a",
    "numpy": "#666666",
}


# ---------------------------------------------------------------- formatting


def fmt_s(x) -> str:
    if x is None:
        return "–"
    if x < 0.001:
        return f"{x * 1e6:.0f} µs"
    if x < 1:
        return f"{x * 1000:.0f} ms"
    if x < 100:
        return f"{x:.2f} s"
    return f"{x:.0f} s"


def fmt_b(x) -> str:
    if x is None:
        return "–"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f} {unit}" if unit == "GB" else f"{x / div:.0f} {unit}"
    return f"{x:.0f} B"


def fmt_r(x) -> str:
    if x is None:
        return "–"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- grouping


def load(results_dir: str) -> list[dict]:
    docs = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path) as f:
            docs.append(json.load(f))
    order = {"quick": 0}
    docs.sort(key=lambda d: (order.get(d["meta"]["label"], 1), d["meta"]["label"]))
    return docs


def groups(doc: dict) -> dict:
    """{(size, variant, case): {engine: [records by round]}} in run order."""
    out: dict = {}
    for r in doc["runs"]:
        if r["status"] == "crash-retried":
            continue
        key = (r.get("size"), r.get("variant"), r["case"])
        out.setdefault(key, {}).setdefault(r["engine"], []).append(r)
    # Size, then workload and case, then the variants in the order they ran.
    first_seen = {k: i for i, k in enumerate(out)}
    sizes = {"T": 0, "Q": 1, "M": 2, "L": 3}
    order = sorted(out, key=lambda k: (sizes.get(k[0], 9), k[2], first_seen[k]))
    return {k: out[k] for k in order}


def ok_runs(recs) -> list[dict]:
    return [r for r in recs or [] if r["status"] == "ok"]


def status_cell(recs) -> str | None:
    """A failure's text when no round succeeded."""
    if ok_runs(recs) or not recs:
        return None
    return STATUS_TEXT.get(recs[0]["status"], recs[0]["status"])


def med(recs, field):
    return median([r.get(field) for r in ok_runs(recs)])


def round_ratios(a_recs, b_recs, field="wall_s") -> list[float]:
    """a/b per round, where both succeeded (paired: rounds interleave engines)."""
    a = {r["round"]: r.get(field) for r in ok_runs(a_recs)}
    b = {r["round"]: r.get(field) for r in ok_runs(b_recs)}
    return [a[k] / b[k] for k in sorted(a) if k in b and a[k] and b[k]]


def roof_of(by: dict) -> dict | None:
    """The case's roofline (``run.roofline``), or None for results that predate it."""
    for recs in by.values():
        for r in recs:
            if (r.get("roofline") or {}).get("seconds"):
                return r["roofline"]
    return None


def pct_roof(recs, roof) -> float | None:
    """roofline / wall: 1.0 is the machine's limit."""
    wall = med(recs, "wall_s")
    return roof["seconds"] / wall if roof and wall else None


def fmt_pct(x) -> str:
    return "–" if x is None else f"{x * 100:.0f}%"


def roof_text(roof: dict) -> str:
    """How the roofline was made, for the per-case section."""
    io = (
        f"read {fmt_b(roof['read_bytes'])} at {fmt_b(roof['read_Bps'])}/s ({roof['read_kind']})"
        + (
            f" + write {fmt_b(roof['write_bytes'])} at {fmt_b(roof['write_Bps'])}/s "
            f"({roof['write_kind']})"
            if roof.get("write_bytes")
            else ""
        )
        + (
            f" + {roof['passes'] - 1} more read(s) {fmt_s(roof['again_s'])}"
            if roof.get("passes", 1) > 1
            else ""
        )
        + f" = {fmt_s(roof['io_s'])}"
    )
    cpu = (
        f"numpy {fmt_s(roof['numpy_cpu_s'])} on one core / {roof['cores']} cores = "
        f"{fmt_s(roof['cpu_s'])}"
        if roof.get("cpu_s") is not None
        else "no CPU probe"
    )
    notes = "".join(f"; {n}" for n in roof.get("notes") or [])
    return (
        f"roofline {fmt_s(roof['seconds'])}, bound by {roof['bound']}: I/O {io}; CPU {cpu}{notes}"
    )


def holds_data(by: dict) -> bool | None:
    """Whether Dask held the data in memory: RSS growth ≥ HOLDS_DATA × the input
    and ≥ HOLDS_DATA_MIN."""
    runs = ok_runs(by.get("dask"))
    read = (runs[0].get("read_bytes") if runs else 0) or 0
    growth = median(
        [(r.get("rss_hwm") or 0) - (r.get("rss_start") or 0) for r in runs if r.get("rss_hwm")]
    )
    if not runs or growth is None or not read:
        return None
    return growth >= max(HOLDS_DATA * read, HOLDS_DATA_MIN)


# ---------------------------------------------------------------- markdown


def machine_section(doc: dict) -> list[str]:
    m, v, c, io = (
        doc["meta"]["machine"],
        doc["meta"]["versions"],
        doc["meta"]["cubego"],
        doc["meta"]["io"],
    )
    lines = [
        f"- machine: {m['cpu']}, {m['cores']} cores, {fmt_b(m['ram_bytes'])} RAM, kernel "
        f"{m['kernel']}; disk `{m['disk']}` ({fmt_b(m['disk_free_bytes'])} free)",
        f"- warm I/O roofline (2 threads, page cache): write {fmt_b(io['write_Bps'])}/s, "
        f"read {fmt_b(io['read_Bps'])}/s ({fmt_b(io['bytes'])} probe)",
        *(
            [
                f"- disk (2 threads, page cache dropped before each pass): read "
                f"{fmt_b(io['cold']['read_Bps'])}/s"
                + (
                    f", write {fmt_b(io['cold']['write_Bps'])}/s (fsync'ed)"
                    if io["cold"].get("write_Bps")
                    else ""
                )
                + f" ({fmt_b(io['cold']['bytes'])} probe"
                + ("" if io["cold"].get("dropped", True) else "; could not drop caches")
                + (f"; {io['cold']['note']}" if io["cold"].get("note") else "")
                + ")"
            ]
            if io.get("cold")
            else []
        ),
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        f"- cubego {c.get('cubego', '?')}, git {c.get('git', '?')}"
        + (" (uncommitted changes)" if c.get("git_dirty") else "")
        + (f"; library {c['library']}" if c.get("library") else ""),
    ]
    crashes = [r for r in doc["runs"] if r["status"] in ("crash", "crash-retried")]
    if crashes:
        first = (crashes[0].get("error") or "").replace("\n", " ")
        lines.append(
            f"- {len(crashes)} run(s) died without a result (retried once where marked), e.g. "
            f"{crashes[0]['engine']} {crashes[0]['case']}: `{first[-200:]}`"
        )
    builds = sorted(
        {
            (r.get("versions") or {}).get("library_built")
            for r in doc["runs"]
            if r["engine"] == "cubego"
        }
        - {None}
    )
    if len(builds) > 1:
        lines.append(
            f"- the cubego library was rebuilt during this run (builds of {', '.join(builds)}): "
            "rounds may compare different builds"
        )
    elif builds:
        lines.append(f"- cubego library built {builds[0]}")
    meta = doc["meta"]
    lines.append(
        f"- protocol: {meta['rounds']} rounds interleaved across engines, "
        f"{meta['workers']} workers each, single-threaded BLAS, "
        f"{'cold' if meta['cold'] else 'warm'} page cache, time limit "
        f"{meta['timeout_s']:.0f} s per run, reserved_mem {fmt_b(meta['reserved_mem'])}"
        + (f", memory cap {fmt_b(meta['mem_limit'])} per engine" if meta["constrained"] else "")
    )
    if not meta.get("transpose", True):
        lines.append(
            "- W5 runs `sum(a @ a)` in every engine: cubego has no transpose yet "
            f"({c.get('transpose_error', '')})"
        )
    for d in meta.get("datagen", []):
        lines.append(
            f"- inputs {d['size']} {d['variant']}: {fmt_b(d['bytes'])} written by zarr-python in "
            f"{d['seconds']:.0f} s (untimed)"
        )
    if meta.get("suite_seconds"):
        lines.append(f"- whole suite: {meta['suite_seconds']:.0f} s")
    lines.append(f"- command: `{meta['command']}`")
    for u in meta.get("updates", []):
        lines.append(
            f"- cases re-run on {u['date']} (cubego git {u['cubego'].get('git', '?')}; "
            "their rooflines use that re-run's I/O probes; the probes shown above are the first "
            f"run's): `{u['command']}`"
        )
    return lines


def headline(doc: dict) -> list[str]:
    g = groups(doc)
    engines = [e for e in ENGINE_ORDER if any(e in v for v in g.values())]
    head = ["size", "variant", "case"] + [f"{e} wall" for e in engines]
    head += ["roofline", "cubego % of roofline"]
    peers = [e for e in engines if e != "cubego"]
    head += [f"cubego/{p}" for p in peers if p in ("cubed", "dask")]
    head += [f"{e} peak RSS" for e in engines if e in ("cubego", "cubed", "dask")]
    head += ["agree"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (size, variant, case), by in g.items():
        row = [size, variant, case]
        for e in engines:
            row.append(status_cell(by.get(e)) or fmt_s(med(by.get(e), "wall_s")))
        roof = roof_of(by)
        row.append(f"{fmt_s(roof['seconds'])} {roof['bound']}" if roof else "–")
        row.append(fmt_pct(pct_roof(by.get("cubego"), roof)))
        for p in peers:
            if p in ("cubed", "dask"):
                row.append(fmt_r(median(round_ratios(by.get("cubego"), by.get(p)))))
        for e in engines:
            if e in ("cubego", "cubed", "dask"):
                row.append("–" if status_cell(by.get(e)) else fmt_b(med(by.get(e), "peak_rss")))
        row.append(agree_cell(by))
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "Wall = median of the timed section (plan + compute + store, inside the engine's process). "
        "Roofline = max(bytes read / read speed + bytes written / write speed, numpy's "
        "single-core CPU time for the same arithmetic / cores), measured in this run; "
        "% of roofline = roofline / cubego's wall (100% is the machine's limit). "
        "cubego/peer = median of the per-round ratios of wall times (< 1: cubego is faster). "
        "Peak RSS = max of the parent's 20 Hz samples of the child's RSS and the child's own "
        "high-water mark `VmHWM` (whole process, interpreter included)."
    )
    return lines


def agree_cell(by: dict) -> str:
    flags = [
        (e, r.get("agree"))
        for e, recs in by.items()
        for r in recs
        if r["round"] == 0 and "agree" in r
    ]
    if not flags:
        return "–"
    bad = [e for e, ok in flags if not ok]
    return "yes" if not bad else "NO: " + ", ".join(bad)


def case_section(doc: dict, key, by: dict) -> list[str]:
    size, variant, case = key
    roof = roof_of(by)
    lines = [f"#### {case} — size {size}, {variant}", ""]
    head = [
        "engine",
        "status",
        "wall (median [min–max])",
        "CPU",
        "CPU use",
        "peak RSS",
        "RSS growth",
        "intermediates written",
        "bytes written",
        "ops",
        "tasks",
        "% of roofline",
        "agree",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in ENGINE_ORDER:
        recs = by.get(e)
        if not recs:
            continue
        runs = ok_runs(recs)
        if not runs:
            r0 = recs[0]
            why = (r0.get("error") or "").replace("|", "/").replace("\n", " ")[:160]
            lines.append(
                f"| {e} | {STATUS_TEXT.get(r0['status'], r0['status'])}: {why} |"
                + " |" * (len(head) - 2)
            )
            continue
        walls = [r["wall_s"] for r in runs]
        cpu = med(recs, "cpu_s")
        wall = med(recs, "wall_s")
        growth = median(
            [
                (r.get("rss_hwm") or 0) - (r.get("rss_start") or 0)
                for r in runs
                if r.get("rss_hwm_reset", True) and r.get("rss_hwm")
            ]
        )
        r0 = next((r for r in recs if r["round"] == 0), runs[0])
        status = f"ok {len(runs)}/{len(recs)}"
        row = [
            e,
            status,
            f"{fmt_s(wall)} [{fmt_s(min(walls))}–{fmt_s(max(walls))}]",
            fmt_s(cpu),
            f"{cpu / wall * 100:.0f}%" if cpu and wall else "–",
            fmt_b(med(recs, "peak_rss")),
            fmt_b(growth),
            fmt_b(med(recs, "intermediate_written")) if e in ("cubego", "cubed") else "–",
            fmt_b(med(recs, "io_write_bytes")),
            str(r0.get("num_ops") if r0.get("num_ops") is not None else "–"),
            str(r0.get("num_tasks") if r0.get("num_tasks") is not None else "–"),
            fmt_pct(pct_roof(recs, roof)),
            ("yes" if r0.get("agree") else f"NO ({r0.get('agree_detail')})")
            if "agree" in r0
            else "–",
        ]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if roof:
        lines.append("- " + roof_text(roof))
    for p in PEERS:
        ratios = round_ratios(by.get("cubego"), by.get(p))
        if ratios:
            lines.append(
                f"- cubego/{p} wall per round: "
                + ", ".join(f"{x:.2f}" for x in ratios)
                + f" (median {median(ratios):.2f})"
            )
        mem = round_ratios(by.get("cubego"), by.get(p), "peak_rss")
        if mem:
            lines.append(f"- cubego/{p} peak RSS per round: " + ", ".join(f"{x:.2f}" for x in mem))
    notes = sorted({n for recs in by.values() for r in recs for n in r.get("notes") or []})
    for n in notes:
        lines.append(f"- note: {n}")
    lines.append("")
    pm = projected_table(by)
    if pm:
        lines += pm
    return lines


def projected_table(by: dict) -> list[str]:
    rows = []
    for e in ("cubego", "cubed"):
        r0 = next((r for r in ok_runs(by.get(e)) if r["round"] == 0), None)
        if not r0 or not r0.get("ops"):
            continue
        for op in r0["ops"]:
            p, m = op.get("projected_mem"), op.get("measured_mem")
            ratio = f"{m / p:.2f}" if p and m is not None else "–"
            # Only cubego's number is per task, like the projection.
            flag = " **over**" if e == "cubego" and p and m is not None and m > p else ""
            rows.append(
                f"| {e} | {op.get('name')} | {op.get('func')} | {op.get('num_tasks')} | "
                f"{fmt_b(p)} | {fmt_b(m)} | {ratio}{flag} |"
            )
    if not rows:
        return []
    return [
        "<details><summary>projected vs measured memory per op (round 1)</summary>",
        "",
        "| engine | op | func | tasks | projected | measured | measured/projected |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "cubego: each task's peak of engine-allocated chunk buffers (max over the op's tasks). "
        "Cubed's threads executor measures nothing per task, so its number is the process's "
        "RSS sampled at 20 Hz while the op's tasks ran: both workers and the interpreter, "
        "against a projection for one task.",
        "",
        "</details>",
        "",
    ]


# ---------------------------------------------------------------- goals and shortfalls


def speedups(g: dict, peer: str, workloads) -> list[tuple[str, float]]:
    out = []
    for (size, variant, case), by in g.items():
        if case.split(".")[0] not in workloads:
            continue
        # The inverse of the headline's cubego/peer (median of the per-round
        # ratios), so that a goal and the headline never disagree: with two
        # rounds, the median of peer/cubego and of cubego/peer are means of
        # inverse ratios, which can fall on both sides of 1.
        r = median(round_ratios(by.get("cubego"), by.get(peer)))
        if r:
            out.append((f"{case} {size} {variant}", 1 / r))
    return out


def goals(doc: dict) -> list[str]:
    """Issue 19's goals, each measured from this run's numbers."""
    g = groups(doc)
    lines = ["| goal | measured | met |", "|---|---|---|"]

    def row(goal, measured, met):
        verdict = "yes" if met else "no" if met is not None else "–"
        lines.append(f"| {goal} | {measured} | {verdict} |")

    def listing(pairs, fmt=lambda x: f"{x:.2f}×", most=6):
        items = [f"{c} {fmt(x)}" for c, x in pairs]
        more = f", and {len(items) - most} more" if len(items) > most else ""
        return ", ".join(items[:most]) + more

    def slow(pairs, limit, fmt=lambda x: f"{x:.2f}×"):
        worst = [(c, x) for c, x in sorted(pairs, key=lambda p: p[1]) if x < limit]
        return f" (short: {listing(worst, fmt)})" if worst else ""

    every = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8")
    sd = speedups(g, "dask", every)
    faster = sum(1 for _, x in sd if x >= 1)
    row(
        "wall ≤ Dask's on every case",
        f"{faster} of {len(sd)} cases" + slow(sd, 1),
        faster == len(sd) if sd else None,
    )
    s = speedups(g, "cubed", ("W2", "W3", "W4", "W5", "W6"))
    m = median([x for _, x in s])
    row(
        "median over W2–W6: ≥ 5× faster than Cubed",
        f"{fmt_r(m)}× over {len(s)} cases" if m else "no paired runs",
        m >= 5 if m else None,
    )
    for peer, target in (("cubed", 20), ("dask", 3)):
        m7 = median([x for _, x in speedups(g, peer, ("W7",))])
        row(
            f"W7: ≥ {target}× faster than {peer}",
            f"{fmt_r(m7)}×" if m7 else "no paired runs",
            m7 >= target if m7 else None,
        )
    mem, held = [], []
    for (size, variant, case), by in g.items():
        r = median(round_ratios(by.get("cubego"), by.get("dask"), "peak_rss"))
        if r is None:
            continue
        mem.append((f"{case} {size} {variant}", r))
        if holds_data(by):
            held.append((f"{case} {size} {variant}", r))
    low = sum(1 for _, x in mem if x <= 1)
    row(
        "peak RSS ≤ Dask's on every case",
        f"{low} of {len(mem)} cases (median {fmt_r(median([x for _, x in mem]))}×)"
        + (
            f" (over: {listing([(c, x) for c, x in mem if x > 1])})"
            if any(x > 1 for _, x in mem)
            else ""
        ),
        low == len(mem) if mem else None,
    )
    low = sum(1 for _, x in held if x <= 0.3)
    row(
        f"peak RSS ≤ 0.3× Dask's where Dask holds data (its RSS growth ≥ {HOLDS_DATA:g}× the "
        f"input and ≥ {fmt_b(HOLDS_DATA_MIN)})",
        listing(held) if held else "no such case",
        low == len(held) if held else None,
    )
    pcts = []
    for (size, variant, case), by in g.items():
        p = pct_roof(by.get("cubego"), roof_of(by))
        if p is not None:
            pcts.append((f"{case} {size} {variant}", p))
    good = sum(1 for _, x in pcts if x >= 0.75)
    row(
        "≥ 75% of the roofline on every case",
        f"{good} of {len(pcts)} cases (median {fmt_pct(median([x for _, x in pcts]))})"
        + slow(pcts, 0.75, fmt_pct)
        if pcts
        else "no roofline in these results",
        good == len(pcts) if pcts else None,
    )
    w8 = []
    for (size, variant, case), by in g.items():
        roof = roof_of(by)
        wall = med(by.get("cubego"), "wall_s")
        if case.startswith("W8") and roof and roof["read_kind"] == "cold" and wall:
            w8.append((f"{case} {size} {variant}", roof["io_s"] / wall))
    good = sum(1 for _, x in w8 if x >= 0.85)
    row(
        "W8 cold read and copy ≥ 85% of the disk probe (I/O seconds at the probe's speeds / wall)",
        listing(w8, fmt_pct, most=8) if w8 else "no W8 case with a cold roofline in these results",
        good == len(w8) if w8 else None,
    )
    n_ops = over = 0
    for by in g.values():
        for r in ok_runs(by.get("cubego")):
            if r["round"] != 0:
                continue
            for op in r.get("ops") or []:
                if op.get("projected_mem") and op.get("measured_mem") is not None:
                    n_ops += 1
                    over += op["measured_mem"] > op["projected_mem"]
    row(
        "cubego: measured ≤ projected for every op",
        f"{n_ops - over} of {n_ops} ops",
        over == 0 if n_ops else None,
    )
    if doc["meta"].get("constrained"):
        fails = []
        for (_, _, case), by in g.items():
            recs = by.get("cubego") or []
            if recs and not ok_runs(recs):
                fails.append(case)
        row(
            f"constrained ({fmt_b(doc['meta']['mem_limit'])}): cubego passes every case",
            f"failed: {', '.join(fails)}" if fails else "all passed",
            not fails,
        )
    return lines


def constrained_table(doc: dict) -> list[str]:
    g = groups(doc)
    engines = [e for e in ENGINE_ORDER if any(e in v for v in g.values())]
    lines = [
        "| size | variant | case | " + " | ".join(engines) + " |",
        "|" + "---|" * (3 + len(engines)),
    ]
    for (size, variant, case), by in g.items():
        cells = []
        for e in engines:
            recs = by.get(e)
            if not recs:
                cells.append("–")
            elif ok_runs(recs):
                peak = max((r.get("cgroup") or {}).get("max_usage", 0) for r in ok_runs(recs))
                cells.append(f"pass ({fmt_b(peak)} cgroup max)" if peak else "pass")
            elif recs[0]["status"] == "skipped":
                cells.append(f"skipped ({recs[0].get('error')})")
            else:
                cells.append("FAIL: " + STATUS_TEXT.get(recs[0]["status"], recs[0]["status"]))
        lines.append(f"| {size} | {variant} | {case} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("cgroup max = `memory.max_usage_in_bytes`, which includes page cache.")
    return lines


def shortfalls(doc: dict) -> list[str]:
    """Where cubego falls short, each with the numbers that explain it."""
    g = groups(doc)
    out = []
    for (size, variant, case), by in g.items():
        recs = by.get("cubego")
        if not recs:
            continue
        where = f"**{case}** ({size}, {variant})"
        runs = ok_runs(recs)
        if not runs:
            r0 = recs[0]
            out.append(
                f"- {where}: {STATUS_TEXT.get(r0['status'], r0['status'])} — "
                f"{(r0.get('error') or '').splitlines()[0][:300]}"
            )
            continue
        r0 = next((r for r in runs if r["round"] == 0), runs[0])
        reasons = []
        for p in ("cubed", "dask"):
            ratio = median(round_ratios(recs, by.get(p)))
            if ratio is None:
                continue
            target = (
                1 / 20
                if case.startswith("W7") and p == "cubed"
                else 1 / 3
                if case.startswith("W7")
                else 1 / 5
                if p == "cubed" and case.split(".")[0] in ("W2", "W3", "W4", "W5", "W6")
                else 1.0
                if p == "dask"
                else None
            )
            if target is not None and ratio > target:
                reasons.append(f"{fmt_r(ratio)}× {p}'s wall time (goal ≤ {fmt_r(target)}×)")
        mem = median(round_ratios(recs, by.get("dask"), "peak_rss"))
        target = 0.3 if holds_data(by) else 1.0
        if mem is not None and mem > target:
            reasons.append(
                f"peak RSS {fmt_r(mem)}× Dask's (goal ≤ {target:g}×"
                + (", as Dask holds the data)" if target < 1 else ")")
            )
        pct = pct_roof(recs, roof_of(by))
        if pct is not None and pct < 0.75:
            reasons.append(f"{pct * 100:.0f}% of the roofline ({roof_of(by)['bound']}; goal ≥ 75%)")
        over = [
            op
            for op in r0.get("ops") or []
            if op.get("projected_mem") and (op.get("measured_mem") or 0) > op["projected_mem"]
        ]
        if over:
            reasons.append(
                "measured > projected in "
                + ", ".join(
                    f"{o['name']} ({o['func']}: {fmt_b(o['measured_mem'])} > "
                    f"{fmt_b(o['projected_mem'])})"
                    for o in over
                )
            )
        if not reasons:
            continue
        why = explain(recs, by, r0)
        because = ". Why: " + "; ".join(why) if why else "."
        out.append(f"- {where}: " + "; ".join(reasons) + because)
    return out or ["- no shortfalls against the goals in this run"]


def limits(doc: dict) -> list[str]:
    """One line per case: what bounds cubego there now, from this run's numbers."""
    out = []
    for (size, variant, case), by in groups(doc).items():
        recs = by.get("cubego")
        runs = ok_runs(recs)
        if not runs:
            continue
        r0 = next((r for r in runs if r["round"] == 0), runs[0])
        roof = roof_of(by)
        wall, cpu = med(recs, "wall_s"), med(recs, "cpu_s")
        parts = []
        if roof:
            parts.append(
                f"{fmt_pct(pct_roof(recs, roof))} of the roofline ({fmt_s(roof['seconds'])}, "
                f"{roof['bound']}: I/O {fmt_s(roof['io_s'])}, CPU {fmt_s(roof['cpu_s'])})"
            )
        else:
            parts.append("no roofline in these results")
        if cpu and wall:
            cores = (roof or {}).get("cores") or doc["meta"].get("workers") or 2
            parts.append(f"{cpu / wall:.1f} of {cores} cores busy")
        inter = med(recs, "intermediate_written")
        if inter is not None:
            read = r0.get("read_bytes") or 0
            parts.append(
                f"{fmt_b(inter)} of intermediates"
                + (f" ({inter / read:.2f}× the input)" if read and inter > 1e6 else "")
            )
        if roof and roof.get("numpy_cpu_s") and cpu:
            parts.append(
                f"CPU {fmt_s(cpu)} = {cpu / roof['numpy_cpu_s']:.1f}× numpy's "
                f"{fmt_s(roof['numpy_cpu_s'])} for the same arithmetic"
            )
        elif cpu:
            parts.append(f"CPU {fmt_s(cpu)}")
        out.append(f"- **{case}** ({size}, {variant}): " + "; ".join(parts))
    return out or ["- no cubego results"]


def explain(recs: list[dict], by: dict, r0: dict) -> list[str]:
    """What in cubego's own numbers accounts for a shortfall."""
    why = []
    wall, cpu = med(recs, "wall_s"), med(recs, "cpu_s")
    inter = med(recs, "intermediate_written") or 0
    read = r0.get("read_bytes") or 0
    if inter > 1e6 and inter > 0.05 * max(read, 1):
        why.append(
            f"wrote {fmt_b(inter)} of intermediates between its {r0.get('num_ops')} ops"
            + (f" ({inter / read:.2f}× the input)" if read else "")
        )
    # The heavy ops (most measured memory: the ones reading the inputs) and their tasks.
    ops = [o for o in r0.get("ops") or [] if o.get("measured_mem")]
    top = max((o["measured_mem"] for o in ops), default=0)
    heavy = [o for o in ops if o["measured_mem"] >= 0.5 * top]
    tasks = sorted({o.get("num_tasks") or 0 for o in heavy})
    if cpu and wall:
        if cpu / wall < 1.3:
            detail = ""
            if heavy:
                detail = f" (its heaviest ops ran {'/'.join(map(str, tasks))} task(s) each"
                detail += ", fewer than the 2 workers)" if tasks[0] < 2 else ")"
            why.append(f"kept {cpu / wall:.1f} of 2 cores busy{detail}")
        peers = [(p, med(by.get(p), "cpu_s")) for p in ("cubed", "dask", "numpy")]
        peers = [(p, c) for p, c in peers if c]
        if peers:
            p, c = min(peers, key=lambda pc: pc[1])
            if cpu > 1.5 * c:
                why.append(f"spent {cpu / c:.1f}× the CPU time of {p} ({fmt_s(cpu)} vs {fmt_s(c)})")
    for n in sorted({n for r in ok_runs(recs) for n in r.get("notes") or []}):
        why.append(n)
    return why


def write(results_dir: str, md_path: str, plots_dir: str) -> None:
    docs = load(results_dir)
    human = ""
    if os.path.exists(md_path):
        with open(md_path) as f:
            text = f.read()
        if HUMAN_MARKER in text:
            human = text.split(HUMAN_MARKER, 1)[1]
    if not human.strip():
        human = "\n\n_(Notes by people: interpretation, caveats, links to issues.)_\n"
    os.makedirs(plots_dir, exist_ok=True)
    for pattern in ("memory_*.png", "projected_*.png"):
        for old in glob.glob(os.path.join(plots_dir, pattern)):
            os.remove(old)
    lines = [
        "# cubego benchmark results",
        "",
        "Generated by `benchmarks/run.py` from `benchmarks/results/*.json` (see "
        "`benchmarks/README.md`); edit only the human notes at the end. Goals are from issue "
        "19 and `reference/perf.md`; they are reported against, not tuned to.",
        "",
    ]
    for doc in docs:
        label = doc["meta"]["label"]
        lines += [f"## {label} ({doc['meta']['date']})", ""]
        lines += machine_section(doc)
        lines += ["", "### Headline", ""]
        lines += headline(doc)
        lines += ["", "### Goals", ""]
        if set(doc["meta"]["sizes"]) <= {"T", "Q"}:
            lines += [
                "_Sizes T and Q are smoke runs: most timings are a few hundred milliseconds, "
                "dominated by start-up and per-computation overheads, and peak RSS is dominated "
                "by the interpreter. Judge the goals on sizes M and L._",
                "",
            ]
        lines += goals(doc)
        if doc["meta"].get("constrained"):
            lines += ["", "### Constrained mode: pass/fail", ""]
            lines += constrained_table(doc)
        lines += ["", "### Where cubego falls short and why", ""]
        lines += shortfalls(doc)
        lines += ["", "### What limits each case now", ""]
        lines += limits(doc)
        lines += ["", "### Per case", ""]
        for key, by in groups(doc).items():
            lines += case_section(doc, key, by)
        pngs = plots(doc, plots_dir)
        if pngs:
            lines += ["### Plots", ""]
            rel = os.path.relpath(plots_dir, os.path.dirname(md_path))
            for title, p in pngs:
                lines.append(f"![{title}]({rel}/{os.path.basename(p)})")
                lines.append("")
    lines += ["## Human notes", "", HUMAN_MARKER]
    with open(md_path, "w") as f:
        f.write("\n".join(lines) + human)


# ---------------------------------------------------------------- plots


def plots(doc: dict, plots_dir: str) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label = doc["meta"]["label"]
    g = groups(doc)
    out = []
    by_sv: dict = {}
    for (size, variant, case), by in g.items():
        by_sv.setdefault((size, variant), []).append((case, by))
    for (size, variant), items in by_sv.items():
        items = [(c, by) for c, by in items if any(ok_runs(v) for v in by.values())]
        if not items:
            continue
        n = len(items)
        cols = min(3, n)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.4 * rows), squeeze=False)
        for ax, (case, by) in zip(axes.flat, items, strict=False):
            for e in ENGINE_ORDER:
                r0 = next((r for r in ok_runs(by.get(e)) if r["round"] == 0), None)
                if not r0 or not r0.get("timeline"):
                    continue
                t = [p[0] for p in r0["timeline"]]
                m = [p[1] / 1e9 for p in r0["timeline"]]
                ax.plot(t, m, label=e, color=COLORS.get(e), lw=1.3)
                if r0.get("timed"):
                    ax.axvline(r0["timed"][1], color=COLORS.get(e), lw=0.6, ls=":")
            ax.axvline(0, color="k", lw=0.5, ls="--")
            ax.set_title(case, fontsize=10)
            ax.set_xlabel("s since the timed section started")
            ax.set_ylabel("RSS (GB)")
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.suptitle(f"memory over time, round 1 — {label}, size {size}, {variant}", fontsize=11)
        fig.tight_layout()
        path = os.path.join(plots_dir, f"memory_{label}_{size}_{variant}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append((f"memory over time, {size} {variant}", path))
    pts = {"cubego": [], "cubed": []}
    for (_, _, case), by in g.items():
        for e in pts:
            r0 = next((r for r in ok_runs(by.get(e)) if r["round"] == 0), None)
            for op in (r0 or {}).get("ops") or []:
                if op.get("projected_mem") and op.get("measured_mem"):
                    pts[e].append((op["projected_mem"], op["measured_mem"], case))
    if any(pts.values()):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
        for ax, e in zip(axes, pts, strict=True):
            xs = [p[0] / 1e6 for p in pts[e]]
            ys = [p[1] / 1e6 for p in pts[e]]
            if xs:
                # Measured values far below every projection (a few bytes) sit on the floor.
                lo = min(xs) / 100
                hi = max(xs + ys) * 1.25
                ys = [max(y, lo) for y in ys]
                ax.scatter(xs, ys, s=14, color=COLORS[e], alpha=0.7)
                ax.set_xlim(lo, hi)
                ax.set_ylim(lo, hi)
                ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="measured = projected")
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.legend(fontsize=8)
            ax.set_title(
                e
                + (
                    " (task's allocated chunk buffers)"
                    if e == "cubego"
                    else " (process RSS while the op ran)"
                ),
                fontsize=10,
            )
            ax.set_xlabel("projected memory per op (MB)")
            ax.set_ylabel("measured (MB)")
        fig.suptitle(f"projected vs measured memory per op, round 1 — {label}", fontsize=11)
        fig.tight_layout()
        path = os.path.join(plots_dir, f"projected_{label}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        out.append(("projected vs measured per op", path))
    return out
