"""The one error type a user sees: a message naming the cause and the fix, printed without a traceback."""


class UserError(Exception):
    """A failure caused by input or environment; `str()` is the whole message shown to the user."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class MatrixError(UserError):
    """One or more problems in matrix.yaml; each line names the entry, the problem and the valid choices."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))
