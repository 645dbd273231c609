"""verify/shared/fastre.py: a first-character guard finds exactly the matches of the pattern it guards."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from verify.shared import cuda_errors
from verify.shared.fastre import guarded

pytestmark = pytest.mark.unit

CORPUS = Path(__file__).parent / "data" / "real-world"


def _raw_texts() -> list[str]:
    # every third excerpt (3.4 MB in all, each scanned twice): a second, not eight
    return [p.read_text(errors="replace") for p in sorted(CORPUS.glob("*/raw.txt"))[::3]]


def test_the_catalogs_guarded_words_match_exactly_what_the_unguarded_ones_match_on_every_raw_excerpt():
    plain = re.compile(cuda_errors._WORDS, re.IGNORECASE)
    assert cuda_errors.ANY_WORDS.pattern != plain.pattern          # the guard is in place (not the fall-back)
    texts = _raw_texts()
    assert len(texts) > 300
    seen = 0
    for text in texts:
        want = [m.span() for m in plain.finditer(text)]
        assert [m.span() for m in cuda_errors.ANY_WORDS.finditer(text)] == want
        seen += len(want)
    assert seen > 30                                            # the excerpts hold CUDA errors to find


@pytest.mark.parametrize("pattern, text", [
    (r"abc|\bdef|x{2,}", "zz abc def xxx abx"),
    (r"(?:ECC|nvlink) error", "an ecc ERROR, an NVLink error, ſomething"),
    (r"[a-c]at|dog", "bat cat dog eat"),
])
def test_a_guard_finds_the_same_matches(pattern, text):
    for flags in (0, re.IGNORECASE):
        plain = re.compile(pattern, flags)
        assert [m.span() for m in guarded(plain).finditer(text)] == [m.span() for m in plain.finditer(text)]


@pytest.mark.parametrize("pattern", [r"\w+ error", r"(?:x)?abc", r"[^a]bc", r"a*b", r".x"])
def test_a_pattern_whose_first_character_is_not_known_is_left_as_it_is(pattern):
    plain = re.compile(pattern)
    assert guarded(plain) is plain
