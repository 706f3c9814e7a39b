"""Cues that a person's sentence is worth keeping: what a flush drafts, in the languages the model reads.

The extractive drafter keeps a sentence the person said when one of these cues is in it, and files it under the
cue's kind. The cues are data, one table per language (:data:`CUE_TABLES`), each row ``(kind, regex)``:

``instruction``
    a standing instruction: "from now on", "always/never …", "remember that", "…こと" (a rule), "禁止", "以后",
    "od sada", "ab jetzt", "désormais", "a partir de ahora", "отныне" …
``identity``
    who the person is or what to call them: "call me X", "my name is", "僕を…と呼ぶ", "叫我", "zovi me",
    "nenn mich", "appelle-moi", "llámame", "me chame", "зови меня" …
``preference``
    what they like or prefer: "I prefer", "好き", "我喜欢", "više volim", "ich bevorzuge", "je préfère" …
``decision``
    what was decided: "we decided", "let's go with", "ことにした", "我们决定", "odlučili smo", "wir haben
    entschieden", "on a décidé", "decidimos", "мы решили" …
``plan``
    a plan, a to-do, a reminder or a dated event: "remind me", "I need to", "予定", "提醒我", "podseti me",
    "erinnere mich", "rappelle-moi", "recuérdame", "me lembre", "напомни мне" …, and a relative day ("tomorrow",
    "明日", "明天", "sutra", "morgen", "demain", "mañana", "amanhã", "завтра" …).
``fact``
    a fact about the person's people and projects: "my wife …", "our project uses …" (English only: the other
    languages' facts come with one of the cues above).

Patterns are matched case-insensitively against a cleaned sentence. ``\\b`` is Unicode-aware (Latin and Cyrillic
words); CJK patterns have no word boundaries, since those scripts write no spaces. Serbian comes in both its
scripts, Latin and Cyrillic, and both ekavian and ijekavian spellings where they differ.

:func:`classify` tries the kinds in :data:`KIND_ORDER` and returns the first that matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

KIND_ORDER = ("instruction", "identity", "preference", "decision", "plan", "fact", "when")
"""The order kinds are tried in; ``when`` (a sentence that only names a day) is filed as ``plan``."""

_WEEKDAYS_EN = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"

EN: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\bfrom now on\b|\bgoing forward\b|\bin (?:the )?future\b|\bdon'?t ever\b|\bdo not ever\b|"
     r"\bremember (?:that|to)\b|\bkeep in mind\b|\bmake sure (?:to|you)\b|"
     r"^(?:please )?(?:always|never)\b(?! mind)|\byou should (?:always|never)\b|"
     r"\b(?:always|never) (?:use|call|reply|answer|write|respond|send|ask|suggest|book|schedule)\b|"
     r"\bonly (?:change|edit|touch|write to|modify)\b|\bdon'?t (?:change|edit|touch|modify) (?:anything|any)\b"),
    ("identity",
     r"\bmy name is\b|\bcall me\b|\bI(?:'m| am) (?:a|an)\s+(?!bit\b|little\b|lot\b)\w|"
     r"\bI work (?:at|for|as|on|in)\b|\bI live in\b|\bI(?:'m| am) (?:from|based in|located in)\b|"
     r"\bmy (?:pronouns|birthday|email|e-mail|timezone|time zone|phone number|address)\b|"
     r"\bI(?:'m| am) \d{1,3} (?:years? old|yo)\b|\bI moved to\b|\bI was born\b"),
    ("preference",
     r"\bI (?:really |strongly |much |definitely )?(?:prefer|like|love|enjoy|hate|dislike|loathe|"
     r"can't stand|cannot stand)\b|\bI don'?t (?:like|want|enjoy|eat|drink)\b|"
     r"\bmy (?:favou?rite|preferred)\b|\bI(?:'d| would) rather\b|"
     r"\bI (?:always|never|usually)\b(?! (?:forget|forgot|mess|screw|lose|miss)\b)|"
     r"\bI(?:'m| am) (?:vegetarian|vegan|allergic|lactose)\b"),
    ("decision",
     r"\bwe(?:'ve| have)? decided\b|\bI(?:'ve| have)? decided\b|\blet'?s go with\b|\bwe(?:'ll| will) use\b|"
     r"\bwe(?:'re| are) going with\b|\blet'?s use\b|\bwe(?:'ll| will) go with\b|\bdecision:|"
     r"\bwe agreed\b|\bwe(?:'re| are) switching to\b|\bI(?:'m| am) going with\b"),
    ("plan",
     r"\bremind me\b|\bto-?do\b|\bI need to\b|\bI have to\b|\bI must\b|\bI(?:'m| am) planning\b|"
     r"\bI plan to\b|\bdeadline\b|\bdue (?:on|by)\b|\bappointment\b"),
    ("fact",
     r"\bmy (?:wife|husband|partner|girlfriend|boyfriend|son|daughter|kids?|children|mom|mother|dad|"
     r"father|brother|sister|boss|manager|friend|colleague|coworker|co-worker|cofounder|co-founder|"
     r"team|dog|cat|doctor|landlord|neighbou?r)\b|"
     r"(?-i:\b(?!(?:This|That|It|Here|There|What|Which|Who|Where|He|She|Today|Tomorrow)\b)[A-Z][a-z]+) is my\b|"
     r"(?-i:\b[A-Z][a-z]+)'s birthday\b|"
     r"\b(?:the|our|my) (?:project|repo|repository|app|service|api|server|database|db|stack|deploy(?:ment)?|"
     r"website|site|company|startup|product|backend|frontend|cluster|budget|launch|release)\b.{0,80}?"
     r"\b(?:is|are|uses|runs|lives|was|has|needs)\b|"
     r"\bwe(?:'re| are) (?:using|building|migrating|moving|launching|hiring)\b|\bI(?:'m| am) (?:working on|building)\b"),
    ("when",
     rf"\bnext (?:week|month|year|{_WEEKDAYS_EN})\b|\btomorrow\b|\bthe day after tomorrow\b|"
     rf"\bon {_WEEKDAYS_EN}\b|\bby (?:{_WEEKDAYS_EN}|the end of)\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
     r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
     r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? \d{1,2}(?:st|nd|rd|th)?\b|\bmeeting (?:on|at)\b"),
)

JA: tuple[tuple[str, str], ...] = (
    # A rule written as "…こと" / "…ように" at the end, or "…を禁ずる/禁止", "…しないで", "必ず/常に/今後/以後…".
    ("instruction",
     r"(?:る|ぶ|う|く|ぐ|す|つ|ぬ|む|ない)こと$|ないように|禁ず|禁止|しないで|しないこと|"
     r"今後|以後|これからは|常に|必ず|絶対に|覚えておいて|忘れないで|"
     r"(?:のみ|だけ)(?:を)?(?:変更|編集|書き換え|更新)|以外(?:は|の)?(?:変更|編集|更新)"),
    ("identity",
     r"(?:僕|私|俺|わたし|あたし|ぼく|おれ)(?:のこと)?を.{1,20}?と(?:呼|よ)(?:ぶ|ん|べ)|と(?:呼|よ)んで|"
     r"(?:僕|私|俺|わたし|ぼく|おれ)の名前は|(?:僕|私|俺|わたし|ぼく|おれ)は.{1,20}?(?:に住んで|で働いて|出身)"),
    ("preference",
     r"(?:が|は|も)(?:大)?好き|(?:が|は)(?:大)?嫌い|苦手|の方が(?:いい|好き)|がいい(?:です)?$|派(?:です)?$"),
    ("decision", r"ことにし(?:た|ました)|に決め(?:た|ました)|に決定|決まり|でいこう|にしよう"),
    ("plan",
     r"予定|リマインド|思い出させて|知らせて|しなければ|しないといけない|しなきゃ|締め?切り|までに|"
     r"つもり"),
    ("when", r"明日|あした|明後日|あさって|来週|来月|今夜|今晩|[0-9０-９一二三四五六七八九十]+(?:日|週間)後"),
)

ZH: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"以后|今后|从现在(?:开始|起)|从今以后|永远不要|不要再|不许|不准|禁止|必须|一定要|总是|始终|记住|记得|"
     r"别忘了|不要忘记|只能|只允许|只(?:可以)?(?:修改|改|编辑)"),
    ("identity", r"叫我|称呼我|我叫|我的名字(?:是|叫)|我住在|我在.{1,20}?(?:工作|上班)|我是.{1,10}?人$"),
    ("preference", r"我(?:很|最|更|比较|不太|不)?(?:喜欢|爱|讨厌|偏好|倾向于)|我宁愿|我更想"),
    ("decision", r"(?:我们|我)决定|就用|就这么定|定了|决定(?:用|采用)|选择了"),
    ("plan", r"提醒我|我(?:需要|得|要|必须|打算|计划)|计划|截止|到期|之前(?:完成|做完)"),
    ("when", r"明天|后天|下(?:个)?(?:周|星期|礼拜)|下个?月|今晚|[0-9一二三四五六七八九十]+天(?:后|以后)"),
)

SR: tuple[tuple[str, str], ...] = (
    # Latin, then Cyrillic.
    ("instruction",
     r"\bod sada\b|\bubuduće\b|\bubuduce\b|\bu buduće\b|\buvek\b|\buvijek\b|\bnikad(?:a)?\b|\bzapamti\b|"
     r"\bne zaboravi\b|\bobavezno\b|\bnemoj(?:te)?\b|"
     r"\bод сада\b|\bубудуће\b|\bувек\b|\bувијек\b|\bникад(?:а)?\b|\bзапамти\b|\bне заборави\b|\bобавезно\b|"
     r"\bнемој(?:те)?\b"),
    ("identity",
     r"\bzovi me\b|\bzovem se\b|\bmoje ime je\b|\bživim u\b|\bradim (?:u|kao|za)\b|\bja sam iz\b|"
     r"\bзови ме\b|\bзовем се\b|\bмоје име је\b|\bживим у\b|\bрадим (?:у|као|за)\b|\bја сам из\b"),
    ("preference",
     r"\b(?:ne |više |najviše )?volim\b|\bmrzim\b|\bdraže mi je\b|\bpreferiram\b|\bviše mi odgovara\b|"
     r"\b(?:не |више |највише )?волим\b|\bмрзим\b|\bдраже ми је\b|\bпреферирам\b"),
    ("decision",
     r"\bodlučili smo\b|\bodlučio sam\b|\bodlučila sam\b|\bidemo sa\b|\bkoristićemo\b|\bdogovorili smo\b|"
     r"\bодлучили смо\b|\bодлучио сам\b|\bодлучила сам\b|\bидемо са\b|\bкористићемо\b|\bдоговорили смо\b"),
    ("plan",
     r"\bpodseti me\b|\bpodsjeti me\b|\bmoram\b|\btreba da\b|\bplaniram\b|\brok\b|\btermin\b|"
     r"\bподсети ме\b|\bподсјети ме\b|\bморам\b|\bтреба да\b|\bпланирам\b|\bрок\b|\bтермин\b"),
    ("when",
     r"\bsutra\b|\bprekosutra\b|\bsledeće nedelje\b|\bsljedeće sedmice\b|\bsledeće sedmice\b|\biduće nedelje\b|"
     r"\bсутра\b|\bпрекосутра\b|\bследеће недеље\b|\bсљедеће седмице\b|\bследеће седмице\b|\bидуће недеље\b"),
)

DE: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\bab jetzt\b|\bvon nun an\b|\bab sofort\b|\bkünftig\b|\bin zukunft\b|^(?:bitte )?(?:immer|nie|niemals)\b|"
     r"\bmerk dir\b|\bdenk daran\b|\bvergiss nicht\b|\bdenke immer\b"),
    ("identity",
     r"\bnenn(?:e)? mich\b|\bich heiße\b|\bmein name ist\b|\bich wohne in\b|\bich arbeite (?:bei|als|in)\b|"
     r"\bich komme aus\b"),
    ("preference",
     r"\bich mag\b|\bich bevorzuge\b|\bich (?:hätte|trinke|esse) lieber\b|\bich hasse\b|\bmein lieblings|"
     r"\bich (?:liebe|mag keine?n?)\b"),
    ("decision",
     r"\bwir haben (?:uns )?(?:entschieden|beschlossen)\b|\bich habe mich entschieden\b|\bwir nehmen\b|"
     r"\bwir verwenden\b|\bwir bleiben bei\b"),
    ("plan", r"\berinnere mich\b|\bich muss\b|\bich plane\b|\bich habe vor\b|\bfrist\b|\btermin\b|\bdeadline\b"),
    ("when", r"\bübermorgen\b|(?<!guten )(?<!heute )\bmorgen\b|\bnächste woche\b|\bnächsten (?:monat|montag|"
             r"dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\b"),
)

FR: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\bà partir de maintenant\b|\bdésormais\b|\bdorénavant\b|^(?:toujours|jamais|ne jamais)\b|"
     r"\bsouviens-toi\b|\bn'oublie pas\b|\bretiens (?:que|bien)\b|\bà l'avenir\b"),
    ("identity",
     r"\bappelle-moi\b|\bje m'appelle\b|\bmon nom est\b|\bj'habite\b|\bje vis à\b|\bje travaille (?:chez|comme|à)\b"),
    ("preference",
     r"\bje préfère\b|\bj'aime\b|\bje n'aime pas\b|\bje déteste\b|\bj'adore\b|\b(?:mon|ma) \w+ préférée?\b"),
    ("decision",
     r"\bon a décidé\b|\bnous avons décidé\b|\bj'ai décidé\b|\bon part sur\b|\bon utilise\b|\bon garde\b"),
    ("plan", r"\brappelle-moi\b|\bje dois\b|\bil faut que je\b|\bje prévois\b|\bje compte\b|\bdate limite\b"),
    ("when", r"\bdemain\b|\baprès-demain\b|\bla semaine prochaine\b|\ble mois prochain\b"),
)

ES: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\ba partir de ahora\b|\bde ahora en adelante\b|^(?:siempre|nunca)\b|\brecuerda (?:que|siempre)\b|"
     r"\bno olvides\b|\bacuérdate\b|\ben el futuro\b"),
    ("identity",
     r"\bllámame\b|\bme llamo\b|\bmi nombre es\b|\bvivo en\b|\btrabajo (?:en|como|para)\b|\bsoy de\b"),
    ("preference",
     r"\bprefiero\b|\b(?:no )?me gusta(?:n)?\b|\bodio\b|\bme encanta(?:n)?\b|\bmi \w+ favorit[oa]\b"),
    ("decision",
     r"\bdecidimos\b|\bhemos decidido\b|\bhe decidido\b|\bvamos con\b|\busaremos\b|\bnos quedamos con\b"),
    ("plan", r"\brecuérdame\b|\btengo que\b|\bnecesito\b|\bplaneo\b|\bpienso\b|\bfecha límite\b"),
    ("when", r"\bpasado mañana\b|(?<!la )(?<!de )\bmañana\b|\bla próxima semana\b|\bla semana que viene\b"),
)

PT: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\ba partir de agora\b|\bde agora em diante\b|^(?:sempre|nunca)\b|\blembre-se\b|\bnão (?:se )?esqueça\b|"
     r"\bno futuro\b"),
    ("identity",
     r"\bme chame\b|\bchame-me\b|\bme chamo\b|\bmeu nome é\b|\bmoro em\b|\btrabalho (?:na|no|em|como|para)\b|"
     r"\bsou de\b"),
    ("preference", r"\bprefiro\b|\b(?:eu )?(?:não )?gosto\b|\bodeio\b|\badoro\b|\b(?:meu|minha) \w+ favorit[oa]\b"),
    ("decision", r"\bdecidimos\b|\bdecidi\b|\bvamos com\b|\bvamos usar\b|\bficamos com\b"),
    ("plan", r"\bme lembre\b|\blembre-me\b|\bme lembra\b|\bpreciso\b|\btenho que\b|\bplanejo\b|\bprazo\b"),
    ("when", r"\bamanhã\b|\bdepois de amanhã\b|\bsemana que vem\b|\bpróxima semana\b"),
)

RU: tuple[tuple[str, str], ...] = (
    ("instruction",
     r"\bс этого момента\b|\bотныне\b|\bвпредь\b|\bв будущем\b|^(?:всегда|никогда)\b|\bзапомни\b|"
     r"\bне забудь\b|\bобязательно\b|\bникогда не\b"),
    ("identity",
     r"\bзови меня\b|\bназывай меня\b|\bменя зовут\b|\bмо[её] имя\b|\bя живу в\b|\bя работаю (?:в|на|как)\b|"
     r"\bя из\b"),
    ("preference", r"\bя предпочитаю\b|\bмне (?:не )?нравится\b|\bя (?:не )?люблю\b|\bя ненавижу\b|\bтерпеть не могу\b"),
    ("decision", r"\bмы решили\b|\bя решил(?:а)?\b|\bберём\b|\bбудем использовать\b|\bостановимся на\b"),
    ("plan", r"\bнапомни(?:те)? мне\b|\bмне (?:нужно|надо)\b|\bя должн(?:а|ы)?\b|\bя должен\b|\bпланирую\b|\bдедлайн\b|"
             r"\bсрок\b"),
    ("when", r"\bзавтра\b|\bпослезавтра\b|\bна следующей неделе\b|\bв следующем месяце\b"),
)

CUE_TABLES: Mapping[str, tuple[tuple[str, str], ...]] = {
    "en": EN, "ja": JA, "zh": ZH, "sr": SR, "de": DE, "fr": FR, "es": ES, "pt": PT, "ru": RU,
}
"""Every language's cue table: ``{language: ((kind, regex), …)}``."""


def _compile() -> tuple[tuple[str, re.Pattern[str]], ...]:
    rules: list[tuple[str, re.Pattern[str]]] = []
    for kind in KIND_ORDER:
        parts = [f"(?:{regex})" for table in CUE_TABLES.values() for row_kind, regex in table if row_kind == kind]
        if parts:
            rules.append((kind, re.compile("|".join(parts), re.I)))
    return tuple(rules)


RULES = _compile()
"""``(kind, pattern)`` in :data:`KIND_ORDER`, each pattern every language's cues for that kind."""


def classify(text: str) -> str | None:
    """The kind of memory ``text`` (a cleaned sentence the person said) is, or None when no cue is in it.

    A sentence that only names a day ("tomorrow", "明日") is a ``plan``.
    """
    for kind, pattern in RULES:
        if pattern.search(text):
            return "plan" if kind == "when" else kind
    return None
