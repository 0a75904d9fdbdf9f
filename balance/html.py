"""A self-contained HTML page of a balance report: tables always; an SVG bar chart of the seat
shares when matplotlib (the ``report`` extra) is installed."""

from __future__ import annotations

import html
import io
from typing import Any

__all__ = ["render_html"]


def _svg(seat: dict[str, Any]) -> str:
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:  # the report extra is optional: tables only
        return ""
    shares = seat["seat_share"]
    lows = [s - i[0] for s, i in zip(shares, seat["seat_interval95"])]
    highs = [i[1] - s for s, i in zip(shares, seat["seat_interval95"])]
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.bar(range(len(shares)), shares, yerr=[lows, highs], capsize=4)
    ax.axhline(1.0 / seat["players"], linestyle="--", color="grey")
    ax.set_xlabel("seat")
    ax.set_ylabel("win share")
    buffer = io.StringIO()
    # a fixed hash salt: the same report draws the same SVG bytes
    matplotlib.rcParams["svg.hashsalt"] = "hortus-balance"
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def render_html(report: dict[str, Any]) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Balance: {e(report['game'])}</title></head><body>",
        f"<h1>Balance of {e(report['game'])}</h1>",
        f"<p>bot {e(report['bot'])}, {report['games_per_seat_count']} games per seat count, seed {report['seed']}</p>",
    ]
    for seat in report["seat_counts"]:
        parts.append(f"<h2>{seat['players']} seats ({seat['games']} games)</h2><table border='1'>")
        parts.append("<tr><th>seat</th><th>win share</th><th>95% interval</th><th>mean points</th></tr>")
        for s, (share, (low, high), pts) in enumerate(zip(seat["seat_share"], seat["seat_interval95"], seat["mean_points"])):
            parts.append(f"<tr><td>{s}</td><td>{share:.3f}</td><td>[{low:.3f}, {high:.3f}]</td><td>{pts:.1f}</td></tr>")
        parts.append("</table>")
        d, m = seat["decisions_p10_p50_p90"], seat["margin_p10_p50_p90"]
        parts.append(
            f"<p>first-player gap {seat['first_player_gap']:+.3f}; decisions p10/p50/p90 "
            f"{d[0]:.0f}/{d[1]:.0f}/{d[2]:.0f}; winning margin p10/p50/p90 {m[0]:.1f}/{m[1]:.1f}/{m[2]:.1f}</p>"
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
    for effect in report.get("variant_effects", []):
        low, high = effect["share_difference_interval95"]
        plow, phigh = effect["points_difference_interval95"]
        change = ", ".join(f"{k}={v}" for k, v in effect["change"].items())
        parts.append(
            f"<p>{e(change)} at {effect['players']} seats, {effect['pairs']} paired games: seat {effect['seat']}'s "
            f"win share {effect['share_difference']:+.3f} [{low:+.3f}, {high:+.3f}], points "
            f"{effect['points_difference']:+.2f} [{plow:+.2f}, {phigh:+.2f}] (SPRT: {e(effect['sprt'])})</p>"
        )
    parts.append("</body></html>\n")
    return "\n".join(parts)
