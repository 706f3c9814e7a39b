"""all-MiniLM-L6-v2 in numpy float32: BERT forward, mean pooling and L2 norm from model.safetensors, no torch."""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    F32 = NDArray[np.float32]

# Padded keys get this added to their attention scores: exp() of it underflows to exactly 0 in float32,
# so a padded batch gives each text the same attention as it would alone (no -inf, so no overflow warning).
_MASKED = -1.0e9
# Tokens per forward pass: big enough for efficient matmuls, small enough for the activations to stay in cache.
_BATCH_TOKENS = 2048
# Scores held at once in attention (sequences × heads × L × L floats): bounds memory for long batches.
_SCORE_BUDGET = 1 << 20
# Rows of the feed-forward block computed together (its 1536-wide activation then stays in cache).
_FFN_ROWS = 128

# erf(u) ≈ u·P(u²)/Q(u²) on [-4, 4] (the rational approximation Eigen and XLA use for float32). Evaluated in
# float64 its error is ≤ 6.5e-8 (float32 evaluation would give 4.4e-7), and beyond ±4 erf is ±1 within 1.6e-8.
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
          -1.42647390514189e-02)
_ERF_CLAMP = 4.0
# GELU(x) = x·(½ + ½·erf(x/√2)): with u = x/√2 folded into the coefficients, the factor is ½ + x·P'(x²)/Q'(x²).
_GELU_P = tuple(c * 0.5 ** (len(_ERF_P) - 1 - i) * 0.5 / math.sqrt(2.0) for i, c in enumerate(_ERF_P))
_GELU_Q = tuple(c * 0.5 ** (len(_ERF_Q) - 1 - i) for i, c in enumerate(_ERF_Q))
_GELU_CLAMP = _ERF_CLAMP * math.sqrt(2.0)
# Elements per GELU step: its float64 temporaries then stay in L2 (5x faster than whole 128x1536 blocks).
_GELU_STEP = 16 * 1024


class ModelFormatError(ValueError):
    """The model folder is not a BERT mean-pooling sentence-transformers model this engine can run."""


@dataclass(frozen=True)
class BertConfig:
    """The few fields of a BERT ``config.json`` (and sentence-transformers config) the forward pass needs."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int
    max_seq_length: int


def read_safetensors(path: Path) -> dict[str, Any]:
    """Map a ``.safetensors`` file and return its tensors as read-only numpy views (no copy, no torch).

    The format is an 8-byte little-endian header length, a JSON header of ``{name: {dtype, shape,
    data_offsets}}`` and the raw little-endian tensors after it.

    Args:
        path: The ``.safetensors`` file.

    Returns:
        Tensor name → read-only ``numpy.ndarray`` backed by the mapped file.

    Raises:
        ModelFormatError: When the file is not a valid safetensors file.
    """
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32,
              "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size < 8:
            raise ModelFormatError(f"{path.name}: too short for a safetensors file")
        buf = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # the mapping outlives the file handle
    (header_len,) = struct.unpack("<Q", buf[:8])
    if header_len > len(buf) - 8:
        raise ModelFormatError(f"{path.name}: header length {header_len} past the end of the file")
    try:
        header = json.loads(bytes(buf[8 : 8 + header_len]))
    except ValueError as exc:
        raise ModelFormatError(f"{path.name}: unreadable header ({exc})") from exc
    base = 8 + header_len
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = dtypes.get(info.get("dtype", ""))
        if dtype is None:
            raise ModelFormatError(f"{path.name}: tensor {name} has unsupported dtype {info.get('dtype')}")
        start, end = info["data_offsets"]
        shape = tuple(int(n) for n in info["shape"])
        count = math.prod(shape)
        if end - start != count * np.dtype(dtype).itemsize or base + end > len(buf):
            raise ModelFormatError(f"{path.name}: tensor {name} has inconsistent offsets")
        out[name] = np.frombuffer(buf, dtype=np.dtype(dtype).newbyteorder("<"), count=count,
                                  offset=base + start).reshape(shape)
    return out


def release_mapped(arrays: Sequence[Any]) -> int:
    """Let the kernel drop the file pages under read-only views of a mapping, once their data has been copied.

    They stay valid (a later read faults them back in from the page cache); this only stops them counting
    in the process's RSS. Only whole pages inside runs of adjacent views are released.

    Args:
        arrays: Views returned by :func:`read_safetensors` (one mapping).

    Returns:
        Bytes released (0 where ``madvise`` is unavailable).
    """
    import numpy as np

    advice = getattr(mmap, "MADV_DONTNEED", None)
    if not arrays or advice is None:
        return 0
    owner: Any = arrays[0]
    while isinstance(owner, np.ndarray):
        owner = owner.base
    mapping = owner.obj if isinstance(owner, memoryview) else owner
    if not isinstance(mapping, mmap.mmap) or not hasattr(mapping, "madvise"):
        return 0
    origin = np.frombuffer(mapping, dtype=np.uint8).ctypes.data
    spans = sorted((a.ctypes.data - origin, a.ctypes.data - origin + a.nbytes) for a in arrays)
    runs: list[list[int]] = []
    for lo, hi in spans:
        if runs and lo <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], hi)
        else:
            runs.append([lo, hi])
    page = mmap.PAGESIZE
    released = 0
    for lo, hi in runs:
        first, last = -(-lo // page) * page, hi // page * page
        if last > first:
            mapping.madvise(advice, first, last - first)
            released += last - first
    return released


def read_config(model_path: Path) -> BertConfig:
    """Read ``config.json``, ``sentence_bert_config.json`` and the pooling config, refusing what this engine lacks.

    Raises:
        ModelFormatError: Not a BERT model with exact GELU, absolute positions and mean pooling.
    """
    cfg = json.loads((model_path / "config.json").read_text(encoding="utf-8"))
    if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
        raise ModelFormatError(f"not a BERT model with exact GELU: {cfg.get('model_type')}/{cfg.get('hidden_act')}")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ModelFormatError(f"unsupported position embeddings: {cfg.get('position_embedding_type')}")
    pooling_file = model_path / "1_Pooling" / "config.json"
    if pooling_file.exists():
        pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
        modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v}
        if modes != {"pooling_mode_mean_tokens"}:
            raise ModelFormatError(f"only mean pooling is supported, not {sorted(modes)}")
    max_positions = int(cfg["max_position_embeddings"])
    max_seq_length = max_positions
    st_file = model_path / "sentence_bert_config.json"
    if st_file.exists():
        max_seq_length = int(json.loads(st_file.read_text(encoding="utf-8")).get("max_seq_length") or max_positions)
    return BertConfig(
        hidden=int(cfg["hidden_size"]), heads=int(cfg["num_attention_heads"]), layers=int(cfg["num_hidden_layers"]),
        intermediate=int(cfg["intermediate_size"]), eps=float(cfg.get("layer_norm_eps", 1e-12)),
        max_positions=max_positions, max_seq_length=min(max_seq_length, max_positions),
    )


def gelu_(x: NDArray[Any]) -> None:
    """Exact (erf) GELU in place on a contiguous float32 array, ``x · ½(1 + erf(x/√2))``, erf error ≤ 1e-7."""
    import numpy as np

    flat = x.reshape(-1)
    for start in range(0, flat.size, _GELU_STEP):
        xs = flat[start : start + _GELU_STEP]
        v = np.clip(xs, -_GELU_CLAMP, _GELU_CLAMP, out=np.empty(xs.shape, dtype=np.float64))
        v2 = v * v
        p = v2 * _GELU_P[0]
        p += _GELU_P[1]
        for c in _GELU_P[2:]:
            p *= v2
            p += c
        q = v2 * _GELU_Q[0]
        q += _GELU_Q[1]
        for c in _GELU_Q[2:]:
            q *= v2
            q += c
        p *= v
        p /= q
        p += 0.5
        xs *= p  # computed in float64, stored as float32


def erf(x: Any) -> Any:
    """erf by the approximation the GELU uses, in float64 (for checks: its error against ``math.erf``)."""
    import numpy as np

    u = np.clip(np.asarray(x, dtype=np.float64), -_ERF_CLAMP, _ERF_CLAMP)
    u2 = u * u
    p = np.full_like(u, _ERF_P[0])
    for c in _ERF_P[1:]:
        p = p * u2 + c
    q = np.full_like(u, _ERF_Q[0])
    for c in _ERF_Q[1:]:
        q = q * u2 + c
    return u * p / q


def _layer_norm_(x: F32, weight: F32, bias: F32, eps: float) -> None:
    """LayerNorm over the last axis, in place (biased variance, as torch)."""
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= 1.0 / x.shape[-1]
    var += eps
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias


def plan_batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Group text indices into batches of similar length whose padded size stays within ``batch_tokens``.

    Texts are taken shortest first; a batch grows while (its count × its longest length) fits the budget,
    so padding is at most the length spread inside a batch. A text longer than the budget gets a batch alone.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and lengths[order[end]] * (end - start + 1) <= batch_tokens:
            end += 1
        groups.append(order[start:end])
        start = end
    return groups


@dataclass(frozen=True)
class _Layer:
    qkv_w: F32  # [hidden, 3·hidden], query part pre-scaled by 1/√head_dim
    qkv_b: F32
    out_w: F32  # [hidden, hidden]
    out_b: F32
    ln1_w: F32
    ln1_b: F32
    up_w: F32  # [hidden, intermediate]
    up_b: F32
    down_w: F32  # [intermediate, hidden]
    down_b: F32
    ln2_w: F32
    ln2_b: F32


class MiniLM:
    """A BERT sentence encoder (all-MiniLM-L6-v2) run in numpy float32, matching sentence-transformers.

    Tokenises with the model's own ``tokenizer.json`` (truncated to ``max_seq_length`` word-pieces including
    [CLS] and [SEP]), runs the encoder, mean-pools over the real tokens and L2-normalises. Texts are sorted
    by length and batched so padding stays small; padded keys are masked out of attention, so a text's
    vector does not depend on its batch. numpy's matmuls release the GIL, so other threads keep running.
    """

    def __init__(self, model_path: Path) -> None:
        """Map and lay out the weights and build the tokenizer (~0.15 s plus numpy's import).

        Args:
            model_path: A sentence-transformers folder with ``model.safetensors``, ``config.json`` and
                ``tokenizer.json``.

        Raises:
            ModelFormatError: When the folder holds a model this engine cannot run.
            OSError: When a file cannot be read.
        """
        import numpy as np
        from tokenizers import Tokenizer

        self.config = cfg = read_config(model_path)
        if cfg.hidden % cfg.heads:
            raise ModelFormatError(f"hidden size {cfg.hidden} is not a multiple of {cfg.heads} heads")
        tensors = read_safetensors(model_path / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

        def get(name: str) -> Any:
            try:
                t = tensors[prefix + name]
            except KeyError as exc:
                raise ModelFormatError(f"model.safetensors has no tensor {prefix + name}") from exc
            return t.astype(np.float32, copy=False)

        self._word = get("embeddings.word_embeddings.weight")  # stays mapped: only looked-up rows are read
        # Position 0..L plus token type 0, added once per batch.
        self._pos_type = np.ascontiguousarray(
            get("embeddings.position_embeddings.weight") + get("embeddings.token_type_embeddings.weight")[0]
        )
        self._emb_ln = (get("embeddings.LayerNorm.weight").copy(), get("embeddings.LayerNorm.bias").copy())
        head_dim = cfg.hidden // cfg.heads
        scale = np.float32(1.0 / math.sqrt(head_dim))
        layers = []
        for i in range(cfg.layers):
            p = f"encoder.layer.{i}."
            a = p + "attention."
            qkv_w = np.concatenate([get(a + "self.query.weight") * scale, get(a + "self.key.weight"),
                                    get(a + "self.value.weight")], axis=0)
            qkv_b = np.concatenate([get(a + "self.query.bias") * scale, get(a + "self.key.bias"),
                                    get(a + "self.value.bias")])
            layers.append(_Layer(
                qkv_w=np.ascontiguousarray(qkv_w.T), qkv_b=qkv_b,
                out_w=np.ascontiguousarray(get(a + "output.dense.weight").T), out_b=get(a + "output.dense.bias").copy(),
                ln1_w=get(a + "output.LayerNorm.weight").copy(), ln1_b=get(a + "output.LayerNorm.bias").copy(),
                up_w=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                up_b=get(p + "intermediate.dense.bias").copy(),
                down_w=np.ascontiguousarray(get(p + "output.dense.weight").T), down_b=get(p + "output.dense.bias").copy(),
                ln2_w=get(p + "output.LayerNorm.weight").copy(), ln2_b=get(p + "output.LayerNorm.bias").copy(),
            ))
        self._layers = tuple(layers)
        # Everything but the word embeddings was copied (transposed, fused); the embeddings stay mapped and
        # only looked-up rows are read. Without this the copied tensors' pages would count twice in RSS.
        word_name = prefix + "embeddings.word_embeddings.weight"
        release_mapped([t for name, t in tensors.items() if name != word_name])
        tok = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(max_length=cfg.max_seq_length)  # counts [CLS] and [SEP], as sentence-transformers
        self._tokenizer = tok

    @property
    def dims(self) -> int:
        """Vector size."""
        return self.config.hidden

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids per text as the model reads them: [CLS] … [SEP], truncated to ``max_seq_length``."""
        return [list(e.ids) for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def encode(self, texts: Sequence[str], batch_tokens: int = _BATCH_TOKENS, workers: int = 1) -> F32:
        """Unit-length float32 vectors, one row per text, in input order.

        Args:
            texts: The texts (any length; each is truncated to ``max_seq_length`` word-pieces).
            batch_tokens: Padded tokens per forward pass; texts of similar length are batched together.
            workers: Threads running forward passes side by side (numpy releases the GIL in its loops).

        Returns:
            An array of shape ``(len(texts), dims)``.
        """
        import numpy as np

        ids = self.token_ids(texts)
        out = np.zeros((len(ids), self.dims), dtype=np.float32)
        groups = plan_batches([len(seq) for seq in ids], batch_tokens)

        def run(group: list[int]) -> None:
            out[group] = self._forward([ids[i] for i in group])

        if workers > 1 and len(groups) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(workers, len(groups)), thread_name_prefix="minilm") as pool:
                for done in [pool.submit(run, g) for g in groups]:
                    done.result()
        else:
            for group in groups:
                run(group)
        return out

    def _forward(self, batch: list[list[int]]) -> F32:
        """Pooled, normalised vectors for a batch of token-id lists (padded here to the longest)."""
        import numpy as np

        cfg = self.config
        n, length, hidden = len(batch), max(len(b) for b in batch), cfg.hidden
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self._word[ids.reshape(-1)]  # gather: a fresh [n·L, hidden] array
        x.reshape(n, length, hidden)[...] += self._pos_type[:length]
        _layer_norm_(x, *self._emb_ln, cfg.eps)
        key_bias = None
        if any(len(b) < length for b in batch):
            key_bias = ((1.0 - mask) * _MASKED).astype(np.float32)[:, None, None, :]  # [n, 1, 1, L]
        for layer in self._layers:
            x = self._layer(x, layer, n, length, key_bias)
        summed = np.einsum("nlh,nl->nh", x.reshape(n, length, hidden), mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        result: F32 = (pooled / norms).astype(np.float32)
        return result

    def _layer(self, x: F32, layer: _Layer, n: int, length: int, key_bias: F32 | None) -> F32:
        """One encoder layer on ``x`` ([n·L, hidden]); returns a new array."""
        import numpy as np

        cfg = self.config
        hidden, heads = cfg.hidden, cfg.heads
        head_dim = hidden // heads
        qkv = x @ layer.qkv_w
        qkv += layer.qkv_b
        # [n, L, 3, heads, d] → q, v [n, heads, L, d] and k [n, heads, d, L]; contiguous copies, because
        # numpy's stacked matmul skips BLAS for strided operands (measured 300x slower).
        qkv5 = qkv.reshape(n, length, 3, heads, head_dim)
        q = np.ascontiguousarray(qkv5[:, :, 0].transpose(0, 2, 1, 3))
        k = np.ascontiguousarray(qkv5[:, :, 1].transpose(0, 2, 3, 1))
        v = np.ascontiguousarray(qkv5[:, :, 2].transpose(0, 2, 1, 3))
        ctx = np.empty((n, length, heads, head_dim), dtype=np.float32)
        step = max(1, _SCORE_BUDGET // (heads * length * length))
        for s in range(0, n, step):
            e = min(n, s + step)
            scores = np.matmul(q[s:e], k[s:e])  # [b, heads, L, L], already scaled by 1/√d through q
            if key_bias is not None:
                scores += key_bias[s:e]
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            weighted = np.matmul(scores, v[s:e])
            weighted /= scores.sum(axis=-1, keepdims=True)  # softmax's division, on [L, d] rather than [L, L]
            ctx[s:e] = weighted.transpose(0, 2, 1, 3)
        attn = ctx.reshape(n * length, hidden) @ layer.out_w
        attn += layer.out_b
        attn += x
        _layer_norm_(attn, layer.ln1_w, layer.ln1_b, cfg.eps)
        out = np.empty_like(attn)
        for r in range(0, attn.shape[0], _FFN_ROWS):
            block = attn[r : r + _FFN_ROWS]
            up = block @ layer.up_w
            up += layer.up_b
            gelu_(up)
            down = np.matmul(up, layer.down_w, out=out[r : r + _FFN_ROWS])
            down += layer.down_b
            down += block
        _layer_norm_(out, layer.ln2_w, layer.ln2_b, cfg.eps)
        return out
