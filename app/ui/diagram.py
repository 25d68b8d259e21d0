"""Graph diagrams drawn from a compiled LangGraph: Mermaid text and a self-contained SVG.

Both come from `compiled.get_graph()` (nodes in the order the graph adds them, edges with their
conditional flag), never from a hand-drawn picture. The SVG is laid out here — layered top to bottom,
edges that go back up (the "search again" and status-check loops) routed on the right — so the admin
page needs no JavaScript diagram library. A run's path can be highlighted, with per-node timings.

Layout: an edge is a back edge when it points to a node added no later than its source (graphs here
are written top to bottom); layers are longest paths over the other edges; long edges get dummy
points so they do not cut through nodes; a few barycentre sweeps order each layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

START, END = "__start__", "__end__"
LAYER_GAP = 74
NODE_HEIGHT = 34
TIMED_HEIGHT = 46
NODE_GAP = 22
DUMMY_WIDTH = 14
MARGIN = 24
BACK_LANE = 26
_EDGE_LINE = re.compile(r"^\s*([\w.-]+)\s+(?:-->|-\.->|==>|-\.\s.*?\s\.->|--\s.*?\s-->)\s+([\w.-]+);?\s*$")
_NODE_LINE = re.compile(r"^(\s*)([\w.-]+)\((.*)\)(:::\w+)?\s*$")


@dataclass(frozen=True)
class GraphShape:
    """What a drawing needs of a compiled graph: node ids (in the order they were added) and edges."""

    name: str
    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str, bool], ...]  # (source, target, conditional)
    mermaid: str


def graph_shape(compiled, name: str | None = None) -> GraphShape:
    drawable = compiled.get_graph()
    return GraphShape(
        name=name or getattr(compiled, "name", None) or "graph",
        nodes=tuple(drawable.nodes),
        edges=tuple((e.source, e.target, bool(e.conditional)) for e in drawable.edges),
        mermaid=drawable.draw_mermaid(),
    )


def _path_edges(path: list[str]) -> set[tuple[str, str]]:
    return set(zip([START, *path], [*path, END])) if path else set()


def node_timings(nodes: list[dict]) -> dict[str, tuple[int, float]]:
    """{node: (runs, total ms)} from a trace's node list."""
    out: dict[str, tuple[int, float]] = {}
    for node in nodes:
        runs, total = out.get(node["name"], (0, 0.0))
        out[node["name"]] = (runs + 1, total + (node.get("duration_ms") or 0.0))
    return out


def highlighted_mermaid(shape: GraphShape, path: list[str], timings: dict[str, tuple[int, float]] | None = None) -> str:
    """The graph's Mermaid text with a run's nodes and edges highlighted (and timings in the labels)."""
    visited, taken = set(path), _path_edges(path)
    lines, styled, index = [], [], 0
    for line in shape.mermaid.splitlines():
        edge = _EDGE_LINE.match(line)
        if edge:
            if (edge[1], edge[2]) in taken:
                styled.append(index)
            index += 1
        node = _NODE_LINE.match(line)
        if node and timings and node[2] in timings:
            runs, total = timings[node[2]]
            label = f"{node[2]} · {'×%d · ' % runs if runs > 1 else ''}{total:.1f} ms"
            line = f'{node[1]}{node[2]}("{label}"){node[4] or ""}'
        lines.append(line)
    if visited:
        lines.append("\tclassDef visited fill:#fde68a,stroke:#b45309,stroke-width:2px")
        lines.append(f"\tclass {','.join(sorted(visited))} visited")
    lines += [f"\tlinkStyle {i} stroke:#d97706,stroke-width:3px" for i in styled]
    return "\n".join(lines) + "\n"


# --- SVG -----------------------------------------------------------------------------------------------
def _label(node: str) -> str:
    return {"__start__": "start", "__end__": "end"}.get(node, node)


def _timing_label(timing: tuple[int, float]) -> str:
    runs, total = timing
    return f"{'×%d · ' % runs if runs > 1 else ''}{total:.1f} ms"


def _width(node: str, timing: tuple[int, float] | None = None) -> int:
    if node in (START, END):
        return 56
    return max(64, 8 * len(_label(node)) + 28, 7 * len(_timing_label(timing)) + 16 if timing else 0)


def _layout(shape: GraphShape):
    order = {n: i for i, n in enumerate(shape.nodes)}
    order[END] = len(order) + 1  # always last, whatever get_graph() listed it as
    forward = [(s, t, c) for s, t, c in shape.edges if order[t] > order[s]]
    back = [(s, t, c) for s, t, c in shape.edges if order[t] <= order[s]]
    layer = {n: 0 for n in shape.nodes}
    for node in sorted(shape.nodes, key=order.__getitem__):  # insertion order is a topological order of `forward`
        for s, t, _ in forward:
            if s == node:
                layer[t] = max(layer[t], layer[s] + 1)
    # long edges: one dummy point per layer crossed
    rows: dict[int, list[str]] = {}
    for node in sorted(shape.nodes, key=order.__getitem__):
        rows.setdefault(layer[node], []).append(node)
    chains: list[tuple[list[str], bool]] = []
    for s, t, c in forward:
        chain = [s]
        for depth in range(layer[s] + 1, layer[t]):
            dummy = f"·{s}>{t}@{depth}"
            rows.setdefault(depth, []).append(dummy)
            layer[dummy] = depth
            chain.append(dummy)
        chains.append((chain + [t], c))
    links = [(a, b) for chain, _ in chains for a, b in zip(chain, chain[1:])]
    position = {n: i for row in rows.values() for i, n in enumerate(row)}
    for sweep in range(6):  # barycentre ordering, down then up
        depths = sorted(rows) if sweep % 2 == 0 else sorted(rows, reverse=True)
        for depth in depths:

            def centre(n: str, down: bool = sweep % 2 == 0) -> float:
                near = [position[a] for a, b in links if b == n] if down else [position[b] for a, b in links if a == n]
                return sum(near) / len(near) if near else position[n]

            rows[depth].sort(key=lambda n: (centre(n), position[n]))
            position.update({n: i for i, n in enumerate(rows[depth])})
    return rows, chains, back


def svg_diagram(
    shape: GraphShape, path: list[str] | None = None, timings: dict[str, tuple[int, float]] | None = None
) -> str:
    """An SVG drawing of the graph; with `path`, the run's nodes and edges stand out."""
    path = path or []
    visited, taken = set(path), _path_edges(path)
    rows, chains, back = _layout(shape)

    def width(n: str) -> int:
        return DUMMY_WIDTH if n.startswith("·") else _width(n, (timings or {}).get(n))

    height = TIMED_HEIGHT if timings else NODE_HEIGHT
    widest = max(sum(width(n) for n in row) + NODE_GAP * (len(row) - 1) for row in rows.values())
    # dummy points (long edges) do not block a back edge's way out: it may cross an edge, never a node
    row_of = {n: [m for m in row if not m.startswith("·")] for row in rows.values() for n in row}
    # a back edge leaves its source on the side it is nearer to, runs up a lane beside the drawing and
    # enters its target from the side; a node with neighbours on that side is left through the gap below
    sides = []
    for s, _t, _ in back:
        row = row_of[s]
        sides.append("left" if row.index(s) < (len(row) - 1) / 2 else "right")
    left_lanes, right_lanes = sides.count("left"), sides.count("right")
    offset = MARGIN + BACK_LANE * left_lanes
    canvas_w = offset + widest + MARGIN + BACK_LANE * right_lanes
    xy: dict[str, tuple[float, float]] = {}
    for depth, row in rows.items():
        row_w = sum(width(n) for n in row) + NODE_GAP * (len(row) - 1)
        x = offset + (widest - row_w) / 2
        for n in row:
            xy[n] = (x + width(n) / 2, MARGIN + depth * LAYER_GAP + height / 2)
            x += width(n) + NODE_GAP
    canvas_h = MARGIN * 2 + max(rows) * LAYER_GAP + height

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph-diagram" viewBox="0 0 {canvas_w:.0f} '
        f'{canvas_h:.0f}" width="{canvas_w:.0f}" height="{canvas_h:.0f}" role="img" '
        f'aria-label="{escape(shape.name)} graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        'markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="context-stroke"/></marker></defs>',
    ]
    for chain, conditional in chains:
        points = [xy[n] for n in chain]
        (x0, y0), (x1, y1) = points[0], points[-1]
        points[0], points[-1] = (x0, y0 + height / 2), (x1, y1 - height / 2)
        d = f"M{points[0][0]:.1f},{points[0][1]:.1f}"
        for (ax, ay), (bx, by) in zip(points, points[1:]):
            mid = (ay + by) / 2
            d += f" C{ax:.1f},{mid:.1f} {bx:.1f},{mid:.1f} {bx:.1f},{by:.1f}"
        parts.append(_edge(d, chain[0], chain[-1], conditional, (chain[0], chain[-1]) in taken))
    lanes = {"left": 0, "right": 0}
    for (s, t, conditional), side in zip(back, sides):
        lanes[side] += 1
        sign = -1 if side == "left" else 1
        lane = (
            (offset - BACK_LANE * lanes[side] + 6)
            if side == "left"
            else (offset + widest + BACK_LANE * lanes[side] - 6)
        )
        (sx, sy), (tx, ty) = xy[s], xy[t]
        row_s, row_t = row_of[s], row_of[t]
        if row_s[0 if side == "left" else -1] == s:  # nothing beside it on that side: straight out
            d = f"M{sx + sign * width(s) / 2:.1f},{sy:.1f} H{lane:.1f}"
        else:
            gap = sy + height / 2 + (LAYER_GAP - height) / 2
            d = f"M{sx:.1f},{sy + height / 2:.1f} V{gap:.1f} H{lane:.1f}"
        if row_t[0 if side == "left" else -1] == t:
            d += f" V{ty:.1f} H{tx + sign * width(t) / 2:.1f}"
        else:
            gap = ty - height / 2 - (LAYER_GAP - height) / 2
            d += f" V{gap:.1f} H{tx:.1f} V{ty - height / 2:.1f}"
        parts.append(_edge(d, s, t, conditional, (s, t) in taken))
    for node in shape.nodes:
        parts.append(_node(node, xy[node], height, node in visited, (timings or {}).get(node)))
    parts.append("</svg>")
    return "".join(parts)


def _edge(d: str, source: str, target: str, conditional: bool, taken: bool) -> str:
    cls = "edge" + (" conditional" if conditional else "") + (" taken" if taken else "")
    colour, stroke = ("#d97706", 2.6) if taken else ("#9ca3af", 1.3)
    dash = ' stroke-dasharray="5 4"' if conditional and not taken else ""
    return (
        f'<path class="{cls}" data-source="{escape(source)}" data-target="{escape(target)}" d="{d}" fill="none" '
        f'stroke="{colour}" stroke-width="{stroke}"{dash} marker-end="url(#arrow)"/>'
    )


def _node(node: str, centre: tuple[float, float], height: int, visited: bool, timing: tuple[int, float] | None) -> str:
    x, y = centre
    w = _width(node, timing)
    terminal = node in (START, END)
    fill, stroke, text = ("#fde68a", "#b45309", "#111827") if visited else ("#f3f4f6", "#9ca3af", "#374151")
    h = 26 if terminal else height
    radius = h / 2 if terminal else 8
    cls = "node" + (" visited" if visited else "") + (" terminal" if terminal else "")
    title = escape(_label(node)) + (f" — {timing[0]} run(s), {timing[1]:.1f} ms" if timing else "")
    out = [
        f'<g class="{cls}" data-node="{escape(node)}"><title>{title}</title>',
        f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w}" height="{h}" rx="{radius:.0f}" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="{1.8 if visited else 1}"/>',
    ]
    label_y = y - 6 if timing and not terminal else y
    out.append(
        f'<text x="{x:.1f}" y="{label_y:.1f}" text-anchor="middle" dominant-baseline="central" '
        f'font-family="ui-sans-serif, system-ui, sans-serif" font-size="13" fill="{text}" '
        f'font-weight="{600 if visited else 400}">{escape(_label(node))}</text>'
    )
    if timing and not terminal:
        label = _timing_label(timing)
        out.append(
            f'<text class="timing" x="{x:.1f}" y="{y + 10:.1f}" text-anchor="middle" '
            f'dominant-baseline="central" font-family="ui-monospace, monospace" font-size="11" '
            f'fill="#92400e">{escape(label)}</text>'
        )
    out.append("</g>")
    return "".join(out)
