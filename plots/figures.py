"""What the drawing modules share: matplotlib (loaded only when a figure is drawn), the stage
colours, the heading and the line naming the results file, saving a figure, noting one that is not
drawn, and the grouped bar chart. Imported by plot.py, heat_plot.py and sweep.py; it imports none
of them, nor matplotlib until pyplot() is called."""

DPI = 150

# One colour per stage, the same in every figure; grey is kept for plot.py's alternatives.
STAGE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                "#bcbd22", "#17becf"]


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def subtitle(doc):
    parts = [doc["gpu"], doc["date"], f"commit {doc['commit']}"]
    if doc.get("nvcc"):
        parts.append(f"nvcc {doc['nvcc']}")
    if doc.get("driver"):
        parts.append(f"driver {doc['driver']}")
    return "   ·   ".join(parts)


def heading(fig, ax, doc, title, below=None):
    fig.suptitle(title, fontsize=14, fontweight="bold")
    ax.set_title(below or subtitle(doc), fontsize=9.5, color="0.3")


def save(fig, path, doc, what):
    fig.savefig(path, dpi=DPI, metadata={"Title": what, "Source": f"{doc['gpu']}, {doc['date']}, "
                                                                  f"commit {doc['commit']}"})
    pyplot().close(fig)
    return path


def not_drawn(paths, why, note):
    """Notes that the figures at `paths` are not drawn, and removes old copies of them, which
    would otherwise pass for figures of this file."""
    msg = f"{why}: {', '.join(p.name for p in paths)} not drawn"
    stale = [p for p in paths if p.exists()]
    for p in stale:
        p.unlink()
    if stale:
        msg += f" (removed the old {', '.join(str(p) for p in stale)})"
    note(msg)


def grouped_bars(ax, series, ns, fmt, tick_label, line, legend=None):
    """Draws one compact group of bars per n (only the series measured at that n), labels each
    bar with fmt(value) (or the series' own labels[n]), draws a dashed reference line at
    line = (y, label) unless line is None, and returns the largest value. `legend`: keyword
    arguments for ax.legend that replace the defaults (outside, right; "higher is better")."""
    width = 1.0
    most = max(sum(1 for s in series if n in s["values"] or n in s["failed"]) for n in ns)
    pitch = most * width + 1.6
    handles, top = {}, 0.0
    for g, n in enumerate(ns):
        here = [s for s in series if n in s["values"] or n in s["failed"]]
        center = g * pitch
        for j, s in enumerate(here):
            x = center + (j - (len(here) - 1) / 2) * width
            if n not in s["values"]:  # failed its check: an empty slot that says so
                ax.text(x, 0.01, "check failed", rotation=90, ha="center", va="bottom", fontsize=8.5,
                        color="#b00020", fontweight="bold", transform=ax.get_xaxis_transform())
                handles.setdefault(s["label"], ax.bar(x, 0, width * 0.92, zorder=3, **s["style"]))
                continue
            v = s["values"][n]
            bar = ax.bar(x, v, width * 0.92, zorder=3, **s["style"])
            handles[s["label"]] = bar
            label = s["labels"][n] if "labels" in s else fmt(v)
            ax.text(x, v, label, rotation=90, ha="center", va="bottom", fontsize=8.5, zorder=6,
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1.0))
            top = max(top, v)
    ax.set_xticks([g * pitch for g in range(len(ns))])
    ax.set_xticklabels([tick_label(n) for n in ns], fontsize=10)
    pad = max(0.0, 8 - len(ns) * pitch) / 2  # keep a lone bar from filling the axes
    ax.set_xlim(-pitch / 2 - pad, (len(ns) - 0.5) * pitch + pad)
    ax.grid(axis="y", color="0.88", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    refs, names = [], []
    if line is not None:
        refs, names = [ax.axhline(line[0], color="black", linestyle="--", linewidth=1.1, zorder=5)], [line[1]]
    # The legend: the reference line, then the series in order (stage by stage, yours beside
    # the solution, then the alternatives).
    ax.legend(refs + [handles[s["label"]] for s in series if s["label"] in handles],
              names + [s["label"] for s in series if s["label"] in handles],
              **{**dict(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False,
                        title="higher is better", title_fontsize=9), **(legend or {})})
    return top
