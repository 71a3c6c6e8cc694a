"""The run's state: the archive and its run folder, the settings (``AlmaConfig``), parent sampling,
novelty, staged-evaluation rules, statistics, the replay cache and the meta-model choice.

The bottom floor of ``atlas.alma`` above ``design``: it imports no other folder of ``atlas.alma``."""
