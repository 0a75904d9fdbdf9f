"""A self-contained HTML page of a balance report: tables always; SVG charts of the seat
shares and of the card ranking when matplotlib (the ``report`` extra) is installed."""

from __future__ import annotations

import html
import io
from typing import Any

__all__ = ["render_html"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:  # the report extra is optional: tables only
        return None
    # a fixed hash salt: the same report draws the same SVG bytes
    matplotlib.rcParams["svg.hashsalt"] = "hortus-balance"
    return plt


def _svg_text(plt: Any, fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _svg(seat: dict[str, Any]) -> str:
    """Each seat's win share with its interval, the fair share dashed."""
    plt = _pyplot()
    if plt is None:
        return ""
    shares = seat["seat_share"]
    lows = [s - i[0] for s, i in zip(shares, seat["seat_interval95"])]
    highs = [i[1] - s for s, i in zip(shares, seat["seat_interval95"])]
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.bar(range(len(shares)), shares, yerr=[lows, highs], capsize=4)
    ax.axhline(1.0 / seat["players"], linestyle="--", color="grey")
    ax.set_xlabel("seat")
    ax.set_ylabel("win share")
    return _svg_text(plt, fig)


def _ranking_svg(rows: list[dict[str, Any]]) -> str:
    """The cards' points differences with their intervals, strongest at the top."""
    plt = _pyplot()
    measured = [r for r in rows if r["points_difference_interval95"]]
    if plt is None or not measured:
        return ""
    fig, ax = plt.subplots(figsize=(5, 0.22 * len(measured) + 0.8))
    y = range(len(measured))
    values = [r["points_difference"] for r in measured]
    errors = [
        [v - r["points_difference_interval95"][0] for v, r in zip(values, measured)],
        [r["points_difference_interval95"][1] - v for v, r in zip(values, measured)],
    ]
    ax.errorbar(values, list(y), xerr=errors, fmt="o", capsize=2, markersize=3)
    ax.axvline(0.0, linestyle="--", color="grey")
    ax.set_yticks(list(y), [r["card"] for r in measured], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("takers' points with the card minus without")
    return _svg_text(plt, fig)


def _change_text(change: dict[str, Any]) -> str:
    words = []
    for key, value in change.items():
        if isinstance(value, dict):
            words.append(f"{key} " + ", ".join(f"{a}={b}" for a, b in value.items()))
        elif isinstance(value, list):
            words.append(f"{key} " + ", ".join(value))
        else:
            words.append(f"{key} {value}")
    return "; ".join(words)


def _interval(values: list[float] | None, digits: int) -> str:
    return f"[{values[0]:+.{digits}f}, {values[1]:+.{digits}f}]" if values else "[no interval]"


def _effect_row(first: str, effect: dict[str, Any], seats: bool = True) -> str:
    middle = f"<td>{effect['players']}</td><td>{html.escape(effect['measured'])}</td>" if seats else ""
    return (
        f"<tr><td>{first}</td>{middle}<td>{effect['pairs']} ({effect['samples']})</td>"
        f"<td>{effect['share_difference']:+.3f} {_interval(effect['share_difference_interval95'], 3)}</td>"
        f"<td>{effect['points_difference']:+.2f} {_interval(effect['points_difference_interval95'], 2)}</td>"
        f"<td>{html.escape(effect['sprt'])}</td></tr>"
    )


def render_html(report: dict[str, Any]) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Balance: {e(report['game'])}</title></head><body>",
        f"<h1>Balance of {e(report['game'])}</h1>",
        f"<p>bot {e(report['bot'])}, {report['games_per_seat_count']} games per seat count, seed {report['seed']}"
        + (f", rule options {e(_change_text(report['options']))}" if report["options"] else "")
        + "</p>",
    ]
    for seat in report["seat_counts"]:
        parts.append(f"<h2>{seat['players']} seats ({seat['games']} games)</h2><table border='1'>")
        parts.append("<tr><th>seat</th><th>win share</th><th>95% interval</th><th>mean points</th></tr>")
        for s, (share, (low, high), pts) in enumerate(zip(seat["seat_share"], seat["seat_interval95"], seat["mean_points"])):
            parts.append(f"<tr><td>{s}</td><td>{share:.3f}</td><td>[{low:.3f}, {high:.3f}]</td><td>{pts:.1f}</td></tr>")
        parts.append("</table>")
        d, m, r = seat["decisions_p10_p50_p90"], seat["margin_p10_p50_p90"], seat["rounds_p10_p50_p90"]
        ends = ", ".join(f"{e(k)} {v:.1%}" for k, v in seat["end_share"].items())
        draw = seat["draw_share_mean"]
        luck = f"{draw:.3f} over {seat['draw_share_decisions']} decisions" if draw is not None else "not measured"
        parts.append(
            f"<p>first-player gap {seat['first_player_gap']:+.3f}; {e(seat['rounds_counted'])} p10/p50/p90 "
            f"{r[0]:.1f}/{r[1]:.1f}/{r[2]:.1f}; decisions p10/p50/p90 {d[0]:.0f}/{d[1]:.0f}/{d[2]:.0f}; "
            f"winning margin p10/p50/p90 {m[0]:.1f}/{m[1]:.1f}/{m[2]:.1f}</p>"
            f"<p>ended by: {ends}; the draw's mean share of a decision's outcome: {luck}</p>"
        )
        parts.append(_svg(seat))
    if report.get("skill"):
        parts.append("<h2>Skill (2 seats, seats alternating)</h2><table border='1'>")
        parts.append(
            "<tr><th>stronger</th><th>weaker</th><th>games</th><th>stronger's share</th><th>95% interval</th><th>upset rate</th></tr>"
        )
        for row in report["skill"]:
            low, high = row["stronger_interval95"]
            parts.append(
                f"<tr><td>level {row['stronger']}</td><td>level {row['weaker']}</td><td>{row['games']}</td>"
                f"<td>{row['stronger_share']:.3f}</td><td>[{low:.3f}, {high:.3f}]</td><td>{row['upset_rate']:.3f}</td></tr>"
            )
        parts.append("</table>")
    if report.get("effects"):
        parts.append("<h2>Paired comparisons</h2><table border='1'>")
        parts.append(
            "<tr><th>change</th><th>seats</th><th>measured</th><th>pairs (counted)</th><th>win share difference</th>"
            "<th>points difference</th><th>SPRT</th></tr>"
        )
        for effect in report["effects"]:
            parts.append(_effect_row(e(_change_text(effect["change"])), effect))
        parts.append("</table>")
    if report.get("card_ranking"):
        parts.append(f"<h2>Cards ranked by their takers' difference ({e(report['effect_bot'])})</h2><table border='1'>")
        parts.append(
            "<tr><th>rank</th><th>seats</th><th>card</th><th>pairs (counted)</th><th>win share difference</th>"
            "<th>points difference</th><th>SPRT</th></tr>"
        )
        for row in report["card_ranking"]:
            parts.append(_effect_row(f"{row['rank']}</td><td>{row['players']}</td><td>{e(row['card'])}", row, seats=False))
        parts.append("</table>")
        for count in sorted({row["players"] for row in report["card_ranking"]}):
            parts.append(_ranking_svg([row for row in report["card_ranking"] if row["players"] == count]))
    parts.append("</body></html>\n")
    return "\n".join(parts)
