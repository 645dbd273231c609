"""The one error type a user sees: a message naming the cause and the fix, printed without a traceback."""


def one_line(text: object) -> str:
    """`text` as one printable line: a newline, a control or line-separator character (from a variable a user set,
    e.g. IMAGE) is escaped, so an error message stays the one line it promises. The host's twin of verify's."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


class UserError(Exception):
    """A failure caused by input or environment; `str()` is the whole message shown to the user.

    One line (control characters escaped when shown), unless `multiline`: a message that carries a log's tail."""

    def __init__(self, message: str, exit_code: int = 2, *, multiline: bool = False) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.multiline = multiline

    def shown(self) -> str:
        """The message as printed: one line, or (multiline) each line with its control characters escaped."""
        text = str(self)
        return "\n".join(one_line(line) for line in text.split("\n")) if self.multiline else one_line(text)


class MatrixError(UserError):
    """One or more problems in matrix.yaml; each line names the entry, the problem and the valid choices."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))
