"""The harness's Go and NoGo rules and the ``agz17`` encoder in JAX, batched.

The numba rules (:mod:`harness.game.board`) advance one game per loop
iteration on the CPU; these advance a whole batch per call under ``jax.jit``,
so that a search and the network can run together on an accelerator. They
follow the numba rules move for move (:mod:`harness.jaxgo.agreement` checks
it), not a rule book of their own.

Nothing here is imported by ``import harness``: the submodules import JAX,
which only the JAX backend's users have installed.
"""

# What the device self-play path (harness.jaxgo.search) encodes: a setting
# checked by configs that must not import JAX to read it.
DEVICE_ENCODERS = ("agz17",)
