"""The report's Findings: plain sentences generated from the statistics.

A sentence claims a difference only when its test says so (Holm-corrected
paired bootstrap for the validation metrics, a 95% Bradley-Terry interval for
Elo) and otherwise says "no significant difference" with the numbers; every
sentence carries its interval. Nothing here is written by hand per study.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.stats import Estimate, fmt_number, fmt_p, fmt_with_interval
from harness.train.metrics import METRIC_INFO

FAR_POINTS = 10  # a top-1 margin (points) worth calling "far" above the baseline


def _est(values: Sequence[float]) -> Estimate:
    return Estimate(*values)


def _fmt(values: Sequence[float], metric: str, unit: str = "%") -> str:
    """A value or difference with its interval; accuracies in percent (``unit``)."""
    percent = METRIC_INFO[metric].percent
    text = fmt_with_interval(_est(values), percent=percent, decimals=1 if percent else 3)
    return f"{text} {unit}" if percent else text


def _diff(values: Sequence[float], metric: str) -> str:
    return _fmt(values, metric, unit="points")


def validation_findings(comparison: dict) -> list[str]:
    """Sentences about the networks against the baseline and against each other."""
    baseline = comparison["baseline"]
    models = {m["name"]: m for m in comparison["models"]}
    networks = [n for n in models if n != baseline]
    pairs = comparison["pairs"]
    out = [f"All validation numbers are on the same {comparison['games']:,} held-out games "
           f"({comparison['positions']:,} positions), with 95% intervals from a bootstrap "
           "over games; differences are paired (same positions) and Holm-corrected over all "
           "pairs of a metric."]
    vs_base = [p for p in pairs if baseline in (p["a"], p["b"]) and p["metric"] == "policy_top1"]
    beat = [p for p in vs_base if p["better"] and p["better"] != baseline]
    base_top1 = _fmt(models[baseline]["policy_top1"], "policy_top1")
    if networks and len(beat) == len(networks):
        parts = [f"`{p['better']}` {_fmt(models[p['better']]['policy_top1'], 'policy_top1')}"
                 for p in beat]
        # "far" only where even the smallest margin's interval stays FAR_POINTS above
        smallest = min(min(abs(v) for v in p["difference"][1:]) for p in beat)
        how = "far more often" if smallest >= FAR_POINTS / 100 else "more often"
        out.append(f"Every network predicts the played move {how} than the "
                   f"most-frequent-move baseline ({base_top1} top-1): " + "; ".join(parts) + ".")
    else:
        for p in vs_base:
            other = p["b"] if p["a"] == baseline else p["a"]
            if p["better"] != other:
                out.append(f"`{other}` does not beat the most-frequent-move baseline in top-1 "
                           f"({_fmt(models[other]['policy_top1'], 'policy_top1')} against "
                           f"{base_top1}; Holm p {fmt_p(p['p_holm'])}).")
    for metric in ("policy_top1", "value_mse"):
        name = METRIC_INFO[metric].name
        for p in pairs:
            if p["metric"] != metric or baseline in (p["a"], p["b"]):
                continue
            a, b = p["a"], p["b"]
            if p["better"]:
                winner = p["better"]
                loser = b if winner == a else a
                higher = METRIC_INFO[metric].higher_is_better
                # the margin is positive: how much better the winner is
                sign = (1 if winner == a else -1) * (1 if higher else -1)
                d = sorted(sign * v for v in p["difference"][1:])
                margin = [sign * p["difference"][0], *d]
                claim = (f"is more accurate than `{loser}` in {name}" if higher
                         else f"has a lower {name} than `{loser}`")
                out.append(f"`{winner}` {claim}: {_fmt(models[winner][metric], metric)} against "
                           f"{_fmt(models[loser][metric], metric)}, "
                           f"{'higher' if higher else 'lower'} by {_diff(margin, metric)} "
                           f"(Holm p {fmt_p(p['p_holm'])}).")
            else:
                out.append(f"`{a}` and `{b}`: no significant difference in {name} "
                           f"(difference {_diff(p['difference'], metric)}, "
                           f"Holm p {fmt_p(p['p_holm'])}).")
    for row in comparison.get("seeds", []):
        if row["seeds"] > 1:
            out.append(f"Over {row['seeds']} random seeds, `{row['model']}` ends at "
                       f"{_fmt(row['policy_top1'], 'policy_top1')} top-1 (mean and Student-t "
                       "interval over seeds).")
    return out


@dataclass(frozen=True)
class EloPair:
    a: str
    b: str
    difference: Estimate  # Elo of a minus Elo of b
    los: float  # P(a stronger than b)
    games: int

    @property
    def separated(self) -> bool:
        return self.difference.low > 0 or self.difference.high < 0


def elo_pair(ratings, games: int, a: str, b: str) -> EloPair:
    """Elo difference of ``a`` over ``b`` with its 95% interval from the fit's covariance."""
    i, j = ratings.players.index(a), ratings.players.index(b)
    cov = ratings.covariance
    diff = float(ratings.elo[i] - ratings.elo[j])
    se = math.sqrt(max(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
    return EloPair(a, b, Estimate(diff, diff - 1.96 * se, diff + 1.96 * se),
                   ratings.likelihood_of_superiority(a, b), games)


def tournament_findings(ratings, games_between, networks: Sequence[str],
                        baselines: Sequence[str], selfplay: Sequence[tuple[str, str]]) -> list[str]:
    """Sentences on play: networks against the weakest baseline, and before/after self-play.

    ``games_between(a, b)`` counts rated games of a pair; ``selfplay`` lists
    (after, before) name pairs.
    """
    out = []
    if "random" in baselines:
        for name in networks:
            pair = elo_pair(ratings, games_between(name, "random"), name, "random")
            out.append(_elo_sentence(pair, "`random`"))
    for after, before in selfplay:
        pair = elo_pair(ratings, games_between(after, before), after, before)
        if before.endswith("gen0"):  # a run from scratch against its own start
            verdict = ("beats" if pair.separated and pair.difference.value > 0 else
                       "loses to" if pair.separated else "does not differ significantly from")
            out.append(f"Self-play from scratch: its last generation `{after}` {verdict} its "
                       f"generation 0 `{before}`, {_elo(pair.difference)} Elo "
                       f"(LOS {fmt_number(pair.los, 3)}, {pair.games} games between them).")
            continue
        if pair.separated:
            verb = "improved" if pair.difference.value > 0 else "weakened"
            out.append(f"Self-play {verb} `{before}`: `{after}` rates "
                       f"{_elo(pair.difference)} Elo against it "
                       f"(LOS {fmt_number(pair.los, 3)}, {pair.games} games between them).")
        else:
            out.append(f"Self-play did not change `{before}` significantly: `{after}` rates "
                       f"{_elo(pair.difference)} Elo against it "
                       f"(LOS {fmt_number(pair.los, 3)}, {pair.games} games between them).")
    return out


def _elo(e: Estimate) -> str:
    sign = "+" if e.value > 0 else ""
    return f"{sign}{fmt_number(e.value, 0)} [{fmt_number(e.low, 0)}, {fmt_number(e.high, 0)}]"


def _elo_sentence(pair: EloPair, against: str) -> str:
    if pair.separated and pair.difference.value > 0:
        return (f"`{pair.a}` beats {against}: {_elo(pair.difference)} Elo "
                f"(LOS {fmt_number(pair.los, 3)}, {pair.games} games between them).")
    if pair.separated:
        return (f"`{pair.a}` loses to {against}: {_elo(pair.difference)} Elo "
                f"(LOS {fmt_number(pair.los, 3)}, {pair.games} games between them).")
    return (f"`{pair.a}` against {against}: no significant difference, "
            f"{_elo(pair.difference)} Elo (LOS {fmt_number(pair.los, 3)}, "
            f"{pair.games} games between them).")


def family_order_findings(ratings, games_between,
                          selfplay: Sequence[tuple[str, str]]) -> list[str]:
    """For each two warm-started families: their Elo difference before and after self-play."""
    out = []
    for (after_a, before_a), (after_b, before_b) in itertools.combinations(selfplay, 2):
        before = elo_pair(ratings, games_between(before_a, before_b), before_a, before_b)
        after = elo_pair(ratings, games_between(after_a, after_b), after_a, after_b)

        def said(pair: EloPair) -> str:
            verdict = "separated" if pair.separated else "not separated"
            return f"{_elo(pair.difference)} Elo ({verdict}, {pair.games} games)"

        out.append(f"`{before_a}` against `{before_b}`: {said(before)} before self-play, "
                   f"{said(after)} after; {_order_change(before, after)}.")
    return out


def _order_change(before: EloPair, after: EloPair) -> str:
    """What the two intervals together support about the order of two families."""
    same = (before.difference.value > 0) == (after.difference.value > 0)
    if before.separated and after.separated:
        return "the order holds" if same else "self-play reversed the order"
    if after.separated:
        return "separated only after self-play"
    if before.separated:
        return "separated only before self-play"
    return "separated neither before nor after, so no change of order is shown"
