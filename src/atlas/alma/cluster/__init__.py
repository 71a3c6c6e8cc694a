"""Running a search's episodes on a Ray cluster (``--executor ray``).

``RayExecutor`` (the driver side: work units, retries, staged deployment), ``EpisodeWorker`` (the
actor that plays units), ``work`` (what a unit does, Ray-free) and ``connect`` (the one place Ray is
imported). Importing this package does not import Ray; connecting does.
"""

from atlas.alma.cluster.executor import RayExecutor
from atlas.alma.cluster.work import WorkerKit

__all__ = ["RayExecutor", "WorkerKit"]
