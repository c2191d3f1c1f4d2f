"""The seed scripts' print helpers (print_header, print_table, print_observations, fmt_time),
written to print exactly what the workspace's `console` crate prints (crates/console/src/lib.rs):
the same rules, the same widths, the same wrapping (a design of this workspace: SPEC.md leaves
headers, tables and observation lists to it). Only what the seed scripts need."""
import math
import unicodedata

WRAP_WIDTH = 100
NO_LINE_START = "，。、；：！？）》」』】”’,.;:!?)]%×"


def display_width(s):
    """Terminal columns: East Asian Wide/Fullwidth count 2, combining marks 0, the rest 1."""
    w = 0
    for c in s:
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            continue
        w += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return w


def print_header(title):
    rule = "=" * max(display_width(title), 1)
    print(f"\n{rule}\n{title}\n{rule}")


def _numeric(cell):
    digits = cell[1:] if cell.startswith("-") else cell
    return digits[:1].isascii() and digits[:1].isdigit()


def print_table(headers, rows):
    """A Markdown pipe table; columns whose every body cell starts with a digit are right-aligned."""
    ncol = max([len(headers)] + [len(r) for r in rows])
    grid = [[str(c) for c in headers] + [""] * (ncol - len(headers))]
    grid += [[str(c) for c in r] + [""] * (ncol - len(r)) for r in rows]
    widths = [max(display_width(row[j]) for row in grid) for j in range(ncol)]
    right = [bool(rows) and all(j < len(r) and _numeric(str(r[j])) for r in rows) for j in range(ncol)]

    def line(cells):
        out = []
        for j, c in enumerate(cells):
            pad = " " * (widths[j] - display_width(c))
            out.append(f" {pad}{c} " if right[j] else f" {c}{pad} ")
        return "|" + "|".join(out) + "|"

    lines = [line(grid[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [line(r) for r in grid[1:]]
    print("\n" + "\n".join(lines))


def _units(text):
    units, start, prev_wide, prev_space = [], 0, False, False
    for i, c in enumerate(text):
        wide = display_width(c) > 1
        glue = c in NO_LINE_START
        if i > start and not glue and (wide or prev_wide or (prev_space and c != " ")):
            units.append(text[start:i])
            start = i
        prev_wide, prev_space = wide, c == " "
    if start < len(text):
        units.append(text[start:])
    return units


def wrap(text, width):
    lines, line = [], ""
    for unit in _units(text):
        if line.strip() and display_width(line.rstrip()) + display_width(unit.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += unit.lstrip() if not line else unit
    if line.strip():
        lines.append(line.rstrip())
    return lines


def print_observations(items):
    print("\n观察：")
    for i, item in enumerate(items):
        marker = f"  {i + 1}. "
        indent = " " * display_width(marker)
        for j, text in enumerate(wrap(item, max(WRAP_WIDTH - len(indent), 10))):
            print((marker if j == 0 else indent) + text)


def fmt_time(seconds):
    """≥ 1 s → "1.23 s"; ≥ 1 ms → "7.04 ms"; ≥ 1 µs → "812.3 µs"; else "640 ns"."""
    if not math.isfinite(seconds):
        return f"{'NaN' if math.isnan(seconds) else ('-inf' if seconds < 0 else 'inf')} s"
    units = [(1.0, "s", 2), (1e-3, "ms", 2), (1e-6, "µs", 1), (1e-9, "ns", 0)]
    sign = "-" if seconds < 0 else ""
    t = abs(seconds)
    k = next((i for i, (scale, _, _) in enumerate(units) if t >= scale), len(units) - 1)

    def shown(k):
        return f"{t / units[k][0]:.{units[k][2]}f}"

    if k > 0 and float(shown(k)) >= 1000.0:
        k -= 1
    return f"{sign}{shown(k)} {units[k][1]}"
