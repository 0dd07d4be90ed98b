"""Each model family's own optimizer settings, used where a config leaves them out.

One rate does not suit every family at a CPU's budgets. At 200,000 samples on
the quick dataset with Adam 0.002, ``resnet18.tiny`` stays at 22.0% held-out
top-1 and ``nbt.tiny`` at 22.7%; at 0.005 they reach 29.5% and 28.0%
(docs/results.md, "Every family learns with its own defaults"). A setting
named in :class:`FamilyDefaults` has no default of its own in
:class:`~harness.train.config.OptimizerSettings` (None there means "the
family's"); a config or a flag that sets it wins, so a study that wants one
recipe for every family still writes it once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from harness.nets.names import parse_model_name
from harness.nets.plugins import is_plugin_reference

S = TypeVar("S")


@dataclass(frozen=True)
class FamilyDefaults:
    """What a family trains with unless told otherwise."""

    lr: float = 0.002  # the optimizer's initial rate (Adam's, as the default optimizer is)


# Families whose measured best differs from FamilyDefaults(); the rest use it.
FAMILY_DEFAULTS: dict[str, FamilyDefaults] = {
    "resnet18": FamilyDefaults(lr=0.005),
    "nbt": FamilyDefaults(lr=0.005),
}


def family_defaults(model: str) -> FamilyDefaults:
    """The defaults of the family a zoo name belongs to (a plugin's network,
    whose family the harness cannot know, gets the common ones)."""
    if not model or is_plugin_reference(model):
        return FamilyDefaults()
    try:
        family = parse_model_name(model).family
    except ValueError:
        return FamilyDefaults()
    return FAMILY_DEFAULTS.get(family, FamilyDefaults())


def with_family_defaults(settings: S, model: str) -> S:
    """``settings`` with every family setting it leaves unset (None) taken
    from ``model``'s family; the same object when it sets them all."""
    defaults = family_defaults(model)
    unset = {f.name: getattr(defaults, f.name) for f in dataclasses.fields(FamilyDefaults)
             if getattr(settings, f.name) is None}
    return dataclasses.replace(settings, **unset) if unset else settings
