"""The engine's word lists and character classes, in one place: English function words and CJK characters.

A base-layer module (it imports nothing from the engine): the chunker, the FTS transform, the query parser,
the review's statement words and the note-name slugs read their lists and patterns here.
"""

from __future__ import annotations

import re

FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
    each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
    most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves""".split()
)
"""English function words: they say nothing about what a text is about (the base of every list below)."""

SEARCH_STOP_WORDS = (FUNCTION_WORDS - {"will"}) | frozenset(
    # contraction pieces a query splits into ("don't" → "don", "t"), and words in nearly every chat line
    "s t d ll m o re ve y ever also just like get got yes".split()
)
"""Words a search query drops: they match nearly every chunk and only add noise to BM25. "will" stays a term
(the list the search was measured with never had it: "Will" is a name, "last will" a thing)."""

MODAL_WORDS = frozenset("must might may shall likely probably maybe perhaps".split())
"""Modal and hedge words a query may also drop (``SearchHeuristics.modal_stop_words``, off by default): they say how
sure the asker is, not what the note is about. "will" is not one of them (see :data:`SEARCH_STOP_WORDS`); "may"
is also a month, which the date reader finds in the query text whatever the terms are."""

REVIEW_STOP_WORDS = FUNCTION_WORDS | frozenset(
    # filler of a memory statement, and the words of its cadence ("weekly reminder"), which say nothing of
    # whether two statements are about the same thing
    """already always currently d daily e eg etc every fyi g get gets getting got ie just let lets ll m made
    make makes may might mine month monthly months must never note now one onto per quite re really reminder s
    see shall still t two us usually ve via week weekly weeks whose without year years yet""".split()
)
"""Words the review leaves out of a statement's content words (duplicates, conflicts, promotions)."""

SERBIAN_FUNCTION_WORDS = frozenset(
    """a ali bi bio bila bilo biti da do ga i ih im iz je jer joj još kad kada kao ko koja koje koji li mu na
    ne nego o od ona one oni ono ova ove ovaj ovo po pri sa sam se si smo ste su sve svi ta taj te ti to u uz
    već za što""".split()
)
"""Serbian function words (in Latin script: the review reads Cyrillic transliterated)."""
REVIEW_STOP_WORDS = REVIEW_STOP_WORDS | SERBIAN_FUNCTION_WORDS

SLUG_STOP_WORDS = FUNCTION_WORDS | frozenset(
    # chat filler, and words of asking and telling, that make poor note names
    """just like get got want need know think make sure yes yeah yep nope okay ok thanks thank please hi
    hello hey bye cool great nice good well really actually maybe also one two lol haha sorry right
    user assistant can could would should shall may might must let lets gonna wanna tell say said see
    use used using go going went come back now today tomorrow yesterday thing things something
    anything everything way lot bit much many still even already yet again here there done help
    talk talked talking ask asked asking says told wanted needed prefer prefers preferred love hate""".split()
)
"""Words a session note's name (slug) skips."""

CJK_CHARS = "\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f\u3040-\u30ff\uff66-\uff9f"
"""The CJK ranges (ideographs, kana, hangul, their radicals and compatibility forms), as a character class body."""

CJK_RE = re.compile(f"[{CJK_CHARS}]")
"""One CJK character."""

CJK_RUN_RE = re.compile(f"[{CJK_CHARS}]+")
"""A run of CJK characters (the FTS transform splits each run into bigrams)."""

SERBIAN_CYRILLIC = {
    **dict(zip("абвгдђежзијклмнопрстћуфхцчшАБВГДЂЕЖЗИЈКЛМНОПРСТЋУФХЦЧШ",
               "abvgdđežzijklmnoprstćufhcčšABVGDĐEŽZIJKLMNOPRSTĆUFHCČŠ", strict=True)),
    "љ": "lj", "њ": "nj", "џ": "dž", "Љ": "Lj", "Њ": "Nj", "Џ": "Dž",
}
"""Serbian Cyrillic letter → its Latin spelling (one language in two scripts: "Драган" is "Dragan"); the review
transliterates with it, the date reader folds it further to ASCII."""
