"""Batch jobs past one process: sharded, idempotent, resumable (``hortus evaluate --shard``,
``--ray``; ``hortus selfplay``). See ``shards`` for the exactly-once argument, and
``resumable`` for the appended output of an unsharded ``hortus evaluate`` and the output lock."""

from hortus.distributed.runner import Summary, default_shards, run
from hortus.distributed.shards import Job, Output, ShardResult, item_seed, parse_shard, shard_of

__all__ = ["Job", "Output", "ShardResult", "Summary", "default_shards", "item_seed", "parse_shard", "run", "shard_of"]
