"""Deterministic prompts for the tiny stories models: words that the model's vocabulary holds as
one token each (checked with the server's /tokenize), so that a prompt of N words is N tokens and
prompts that share their first words share exactly that many tokens."""
import random

# Words of children's stories that the tiny models' 512-token vocabulary holds as one token
# each (found with /detokenize and /tokenize on stories260K); any that is not one token in the
# model at hand is dropped at run time.
WORDS = """the to and he was The her it Lily On in day be with said play She They his He up that
on mom she you they big of friend little time had we there so One for want happy saw named but
very do Once Timmy upon""".split()


class Vocab:
    """The words of WORDS that are one token each, in a fixed order."""

    def __init__(self, server):
        self.words = []
        for w in dict.fromkeys(WORDS):
            if len(server.tokenize(w)) == 1:
                self.words.append(w)
        if len(self.words) < 30:
            raise RuntimeError("only %d one-token words in this vocabulary" % len(self.words))

    def text(self, n_words, rng):
        return " ".join(rng.choice(self.words) for _ in range(n_words))


def shared_prefix_prompts(vocab, n_prompts, shared_fraction=(0.40, 0.45), lengths=(300, 480),
                          seed=7):
    """n_prompts texts whose token counts lie in `lengths` and which all start with the same
    system prompt of shared_fraction of their tokens. Returns (system_words, [n_words...],
    [text...])."""
    rng = random.Random(seed)
    lo, hi = lengths
    # The system prompt's length S must satisfy S/T in shared_fraction for every prompt length
    # T: T in [S/0.45, S/0.40], clipped to `lengths`.
    s = int(min(hi * shared_fraction[0], (lo + hi) / 2 * (shared_fraction[0] + shared_fraction[1]) / 2))
    t_lo = max(lo, int(s / shared_fraction[1]) + 1)
    t_hi = min(hi, int(s / shared_fraction[0]))
    system = vocab.text(s, rng)
    lengths_out, texts, starts = [], [], set()
    for i in range(n_prompts):
        t = t_lo + (i * 37) % (t_hi - t_lo + 1)
        lengths_out.append(t)
        texts.append(system + " " + distinct_start(vocab, t - s, rng, starts))
    return s, lengths_out, texts


def distinct_start(vocab, n_words, rng, starts):
    """n_words words whose first word differs from that of every earlier prompt (once the
    vocabulary's words are used up: whose first two words differ). Prompts then share exactly
    the system prompt: one chance word in common beyond it is enough for the cache to restore
    another prompt's entry (the slot's f_keep and f_sim are both beaten by one token)."""
    while True:
        text = vocab.text(n_words, rng)
        words = text.split()
        key = words[0] if len(starts) < len(vocab.words) else tuple(words[:2])
        if key not in starts:
            starts.add(key)
            return text


def independent_prompts(vocab, n_prompts, lengths=(300, 480), seed=11):
    """n_prompts texts of lengths in `lengths` with nothing in common but their first token."""
    rng = random.Random(seed)
    lo, hi = lengths
    out, starts = [], set()
    for i in range(n_prompts):
        t = lo + (i * 53) % (hi - lo + 1)
        out.append(distinct_start(vocab, t, rng, starts))
    return out


def check_lengths(server, texts, expected):
    """The prompts tokenize to the counts they were built for (one token per word)."""
    for text, n in zip(texts, expected):
        got = len(server.tokenize(text))
        if got != n:
            raise RuntimeError("prompt of %d words is %d tokens" % (n, got))
