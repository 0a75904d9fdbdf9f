"""The shared compiled core: kernel contract, RNG, generic kernel state and ISMCTS.

Nothing here names a game: games hand their ``GameKernel`` to this code through a capsule.
"""
