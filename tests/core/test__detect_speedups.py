"""The shortcuts of ``classify/_detect.py``'s clean fast path say what the rules they stand for say.

``_suspect_word_in`` groups the suspect words by a common part so that a clean head
is scanned fewer times; the bare-exception pattern runs only on a text that ends with
an exception's class name.  Both are checked against the plain statements on texts
built from the very fragments they look for.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolmend.classify import _detect as detect

FRAGMENTS = [
    *detect._SUSPECT_WORDS,
    "Error", "Exception", "Timeout", "timeout", "imeout", "()", "(", ")", ":", ": ", "ailed",
    "iolation", ".", "Value", "os.", "x", " ", "\n", "\t", "\u2003", "_", "9",
]  # fmt: skip

texts = st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join)


@settings(max_examples=1000, deadline=None)
@given(texts)
@example("ValueError(")
@example("a() b")
@example("x.timeout: 5")
@example("Validation failed: ")
def test_the_grouped_words_are_the_suspect_words(head: str) -> None:
    assert detect._suspect_word_in(head) == any(w in head for w in detect._SUSPECT_WORDS)


@settings(max_examples=1000, deadline=None)
@given(texts)
@example("ValueError \u2003\n")
@example("os.OSError")
@example("KeyboardInterruptException")
def test_a_bare_exception_ends_with_its_class_name(text: str) -> None:
    stripped = text.lstrip()
    if detect._BARE_EXCEPTION.fullmatch(stripped) is not None:
        assert stripped.rstrip().endswith(detect._EXCEPTION_ENDS)
