"""Per-file plots of tools/shoal-report: the busiest links (bars), their
utilisation over time (/link_util), and a timeline of chosen GPUs. Split from
tools/shoal-report to keep each file readable. The callers pass `plt` in, so
matplotlib is imported only when plots are drawn.
"""

import os

import shoal_h5 as sh

np = sh.np

KIND_COLORS = {"fwd": "#4c72b0", "bwd": "#55a868", "optimizer": "#8172b2", "other": "#999999"}
TYPE_COLORS = {"EP": "#c44e52", "PP": "#dd8452", "DP": "#937860", "TP": "#da8bc3",
               "OTHER": "#8c8c8c", "CP": "#64b5cd"}
TIER_COLORS = ["#4c72b0", "#55a868", "#c44e52", "#8172b2"]


def time_axis(max_ps):
    """(scale, unit) for an axis whose values reach max_ps."""
    if max_ps >= 1e9:
        return 1e9, "ms"
    if max_ps >= 1e6:
        return 1e6, "us"
    return 1e3, "ns"


def save(fig, path, written, title=None):
    """Writes a PNG; `title` goes into its Title text chunk too, where scripts
    (and the tests) can read what the plot says without looking at it."""
    fig.savefig(path, dpi=100, bbox_inches="tight",
                metadata={"Title": title} if title else None)
    import matplotlib.pyplot as plt
    plt.close(fig)
    written.append(path)


HEATMAP_COLUMNS = 1200  # at most this many time columns: about a pixel each


def link_ends(src, dst, tier, tier_names, node_names=None):
    """'leaf 0 -> spine 1' by /nodes names; '72→0 host' by node ids in files
    written before /nodes."""
    if node_names:
        return f"{node_names.get(int(src), src)} -> {node_names.get(int(dst), dst)}"
    return f"{int(src)}→{int(dst)} {sh.name_of(tier_names, tier, 'tier ')}"


def link_label(row, tier_names, node_names=None):
    """'link 129: leaf 0 -> spine 1' from a /links row (id, src, dst, tier),
    as the bars of plot_links name them."""
    return (f"link {int(row['id'])}: "
            f"{link_ends(row['src'], row['dst'], row['tier'], tier_names, node_names)}")


def link_util_matrix(util, ends=None, tier_names=sh.TIER_NAMES, top=20,
                     max_columns=HEATMAP_COLUMNS, node_names=None):
    """The heat map of /link_util: (matrix, labels, link ids, k). Row r is
    link ids[r], the `top` links that sent the most bytes in /link_util first
    (ties by id); column c the mean utilisation of bins c*k ... c*k+k-1 from
    t = 0, where k is the fewest bins per column that keeps `max_columns`
    columns or fewer. Averaging keeps the scale (0..1 stays 0..1) and every
    bin's bytes counted, where drawing one column per bin would drop bins
    narrower than a pixel, peaks included. A bin missing from the table is 0;
    the last column averages only the bins there are. `ends` (a frame of
    /links id, src, dst, tier) names the links, by `node_names` (/nodes) where
    given; without it, 'link ID'."""
    sent = util.groupby("link")["bytes"].sum()
    order = sorted(sent.index, key=lambda i: (-int(sent[i]), int(i)))[:max(1, top)]
    ids = np.asarray(order, dtype=np.int64)
    bins = int(util["bin"].max()) + 1
    row_of = {int(i): r for r, i in enumerate(ids)}
    mine = util[util["link"].isin(ids)]
    full = np.zeros((len(ids), bins))
    np.add.at(full, (mine["link"].map(row_of).to_numpy(), mine["bin"].to_numpy(np.int64)),
              mine["utilization"].to_numpy(float))
    k = max(1, -(-bins // max(1, max_columns)))
    columns = -(-bins // k)
    padded = np.full((len(ids), columns * k), np.nan)
    padded[:, :bins] = full
    matrix = np.nanmean(padded.reshape(len(ids), columns, k), axis=2)
    names = {}
    if ends is not None and len(ends):
        names = {int(r["id"]): link_label(r, tier_names, node_names)
                 for r in ends.to_dict("records")}
    labels = [names.get(int(i), f"link {int(i)}") for i in ids]
    return matrix, labels, ids, k


def plot_link_util_over_time(plt, run, label, tag, out, written, notes):
    """/link_util as a heat map: a row per link (the busiest on top), a column
    per time bin, colour the bin's utilisation. A stopped run ends with a
    hatched 'not simulated' strip after a red line at the stop."""
    name = f"link_util_time_{tag}.png"
    util = run.get("link_util")
    if util is None:
        why = " (a .partial file: they are written at the end)" \
            if run.get("stopped") and "/link_util" in run.get("empty_tables", []) else ""
        notes.append(f"{name}: skipped (no /link_util rows{why})")
        return
    bin_ps = run.get("link_util_bin_ps") or 0
    matrix, labels, ids, k = link_util_matrix(util, run.get("link_ends"), run["tier_names"],
                                              run.get("top", 20), node_names=run.get("node_names"))
    width_ps = (bin_ps or 1) * k
    data_end = matrix.shape[1] * width_ps
    stop = run.get("stopped_at_ps") if run.get("stopped") else None
    span = max(data_end, stop or 0)
    scale, unit = time_axis(span)
    fig, ax = plt.subplots(figsize=(10, 0.24 * len(ids) + 1.8))
    hot = float(np.nanmax(matrix)) if matrix.size else 0.0
    image = ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap="viridis",
                      vmin=0.0, vmax=1.0, extent=(0, data_end / scale, len(ids) - 0.5, -0.5))
    bar = fig.colorbar(image, ax=ax, pad=0.01, fraction=0.04,
                       extend="max" if hot > 1.0 + 1e-9 else "neither")
    bar.set_label("utilisation", fontsize=8)
    ax.set_yticks(range(len(ids)))
    ax.set_yticklabels(labels, fontsize=7)
    per = sh.fmt_time(bin_ps) if bin_ps else "bin"
    ax.set_xlabel(f"time ({unit}); a column per {per} bin" if k == 1 else
                  f"time ({unit}); a column is the mean of {k} bins of {per}")
    title = f"{label}: utilisation of the {len(ids)} busiest links over time"
    if run.get("stopped"):
        if stop is not None:
            why = "completed = 0" if "completed" in run["meta"] else ".partial file"
            title += f"; STOPPED at {sh.fmt_time(stop)} ({why})"
            # Some room past the data, hatched, so the line is not the frame.
            # The stop lies in the last bin (bins are written up to it).
            right = span * 1.04 / scale
            ax.axvspan(span / scale, right, facecolor="white", edgecolor="#999999",
                       hatch="//", linewidth=0)
            ax.axvline(stop / scale, color="#d62728", linestyle="--", linewidth=1.5)
            ax.text(stop / scale, -0.5, " stopped", color="#d62728", fontsize=8,
                    ha="left", va="bottom")
            ax.set_xlim(0, right)
        else:
            title += f"; {run['stopped']}"
    ax.set_title(title, fontsize=10, pad=14 if stop is not None else 6)
    save(fig, os.path.join(out, name), written, title=title)


def plot_links(plt, run, label, tag, out, written, notes):
    links = run["links"]
    if links is None or links.empty:
        notes.append(f"link_util_{tag}.png: skipped (no /links rows, or nothing finished)")
        return
    fig, ax = plt.subplots(figsize=(max(6, 0.42 * len(links) + 2), 4.4))
    x = np.arange(len(links))
    classes = [c for c in (f"bytes_c{k}" for k in range(8)) if c in links.columns]
    used = [c for c in classes if links[c].sum() > 0]
    denom = links["bytes"].astype(float).where(links["bytes"] > 0)
    if len(used) > 1:
        cmap = plt.get_cmap("viridis", 8)
        bottom = np.zeros(len(links))
        for c in used:
            share = (links[c].astype(float) / denom).fillna(0).to_numpy() * links["util"].to_numpy()
            k = int(c[len("bytes_c"):])
            ax.bar(x, share, bottom=bottom, color=cmap(k), label=f"class {k}")
            bottom += share
    else:
        colors = [TIER_COLORS[int(t) % len(TIER_COLORS)] for t in links["tier"]]
        ax.bar(x, links["util"], color=colors)
        tiers = sorted(set(int(t) for t in links["tier"]))
        for t in tiers:
            ax.bar([0], [0], color=TIER_COLORS[t % len(TIER_COLORS)],
                   label=sh.name_of(run["tier_names"], t, "tier "))
    ax.scatter(x, links["busy_frac"], marker="_", s=300, color="black", label="busy / phase end",
               zorder=3)
    node_names = run.get("node_names")
    names = [link_ends(s, d, t, run["tier_names"], node_names)
             .replace(" -> " if node_names else " ", "\n-> " if node_names else "\n", 1)
             for s, d, t in zip(links["src"], links["dst"], links["tier"])]
    ax.set_xticks(x)
    ax.set_xticklabels(names, fontsize=7, rotation=90)
    ax.set_ylabel("bytes / (rate × phase end)")
    ax.set_title(f"{label}: the {len(links)} busiest links "
                 f"(phase end {sh.fmt_time(run['phase_end_ps'])})")
    ax.set_ylim(0, max(1.0, float(links["util"].max()), float(links["busy_frac"].max())) * 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    save(fig, os.path.join(out, f"link_util_{tag}.png"), written)


def spans_by_color(frame, name_of, column, colors, end_of_run, scale, seen):
    """{(color, unfinished): [(start, width)]} of a frame of slices, in axis units."""
    groups = {}
    start = frame["start_ps"].to_numpy(np.int64)
    end = frame["end_ps"].to_numpy(np.int64)
    unfinished = end < 0
    end = np.where(unfinished, np.maximum(end_of_run, start), end)
    for code, s, e, u in zip(frame[column].to_numpy(), start, end, unfinished):
        name = name_of(code)
        color = colors.get(name, "#8c8c8c")
        seen[name] = color
        if u:
            seen["unfinished"] = None
        groups.setdefault((color, bool(u)), []).append((s / scale, max(e - s, 0) / scale))
    return groups


def plot_timeline(plt, run, label, tag, out, written, notes):
    from matplotlib.patches import Patch
    gpus = run["gpus_shown"]
    if not gpus:
        notes.append(f"timeline_{tag}.png: skipped (none of the chosen GPUs is in the run)")
        return
    compute, comm = run["compute"], run["comm"]
    if comm is None:
        notes.append(f"timeline_{tag}.png: {os.path.basename(run['path'])} has no /flows: "
                     "compute only")
    end_of_run = max(1, run["phase_end_ps"])
    scale, unit = time_axis(end_of_run)
    # Per GPU: a compute row, then a row per coflow type it has flows in.
    # Coflows of one type can overlap (DP buckets): translucent, so overlaps
    # show darker; unfinished ones run to the phase end, hatched.
    rows = []  # (y label, {(color, unfinished): [(start, width)]})
    seen = {}
    kinds = run["kind_names"]

    def type_name(code):  # a .partial file's coflows have no /coflows row, so no type
        return "no /coflows row" if code == sh.NO_LABEL else sh.name_of(run["type_names"], code)
    for g in gpus:
        if compute is not None:
            mine = compute[compute["gpu"] == g]
            rows.append((f"GPU {g} compute", spans_by_color(
                mine, lambda code: sh.name_of(kinds, code, "kind"), "kind", KIND_COLORS,
                end_of_run, scale, seen)))
        if comm is not None:
            mine = comm[comm["gpu"] == g]
            codes = sorted(int(t) for t in mine["type"].unique())
            if not codes:
                rows.append((f"GPU {g} comm", {}))
            for code in codes:
                name = "coflows" if code == sh.NO_LABEL else type_name(code)
                rows.append((f"GPU {g} {name}", spans_by_color(
                    mine[mine["type"] == code], type_name, "type",
                    TYPE_COLORS, end_of_run, scale, seen)))
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(rows) + 1.6))
    for y, (name, groups) in enumerate(rows):
        translucent = not name.endswith("compute")
        for (color, unfinished), spans in groups.items():
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=color,
                           alpha=0.55 if translucent else 1.0,
                           edgecolor=color, linewidth=0.4,
                           hatch="//" if unfinished else None)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, end_of_run / scale)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(f"{label}: compute and coflows per GPU")
    ax.grid(axis="x", alpha=0.3)
    if seen:
        handles = [Patch(color=c, label=n) for n, c in seen.items() if c is not None]
        if "unfinished" in seen:
            handles.append(Patch(facecolor="white", edgecolor="#555555", hatch="//",
                                 label="unfinished"))
        ax.legend(handles=handles, fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, os.path.join(out, f"timeline_{tag}.png"), written)


def plot_scale(plt, table, out, written):
    """`shoal scale -o` (docs/scaling.md): the predicted speedup against the
    ideal and the bounds on any engine, the parallel efficiency, and where
    each rank count's loop goes (the busiest rank's events, the reductions,
    the exchanges)."""
    ranks = table["ranks"].to_numpy()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(ranks, table["speedup"], "o-", label="predicted speedup")
    # The bounds without windows (docs/scaling.md), where the table has them:
    # the one-rank loop over each, with messages free.
    one_rank_loop = (table["speedup"] * table["loop_s"]).iloc[0]
    for column, style, color, label in (
            ("fewest_work_s", "s--", "tab:brown", "bound: windows as few as possible"),
            ("causal_work_s", "v--", "tab:orange", "bound: no windows, this lookahead"),
            ("critical_path_s", "^--", "tab:purple", "bound: any engine")):
        if column in table.columns:
            rows = table[table[column] > 0]
            left.plot(rows["ranks"], one_rank_loop / rows[column], style, color=color,
                      linewidth=0.8, markersize=4, label=label)
    left.plot(ranks, ranks, ":", color="grey", label="ideal")
    left.set_xscale("log", base=2)
    left.set_yscale("log", base=2)
    for axis in (left.xaxis, left.yaxis):
        axis.set_major_formatter(matplotlib_ticker().FormatStrFormatter("%g"))
    left.set_xlabel("ranks")
    left.set_ylabel("speedup over one rank")
    eff = left.twinx()
    eff.plot(ranks, 100 * table["efficiency"], "s--", color="tab:red", label="efficiency")
    eff.axhline(50, color="tab:red", linewidth=0.5)
    eff.set_ylabel("parallel efficiency (%)", color="tab:red")
    eff.set_ylim(0, 105)
    rec = table[table["recommended"] == 1]
    if len(rec):
        left.axvline(rec["ranks"].iloc[0], color="tab:green", linewidth=1,
                     label=f"recommended: {rec['ranks'].iloc[0]}")
    left.legend(loc="upper left", fontsize=8)
    x = np.arange(len(ranks))
    bottom = np.zeros(len(ranks))
    for column, label in (("work_s", "busiest rank's events"), ("reduce_s", "reductions"),
                          ("exchange_s", "exchanges")):
        right.bar(x, table[column], bottom=bottom, label=label)
        bottom += table[column].to_numpy()
    right.set_ylim(0, 1.1 * bottom.max())
    right.set_xticks(x, [str(r) for r in ranks])
    right.set_xlabel("ranks")
    right.set_ylabel("predicted loop (s)")
    right.legend(fontsize=8)
    title = (f"shoal scale: partition {table['partition'].iloc[0]}; "
             + ", ".join(f"{r}: {s:.2f}x" for r, s in zip(ranks, table["speedup"])))
    fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(wspace=0.45)
    save(fig, os.path.join(out, "scaling.png"), written, title)


def matplotlib_ticker():
    import matplotlib.ticker
    return matplotlib.ticker
