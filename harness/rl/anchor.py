"""A KL penalty toward a frozen anchor network's policy (piKL, AlphaStar).

Self-play that continues a supervised network drifts away from what it
learnt from people faster than it learns from its own games. The penalty
``beta * KL(q || p)``, with ``q`` the anchor's policy and ``p`` the network's,
keeps it near the anchor where its own search gives no reason to leave.

Cross-entropy is linear in its target, so the penalty needs no loss of its
own: ``CE(pi, p) + beta * CE(q, p) = (1 + beta) * CE((pi + beta q) / (1 + beta), p)``,
and ``CE(q, p) = KL(q || p) + H(q)`` where ``H(q)`` does not depend on the
network. The policy target is mixed with the anchor's policy and its weight
scaled by ``1 + beta``: the soft-policy loss the trainer already has then
minimises exactly the penalised objective.
"""

from __future__ import annotations

import numpy as np


def log_softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax(logits: np.ndarray) -> np.ndarray:
    return np.exp(log_softmax(logits)).astype(np.float32)


def anchored_policy(target: np.ndarray, weight: np.ndarray, anchor_logits: np.ndarray,
                    beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The policy target and per-sample weight whose cross-entropy is the
    original one plus ``beta`` times the cross-entropy to the anchor's policy."""
    if beta <= 0.0:
        return target, weight
    mixed = (target + beta * softmax(anchor_logits)) / (1.0 + beta)
    return mixed.astype(np.float32), (weight * (1.0 + beta)).astype(np.float32)


def anchor_beta(coefficient: float, decay: float, generation: int) -> float:
    """The penalty's coefficient in ``generation`` (1-based): ``coefficient * decay^(g-1)``."""
    return float(coefficient) * float(decay) ** max(0, generation - 1)


def policy_kl(reference_logits: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """``KL(q || p)`` per row, in nats, of the policies behind two logit arrays."""
    log_q = log_softmax(reference_logits)
    return (np.exp(log_q) * (log_q - log_softmax(logits))).sum(axis=-1)
