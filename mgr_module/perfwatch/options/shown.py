"""A value as it is safe to show in a message about an option."""


def shown(value: str) -> str:
    """The given value as it is safe to show in a message: quoted, control characters escaped, bounded."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
