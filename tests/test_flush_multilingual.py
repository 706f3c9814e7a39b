"""The extractive flush in the languages the model reads: what a person would keep is drafted in their own words
(instructions, identity, preferences, decisions, plans), chit-chat, questions and what only the assistant claimed
are dropped, and relative times are resolved against the turn's own time."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from engine.memory.cues import CUE_TABLES, classify
from engine.memory.drafting import draft_extractive
from engine.memory.reltime import resolve_relative
from engine.sessions.model import Transcript
from engine.sessions.reader import read_transcript

SAID = "2026-11-12T10:00:00Z"  # a Thursday
THU = date(2026, 11, 12)


def _line(**obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _msg(role: str, text: str, ts: str = SAID) -> str:
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    return _line(type="message", timestamp=ts, message={"role": role, "content": content})


def _transcript(tmp_path: Path, rows: list[str]) -> Transcript:
    path = tmp_path / "3f2a9c1e-aaaa-bbbb.jsonl"
    header = _line(type="session", version=3, id="3f2a9c1e", timestamp=SAID, cwd="/")
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return read_transcript(path)


def _drafted(tmp_path: Path, rows: list[str]) -> list[tuple[str, str]]:
    return [(item.kind, item.text) for item in draft_extractive(_transcript(tmp_path, rows)).items]


KEPT = [
    # Japanese: a rule written as "…こと", a prohibition, a plan with 明日, a preference.
    ("僕をボブにゃんとよぶこと", "instruction", "僕をボブにゃんとよぶこと"),
    ("MEMORY.md以外の変更を禁ずる", "instruction", "MEMORY.md以外の変更を禁ずる"),
    ("明日の10時に歯医者の予定がある。", "plan", "明日(Fri 13 Nov)の10時に歯医者の予定がある"),
    ("私はコーヒーが好きです。", "preference", "私はコーヒーが好きです"),
    ("PostgreSQLを使うことにした。", "decision", "PostgreSQLを使うことにした"),
    # Chinese.
    ("以后请用中文回答我。", "instruction", "以后请用中文回答我"),
    ("叫我小李。", "identity", "叫我小李"),
    ("我喜欢喝绿茶。", "preference", "我喜欢喝绿茶"),
    ("我们决定用PostgreSQL。", "decision", "我们决定用PostgreSQL"),
    ("明天下午三点提醒我给妈妈打电话。", "plan", "明天(Fri 13 Nov)下午三点提醒我给妈妈打电话"),
    # Serbian, Latin and Cyrillic.
    ("Od sada mi odgovaraj na srpskom.", "instruction", "Od sada mi odgovaraj na srpskom"),
    ("Zovi me Bobe.", "identity", "Zovi me Bobe"),
    ("Više volim čaj nego kafu.", "preference", "Više volim čaj nego kafu"),
    ("Odlučili smo da koristimo Postgres.", "decision", "Odlučili smo da koristimo Postgres"),
    ("Podseti me sutra u 9 da platim račun.", "plan", "Podseti me sutra (Fri 13 Nov) u 9 da platim račun"),
    ("Од сада ми одговарај на српском.", "instruction", "Од сада ми одговарај на српском"),
    ("Зови ме Бобе.", "identity", "Зови ме Бобе"),
    ("Подсети ме сутра у 9 да платим рачун.", "plan", "Подсети ме сутра (Fri 13 Nov) у 9 да платим рачун"),
    # German.
    ("Ab jetzt bitte immer auf Deutsch antworten.", "instruction", "Ab jetzt bitte immer auf Deutsch antworten"),
    ("Nenn mich Bob.", "identity", "Nenn mich Bob"),
    ("Ich bevorzuge Tee.", "preference", "Ich bevorzuge Tee"),
    ("Wir haben entschieden, Postgres zu nehmen.", "decision", "Wir haben entschieden, Postgres zu nehmen"),
    ("Erinnere mich morgen an den Zahnarzt.", "plan", "Erinnere mich morgen (Fri 13 Nov) an den Zahnarzt"),
    # French.
    ("Désormais, réponds-moi en français.", "instruction", "Désormais, réponds-moi en français"),
    ("Appelle-moi Bob.", "identity", "Appelle-moi Bob"),
    ("Je préfère le thé.", "preference", "Je préfère le thé"),
    ("On a décidé d'utiliser Postgres.", "decision", "On a décidé d'utiliser Postgres"),
    ("Rappelle-moi demain d'appeler maman.", "plan", "Rappelle-moi demain (Fri 13 Nov) d'appeler maman"),
    # Spanish.
    ("A partir de ahora, contéstame en español.", "instruction", "A partir de ahora, contéstame en español"),
    ("Llámame Bob.", "identity", "Llámame Bob"),
    ("Prefiero el té.", "preference", "Prefiero el té"),
    ("Decidimos usar Postgres.", "decision", "Decidimos usar Postgres"),
    ("Recuérdame mañana llamar a mamá.", "plan", "Recuérdame mañana (Fri 13 Nov) llamar a mamá"),
    # Portuguese.
    ("A partir de agora responda em português.", "instruction", "A partir de agora responda em português"),
    ("Me chame de Bob.", "identity", "Me chame de Bob"),
    ("Eu prefiro chá.", "preference", "Eu prefiro chá"),
    ("Me lembre amanhã de ligar para a mamãe.", "plan", "Me lembre amanhã (Fri 13 Nov) de ligar para a mamãe"),
    # Russian.
    ("Отныне отвечай мне по-русски.", "instruction", "Отныне отвечай мне по-русски"),
    ("Зови меня Боб.", "identity", "Зови меня Боб"),
    ("Я предпочитаю чай.", "preference", "Я предпочитаю чай"),
    ("Мы решили использовать PostgreSQL.", "decision", "Мы решили использовать PostgreSQL"),
    ("Напомни мне завтра позвонить маме.", "plan", "Напомни мне завтра (Fri 13 Nov) позвонить маме"),
]


@pytest.mark.parametrize(("said", "kind", "text"), KEPT)
def test_what_the_person_said_is_kept_in_their_language(tmp_path: Path, said: str, kind: str, text: str) -> None:
    assert _drafted(tmp_path, [_msg("user", said)]) == [(kind, text)]


DROPPED = [
    "ありがとう！", "今日はいい天気ですね。", "これは何ですか？",
    "谢谢！", "你好吗？",
    "Hvala, super!", "Kako si?", "Хвала!",
    "Danke schön!", "Wie geht's?",
    "Merci beaucoup !", "Ça va ?",
    "¡Gracias!", "¿Qué tal?",
    "Obrigado!", "Tudo bem?",
    "Спасибо!", "Как дела?",
]


@pytest.mark.parametrize("said", DROPPED)
def test_chit_chat_and_questions_are_dropped(tmp_path: Path, said: str) -> None:
    assert _drafted(tmp_path, [_msg("user", said)]) == []


@pytest.mark.parametrize("claim", [
    "今後は常に日本語で答えます。",  # the assistant's own rule: never said by the person
    "我以后总是用中文回答。",
    "Od sada uvek odgovaram na srpskom.",
    "Ab jetzt antworte ich immer auf Deutsch.",
    "Je préfère le thé.",
    "Мы решили использовать PostgreSQL.",
])
def test_nothing_only_the_assistant_claimed(tmp_path: Path, claim: str) -> None:
    rows = [_msg("user", "こんにちは"), _msg("assistant", claim)]
    assert _drafted(tmp_path, rows) == []


def test_a_japanese_turn_is_split_at_its_full_stops(tmp_path: Path) -> None:
    said = "こんにちは。僕をボブにゃんとよぶこと。今日は晴れですね！USER.mdも僕の承認のみ変更。"
    assert _drafted(tmp_path, [_msg("user", said)]) == [
        ("instruction", "僕をボブにゃんとよぶこと"), ("instruction", "USER.mdも僕の承認のみ変更")]


def test_a_short_japanese_sentence_is_not_noise(tmp_path: Path) -> None:
    """Content words count CJK characters: a Japanese sentence has no spaces but is not one word."""
    assert _drafted(tmp_path, [_msg("user", "猫が好き。")]) == [("preference", "猫が好き")]


@pytest.mark.parametrize(("text", "resolved"), [
    ("remind me tomorrow at 08:30", "remind me tomorrow (Fri 13 Nov) at 08:30"),
    ("next week we ship", "next week (Mon 16 – Sun 22 Nov) we ship"),
    ("in 3 days", "in 3 days (Sun 15 Nov)"),
    ("in two weeks", "in two weeks (Thu 26 Nov)"),
    ("on Friday", "on Friday (Fri 13 Nov)"),
    ("next Tuesday", "next Tuesday (Tue 17 Nov)"),
    ("the day after tomorrow", "the day after tomorrow (Sat 14 Nov)"),
    ("tonight", "tonight (Thu 12 Nov)"),
    ("this weekend", "this weekend (Sat 14 – Sun 15 Nov)"),
    ("next month", "next month (December 2026)"),
    ("来週の月曜日", "来週の月曜日(Mon 16 Nov)"),
    ("3日後に", "3日後(Sun 15 Nov)に"),
    ("明後日", "明後日(Sat 14 Nov)"),
    ("下周一", "下周一(Mon 16 Nov)"),
    ("3天后", "3天后(Sun 15 Nov)"),
    ("sledeće nedelje", "sledeće nedelje (Mon 16 – Sun 22 Nov)"),
    ("prekosutra", "prekosutra (Sat 14 Nov)"),
    ("послезавтра", "послезавтра (Sat 14 Nov)"),
    ("nächste Woche", "nächste Woche (Mon 16 – Sun 22 Nov)"),
    ("übermorgen", "übermorgen (Sat 14 Nov)"),
    ("la semaine prochaine", "la semaine prochaine (Mon 16 – Sun 22 Nov)"),
    ("après-demain", "après-demain (Sat 14 Nov)"),
    ("pasado mañana", "pasado mañana (Sat 14 Nov)"),
    ("depois de amanhã", "depois de amanhã (Sat 14 Nov)"),
    # Never rewrite what cannot be resolved, nor what already says its day.
    ("in a while", "in a while"),
    ("someday", "someday"),
    ("tomorrow (Fri 13 Nov) at 8", "tomorrow (Fri 13 Nov) at 8"),
])
def test_relative_times_resolve_against_the_day_said(text: str, resolved: str) -> None:
    assert resolve_relative(text, THU) == resolved


def test_the_day_said_is_read_in_the_clock_zone() -> None:
    evening = datetime(2026, 11, 12, 19, 54, tzinfo=UTC)  # already Fri 13 Nov in Tokyo
    assert resolve_relative("tomorrow", evening, UTC) == "tomorrow (Fri 13 Nov)"
    assert resolve_relative("tomorrow", evening, ZoneInfo("Asia/Tokyo")) == "tomorrow (Sat 14 Nov)"
    assert resolve_relative("tomorrow", None) == "tomorrow"


def test_each_turn_resolves_against_its_own_time(tmp_path: Path) -> None:
    rows = [_msg("user", "Remind me tomorrow to call the bank.", "2026-11-12T10:00:00Z"),
            _msg("user", "Напомни мне завтра позвонить маме.", "2026-11-20T10:00:00Z")]
    assert [text for _, text in _drafted(tmp_path, rows)] == [
        "Remind me tomorrow (Fri 13 Nov) to call the bank", "Напомни мне завтра (Sat 21 Nov) позвонить маме"]


def test_every_language_has_a_cue_table() -> None:
    assert {"en", "ja", "zh", "sr", "de", "fr", "es", "pt", "ru"} <= set(CUE_TABLES)
    assert classify("call me Bob") == "identity" and classify("what a day") is None
