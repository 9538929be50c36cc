"""The candidate sentences of ``blind.jsonl``, rebuilt from the blind batches.

Usage: PYTHONPATH=packages/core/src python corpus/actionable/extract_blind.py > candidates.jsonl

Each error text of ``corpus/realworld/fresh2.jsonl`` .. ``fresh8.jsonl`` is cut with
the filter's own splitter (:func:`toolmend.deliver._actionable.sentences`, never its
decision), and a sentence is a candidate when it reads like advice: it opens with an
imperative verb (after a ``hint:``-style prefix) or holds an advice phrase ("you can",
"please", "make sure", "did you mean", "for more information").  Identical sentences
are kept once.  The candidates were then labelled by hand, without running the filter
on them: ``developer`` (only a person can take the step), ``model`` (the agent can, with
its tools), or left out when the sentence states no step; see ``BLIND.md``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from toolmend.deliver._actionable import sentences

ROOT = Path(__file__).resolve().parent.parent.parent
VERB = (
    r"please|kindly|try|retry|check|double-check|make\s+sure|ensure|verify|set|unset|run|re-?run|use"
    r"|contact|install|reinstall|see|visit|consider|specify|provide|add|remove|update|upgrade|enable"
    r"|disable|increase|reduce|decrease|wait|call|pass|change|create|delete|refer|read|go|rename|select"
    r"|choose|fix|correct|review|restart|configure|export|include|omit|supply|log\s*in|login|sign\s+in"
    r"|ask|report|open|file|reach\s+out|email|submit|resubmit|request|confirm|grant|give|allow|switch"
    r"|move|start|stop|adjust|lower|raise|limit|split|shorten|drop|avoid|do\s+not|don't|never|instead"
    r"|navigate|follow|append|prefix|replace|download|obtain|generate|regenerate|refresh|renew|rotate"
    r"|reauthenticate|authenticate|modify|edit|define|declare|import|mount|initialize|init|pull|push"
    r"|commit|stash|resolve|abort|skip|purchase|buy|top\s+up|migrate|wrap|quote|escape|encode|send"
    r"|repeat|look|free|clean|close|reopen|save|connect|reconnect|await|pick|enter|type|put|attach"
    r"|upload|accept|register|apply|list|query|inspect"
)
LEAD = (
    r"^\W*(?:(?:hint|note|remote|warning|tip|help|error|npm\s+error|npm\s+ERR!|suggestion|solution"
    r"|fix)\s*:?\s*)?\W*"
)
IMPERATIVE = re.compile(LEAD + rf"(?:{VERB})\b", re.IGNORECASE)
ADVICE = re.compile(
    r"\b(?:you\s+(?:can|could|should|must|may|might|need\s+to|have\s+to|will\s+need|'ll\s+need"
    r"|probably\s+want|want\s+to)|please|try\s+(?:again|later|to|using|a|the|setting|running"
    r"|increasing|reducing)|make\s+sure|did\s+you\s+mean|for\s+more\s+(?:information|details|info)"
    r"|for\s+details|to\s+(?:fix|resolve|solve|enable|avoid|override|disable|use|install|learn)\b"
    r"|consider\s+\w+ing|it\s+is\s+recommended|recommended\s+to|perhaps\s+you|maybe\s+you"
    r"|suggestion|hint\s*:)",
    re.IGNORECASE,
)


def is_candidate(sentence: str) -> bool:
    """Whether a sentence reads like advice (8 to 600 characters)."""
    text = sentence.strip()
    if not 8 <= len(text) <= 600:
        return False
    return bool(IMPERATIVE.search(text) or ADVICE.search(text))


def candidates() -> list[dict[str, object]]:
    """Every candidate sentence of the blind batches, first occurrence of each text."""
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for n in range(2, 9):
        path = ROOT / "corpus" / "realworld" / f"fresh{n}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            text = row.get("content")
            if not isinstance(text, str):
                text = json.dumps(text, ensure_ascii=False)
            for position, (a, b) in enumerate(sentences(text)):
                sentence = text[a:b].strip()
                if sentence in seen or not is_candidate(sentence):
                    continue
                seen.add(sentence)
                out.append(
                    {
                        "id": f"{row['id']}#{position}",
                        "row": row["id"],
                        "position": position,
                        "batch": f"fresh{n}",
                        "source": row.get("source", ""),
                        "text": sentence,
                    }
                )
    return out


if __name__ == "__main__":
    for item in candidates():
        sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")
