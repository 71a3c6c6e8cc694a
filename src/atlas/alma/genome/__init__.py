"""Memory designs as genomes: environment-blind parts (encode / store / retrieve / render), a typed
JSON genome that wires them, a compiler to an ordinary design module, and the operators that search
the space without an LLM (mutation, crossover) or with a grammar-constrained one."""

from atlas.alma.genome.baselines import BASELINE_GENOMES, baseline_genome
from atlas.alma.genome.catalog import PARTS, ObsKeys, Part, part, parts
from atlas.alma.genome.compile import compile_genome, genome_design, genome_of
from atlas.alma.genome.model import Genome, PartUse, Store, load_genome, parse_genome

__all__ = [
    "BASELINE_GENOMES",
    "PARTS",
    "Genome",
    "ObsKeys",
    "Part",
    "PartUse",
    "Store",
    "baseline_genome",
    "compile_genome",
    "genome_design",
    "genome_of",
    "load_genome",
    "parse_genome",
    "part",
    "parts",
]
