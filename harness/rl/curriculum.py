"""Network curriculum learning (NoGoZero+ section 3.2.3): when does the big net take over?

The small network plays all the games while a larger one trains on the same
windows; once the small one stops improving, the larger one becomes the
self-play network. "Stops improving" is one of the rules below, decided from
the per-generation history the run keeps (a pure function, so it is tested
without training anything).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.rl.config import CurriculumConfig


def small_net_stalled(
    config: CurriculumConfig,
    generation: int,
    policy_losses: Sequence[float],
    promotions: Sequence[bool],
) -> bool:
    """Whether the large network should take over after ``generation``.

    ``policy_losses`` and ``promotions`` hold the small network's history,
    oldest first, one entry per trained generation: its training policy loss
    and whether it passed gating (or would have, without gating).
    """
    if not config.enabled:
        return False
    if config.criterion == "generation":
        return generation >= config.switch_generation
    if config.criterion == "gating":
        recent = list(promotions)[-config.patience:]
        return len(recent) == config.patience and not any(recent)
    # "loss": the best of the last `patience` generations is not `min_delta`
    # better than the best before them.
    losses = list(policy_losses)
    if len(losses) <= config.patience:
        return False
    before = min(losses[: -config.patience])
    recent = min(losses[-config.patience:])
    return before - recent < config.min_delta
