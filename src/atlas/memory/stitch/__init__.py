"""A symbolic library-learning compressor in the spirit of Stitch (Bowers et al., 2023).

Given Python programs (the successful code found in trajectories) it finds reusable abstractions:

1. every program is parsed; each expression / statement subtree is *alpha-normalized* (names bound
   inside it become ``_v0, _v1, ...``) and turned into a hashable tuple tree;
2. pairs of subtrees with the same root type are *anti-unified*: identical parts are kept, differing
   expression positions become holes (the same pair of differing parts → the same hole); a hole may not
   capture a variable bound inside the abstraction, and differences outside expression positions
   make the pair fail;
3. each candidate template is matched against every subtree of the corpus (holes bind consistently,
   matches do not overlap); its MDL-style benefit is

       Σ_uses [ size(matched subtree) − size(the call replacing it) ]  −  size(template)

   where the call is ``Call(Name, args)`` (plus ``Expr``/``Return`` for a statement) and its size
   counts the arguments: hole bindings and free variables;

   i.e. the corpus size saved by calling the abstraction minus the cost of defining it;
4. greedily (like Stitch) the best candidate is taken, its uses in the corpus are rewritten into calls,
   and the search repeats on the rewritten corpus, so later abstractions may build on earlier ones.

Besides expressions and self-contained statements, *blocks* of 1–``max_block`` (default 2)
consecutive statements are candidates (loops, accumulators: ``total = 0; for x in xs: total = total +
x * 3``). Every name a block assigns is renamed canonically; a name it reads before assigning
(``total`` in a loop without its initializer) is passed in, and a name it assigns that the rest of
the program reads afterwards is returned, so a use is rewritten as ``total = fn(0, xs, 3)``. A block
whose later-read name might be left unassigned (assigned only inside a branch or a loop and not
passed in) is not a candidate. The same MDL score decides between blocks, statements and
expressions. Blocks cost search time (about 1.7x on loop-heavy code at width 2, 4-5x at width 3);
``max_block=0`` turns them off.

Each chosen abstraction becomes a Python function: holes and free variables are its parameters, an
expression template is returned, a statement template is the body. Its source includes the imports and
earlier abstractions it uses, so ``exec`` of the code alone defines a working function.

The package, one job a module: ``trees`` (the tuple trees), ``templates`` (alpha normalization,
anti-unification, matching), ``blocks`` (what a call can replace), ``compressor``
(``StitchCompressor``) and ``snippets`` (code found in trajectories).
"""

from __future__ import annotations

from atlas.memory.stitch.compressor import Abstraction, Program, StitchCompressor
from atlas.memory.stitch.snippets import CODE_TOOLS, code_snippets, required_globals
from atlas.memory.stitch.templates import anti_unify, canonical_holes, match, normalize, normalize_block
from atlas.memory.stitch.trees import from_tuple, size, to_tuple

__all__ = [
    "CODE_TOOLS",
    "Abstraction",
    "Program",
    "StitchCompressor",
    "anti_unify",
    "canonical_holes",
    "code_snippets",
    "from_tuple",
    "match",
    "normalize",
    "normalize_block",
    "required_globals",
    "size",
    "to_tuple",
]
