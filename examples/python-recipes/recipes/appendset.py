"""A set of short strings kept in one memcached value, changed with `append`.

Each change is a token appended to the index: `+a ` adds `a`, `-a ` removes it, and
reading replays the tokens in order. When the index does not exist yet, `append` is not
stored and an addition creates it with `add`; if another client created it in between,
that `add` fails too. Written as its source shows it (`retry=False`), the change is then
lost without a word; with `retry=True` the whole change is tried again, as the source's
text says it must be. A read that finds more removals than `threshold` writes the
compacted form back with `cas`, which fails (and loses nothing) if the index changed
since the read.
"""


class AppendSet:
    def __init__(self, client, name: str, retry: bool, threshold: int = 1):
        self.client, self.key = client, f"set_{name}"
        self.retry, self.threshold = retry, threshold

    @staticmethod
    def _token(op: str, member: str) -> str:
        # A space ends a token and a leading sign is an operation: such members would
        # decode as something else.
        if not member or " " in member or member[0] in "+-":
            raise ValueError(f"member {member!r} cannot be encoded")
        return f"{op}{member} "

    def _modify(self, op: str, member: str) -> None:
        token = self._token(op, member)
        while True:
            if self.client.append(self.key, token, noreply=False):
                return
            if op == "-":
                return  # no index: nothing to remove
            if self.client.add(self.key, token, noreply=False):
                return
            if not self.retry:
                return  # another client created the index first: this change is lost

    def add(self, member: str) -> None:
        self._modify("+", member)

    def remove(self, member: str) -> None:
        self._modify("-", member)

    def items(self) -> set[str]:
        value, cas = self.client.gets(self.key)
        if value is None:
            return set()
        members, removals = decode(value.decode())
        if removals > self.threshold:
            compact = "".join(f"+{m} " for m in sorted(members))
            # Fire and forget: a failed cas leaves the longer form, which means the same.
            self.client.cas(self.key, compact, cas, noreply=False)
        return members


def decode(text: str) -> tuple[set[str], int]:
    """The members an index holds, and how many removals it records."""
    members, removals = set(), 0
    for token in text.split():
        if token.startswith("+"):
            members.add(token[1:])
        elif token.startswith("-"):
            members.discard(token[1:])
            removals += 1
    return members, removals
