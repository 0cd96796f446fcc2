"""The everyday words for what the frame tagger names finely: people ask "when did I see a motorbike?"
of what was tagged 'moped' or 'motor scooter', "a cat" of 'Egyptian Mau', "a dog" of 'Chihuahua'.

The tagger's 1,000 ImageNet classes are breeds, makes and models; a question names the kind. Each group
below is the words that name one kind of thing for asking, the general words first, then the tagger's
labels of that kind (whole labels, or label words that only that kind's labels hold, like 'terrier').
Words that are also names or other things ('Robin', 'Jay', a 'coach', a 'cycle' of washing) are left out.
Any member of a group matches any other (`same_kind`), so a transcript's "motorbike" also meets a
question's "scooter". Only kinds a wearer meets and asks about are listed: a missing group costs a
match, a wrong one a false match the model then has to see through.
"""

from __future__ import annotations

import functools

GROUPS: tuple[tuple[str, ...], ...] = (
    ("cat", "kitten", "kitty", "tabby", "tabby cat", "a cat having a striped coat", "persian cat", "siamese cat", "egyptian mau"),
    (
        "dog",
        "puppy",
        "chihuahua",
        "terrier",
        "retriever",
        "spaniel",
        "hound",
        "poodle",
        "setter",
        "collie",
        "schnauzer",
        "sheepdog",
        "mastiff",
        "bulldog",
        "pinscher",
        "corgi",
        "husky",
        "malamute",
        "dalmatian",
        "pug",
        "beagle",
        "pomeranian",
        "labrador",
    ),
    ("motorbike", "motorcycle", "scooter", "moped", "motor scooter"),
    ("bicycle", "bike", "tandem bicycle", "mountain bike", "tricycle"),
    ("car", "taxi", "cab", "station wagon", "taxicab", "convertible", "jeep", "limousine", "minivan", "sports car", "race car"),
    ("bus", "minibus", "school bus", "trolleybus"),
    ("truck", "lorry", "fire truck", "garbage truck", "pickup truck", "tow truck", "semi-trailer truck"),
    (
        "boat",
        "ship",
        "catamaran",
        "container ship",
        "fireboat",
        "gondola",
        "lifeboat",
        "ocean liner",
        "schooner",
        "motorboat",
        "yawl",
    ),
    ("train", "high-speed train", "electric locomotive", "railroad car", "steam locomotive", "tram", "streetcar"),
    ("plane", "aeroplane", "airplane", "aircraft", "airliner"),
    ("phone", "telephone", "smartphone", "mobile phone", "rotary dial telephone", "payphone"),
    ("computer", "laptop", "desktop computer", "laptop computer", "notebook computer", "hand-held computer"),
    ("cup", "mug", "coffee mug", "tea cup", "measuring cup"),
    ("coffee", "espresso", "cappuccino", "latte", "flat white"),
    ("bird", "rooster", "hen", "goldfinch", "house finch", "american robin", "magpie", "parrot", "macaw", "goose", "duck"),
)


@functools.cache
def _members() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for group in GROUPS:
        for word in group:
            out.setdefault(word, set()).update(group)
    return {word: frozenset(kinds) for word, kinds in out.items()}


def same_kind(word: str) -> frozenset[str]:
    """The words and labels naming the same kind of thing as `word` (lower case; itself included when
    it names one), empty when no group holds it."""
    return _members().get(word.lower(), frozenset())
